"""Bugs the fuzzer found, each pinned with its smallest program."""

from __future__ import annotations

import textwrap

from gradguard.engine import analyze
from gradguard.engine.fixes import apply_edits


def test_gg103_wraps_the_call_statement_not_the_callees_last_statement():
    # The call ran the module's forward() first; the fix used to wrap `return h` inside it.
    source = textwrap.dedent(
        """\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)

            def forward(self, x):
                h = self.fc(x)
                return h


        net = Net()
        net.eval()
        out = net(torch.randn(2, 3))
        """
    )
    (finding,) = analyze(source).findings
    assert (finding.code, finding.range.start.line) == ("GG103", 17)
    fixed = apply_edits(source, finding.fixes[0].edits)
    assert fixed == source.replace(
        "out = net(torch.randn(2, 3))\n", "with torch.no_grad():\n    out = net(torch.randn(2, 3))\n"
    )
    assert analyze(fixed).findings == []
