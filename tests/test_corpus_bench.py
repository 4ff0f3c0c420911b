"""bench/corpus.py on a small corpus written here: a bug found, a bug missed, a look-alike
with a false positive, and the exact table it prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "corpus.py"

FOUND = '''# source: https://pytorch.org/docs/stable/notes/faq.html
# label: GG101 11
# effect: graph_kept
import torch


def train(model, loader, optimizer):
    total = 0
    for x in loader:
        loss = model(x).sum(); loss.backward()
        total += loss
    return total


def observe():
    return {"kept": []}
'''
MISSED = FOUND.replace("# label: GG101 11", "# label: GG101 10")
LOOKALIKE = '''# source: https://example.org/a-real-page
# label: lookalike GG101
# effect: graph_kept
import torch

net = torch.nn.Linear(2, 1)
kept = []
for x in [torch.randn(3, 2)]:
    kept.append(net(x))


def observe():
    return {"kept": []}
'''


def test_table_and_listing(tmp_path):
    (tmp_path / "GG101").mkdir()
    (tmp_path / "GG101" / "found.py").write_text(FOUND)
    (tmp_path / "GG101" / "missed.py").write_text(MISSED)
    (tmp_path / "GG101" / "lookalike.py").write_text(LOOKALIKE)
    run = subprocess.run([sys.executable, str(BENCH), "--root", str(tmp_path), "--verbose"],
                         capture_output=True, text=True, check=True)
    block = [
        "class    bugs  found  recall  look-alikes  false +",
        "GG101       2      1     50%            1        1",
        "all         2      1     50%            1        1",
        "  missed GG101/missed (GG101:10); reported: GG101:11",
        "  false positive GG101/lookalike: GG101:9",
        "",
    ]
    assert run.stdout.splitlines() == [
        "== default (3 programs)", *block, "== types (3 programs)", *block, "== strict (3 programs)", *block
    ]
