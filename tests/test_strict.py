"""`strict` widens what counts as a graph to the likely: the result of a call the
engine cannot see into, when it is given a graph. Off by default (precision first)."""

from gradguard.engine import analyze
from gradguard.settings import Settings

CODE = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
smooth = getattr(torch, "tanh")
scores = []
for x in [torch.randn(8, 4)]:
    score = smooth(model(x))
    scores.append(score)
    kept = smooth(x.detach())
    scores.append(kept)
"""


def test_strict_reports_the_likely_graph_and_default_does_not():
    assert analyze(CODE, Settings(select=("GG101",))).findings == []
    (finding,) = analyze(CODE, Settings(select=("GG101",), strict=True)).findings
    assert (finding.code, finding.range.start.line, finding.range.start.column) == ("GG101", 9, 18)
    assert "(from `smooth(model(x))`, which is given a graph, on line 8)" in finding.message
