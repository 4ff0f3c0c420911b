"""bench/realscripts.py on a tiny checkout written here: the per-repository line, precision from
the judged file, unjudged findings listed, missed bugs listed. No network: no --checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "realscripts.py"

TRAIN = """import torch

net = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
history = []
for x in [torch.randn(3, 2)] * 2:
    loss = net(x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss)
    print(loss.data[0])
"""

PINS = """
[[repo]]
name = "someone+demo"
url = "https://example.invalid/demo"
commit = "0000000000000000000000000000000000000000"

[[repo]]
name = "someone+absent"
url = "https://example.invalid/absent"
commit = "0000000000000000000000000000000000000000"
"""

JUDGED = """
[[finding]]
repo = "someone+demo"
where = "train.py:11"
code = "GG101"
verdict = "TP"
reason = "the FAQ case"

[[missed]]
repo = "someone+demo"
where = "train.py:eval"
code = "GG103"
reason = "found by hand"
"""


def test_report_of_a_small_checkout(tmp_path):
    repo = tmp_path / "checkouts" / "someone+demo"
    repo.mkdir(parents=True)
    (repo / "train.py").write_text(TRAIN)
    (tmp_path / "pins.toml").write_text(PINS)
    (tmp_path / "judged.toml").write_text(JUDGED)
    run = subprocess.run(
        [sys.executable, str(BENCH), str(tmp_path / "checkouts"), "--pins", str(tmp_path / "pins.toml"),
         "--judged", str(tmp_path / "judged.toml")],
        capture_output=True, text=True, check=True,
    )
    assert run.stdout.splitlines() == [
        "repository                                    files   lines  error warning info",
        "someone+demo                                      1      12      1       1    0",
        "",
        "rule     TP   FP  precision",
        "GG101     1    0  100.0%",
        "all       1    0  100.0%",
        "",
        "unjudged errors and warnings: 1",
        '  someone+demo/train.py:12: GG202 `loss` is a 0-dim tensor: `.data[0]` on it raises IndexError ("invalid index '
        'of a 0-dim tensor") on every torch since 0.5; use `.item()`',
        "",
        "real bugs found by hand and not reported: 1",
        "  someone+demo/train.py:eval: GG103 found by hand",
    ]


def test_nothing_checked_out_is_status_2(tmp_path):
    (tmp_path / "pins.toml").write_text(PINS)
    run = subprocess.run([sys.executable, str(BENCH), str(tmp_path), "--pins", str(tmp_path / "pins.toml")],
                         capture_output=True, text=True)
    assert run.returncode == 2
