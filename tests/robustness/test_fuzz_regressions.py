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


def test_gg101_a_second_loop_appending_to_the_same_dict_of_lists_is_a_store_too():
    # `outs[k].append(loss)` made `outs` a dict of the losses themselves, so the second loop's
    # `outs[k]` looked like a tensor and its append went unseen; fix-all then revealed it.
    source = textwrap.dedent(
        """\
        import torch


        def train(model, loader, opt, crit):
            outs = {}
            for k, (x, y) in enumerate(loader):
                loss = crit(model(x), y)
                loss.backward()
                outs[k].append(loss)
            for k, (x, y) in enumerate(loader):
                loss = crit(model(x), y)
                loss.backward()
                outs[k].append(loss)
            return outs
        """
    )
    findings = analyze(source).findings
    assert [(f.code, f.range.start.line, f.range.start.column, f.range.end.column) for f in findings] == [
        ("GG101", 9, 23, 27), ("GG101", 13, 23, 27),
    ]
    fixed = apply_edits(source, [e for f in findings for e in f.fixes[0].edits])
    assert fixed == source.replace("outs[k].append(loss)", "outs[k].append(loss.detach())")
    assert analyze(fixed).findings == []


def test_gg203_reads_a_negated_operand_of_an_in_place_update():
    # `policy_loss += w * -log_prob` after a backward in the function: GG203 looks for
    # `x.grad` among the update's operands, and crashed on the unary minus (MrSyee's A2C).
    source = textwrap.dedent(
        """\
        import torch


        def update(critic, optimizer, log_prob, pred_value, target, entropy_weight=0.01):
            value_loss = (pred_value - target).pow(2).mean()
            value_loss.backward()
            advantage = (target - pred_value).detach()
            policy_loss = -advantage * log_prob
            policy_loss += entropy_weight * -log_prob
            policy_loss.backward()
            optimizer.step()
        """
    )
    result = analyze(source)
    assert result.error is None and result.internal_errors == [] and result.findings == []


def test_gg101_fix_in_a_forward_that_returns_nothing_adds_no_gg301():
    # A mutation deleted `return out`: GG101's `.detach()` fix then read as "cuts `self.fc` from
    # every output of forward()" - but a forward returning nothing reaches no output anyway.
    source = textwrap.dedent(
        """\
        import torch
        from torch import nn


        class CachedBlock(nn.Module):
            saved = [None] * 4

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.step = 0

            def forward(self, x):
                out = torch.relu(self.fc(x))
                CachedBlock.saved[self.step % 4] = out
                self.step += 1

            def replay(self, i):
                return CachedBlock.saved[i].detach()
        """
    )
    (finding,) = analyze(source).findings
    assert finding.code == "GG101"
    fixed = apply_edits(source, finding.fixes[0].edits)
    assert fixed == source.replace("= out\n", "= out.detach()\n")
    assert analyze(fixed).findings == []
