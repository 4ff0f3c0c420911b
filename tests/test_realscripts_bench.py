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


EVAL = """import torch

net = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(2):
    loss = net(torch.randn(3, 2)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
net.eval()
out = net(torch.randn(3, 2))
print(out.sum().item())
"""

FIX_PINS = """
[[repo]]
name = "someone+demo"
url = "https://example.invalid/demo"
commit = "0000000000000000000000000000000000000000"
run = ["scripts/eval.py"]
"""


def test_fix_run_on_a_copy(tmp_path):
    repo = tmp_path / "checkouts" / "someone+demo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "eval.py").write_text(EVAL)
    (repo / "clean.py").write_text("x = 1\n")
    (tmp_path / "pins.toml").write_text(FIX_PINS)
    run = subprocess.run(
        [sys.executable, str(BENCH), str(tmp_path / "checkouts"), "--pins", str(tmp_path / "pins.toml"),
         "--fix-run", str(tmp_path / "scratch")],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "someone+demo: 1 files changed by --fix",
        "  scripts/eval.py: 3 lines changed, parses",
        "  run scripts/eval.py: ran before and after",
        "",
        "files changed: 1; broken: 0",
    ]
    assert (repo / "scripts" / "eval.py").read_text() == EVAL  # the checkout itself is left alone
    assert "with torch.no_grad():" in (tmp_path / "scratch" / "someone+demo" / "scripts" / "eval.py").read_text()


def test_fix_run_reports_a_script_that_breaks(tmp_path, monkeypatch):
    sys.path.insert(0, str(BENCH.parent))
    try:
        import realscripts
    finally:
        sys.path.remove(str(BENCH.parent))
    repo = tmp_path / "checkouts" / "someone+demo"
    repo.mkdir(parents=True)
    (repo / "run.py").write_text("print('ok')\n")
    # stand-in for a fix that breaks the program: the copy's script raises after --fix
    real_run = subprocess.run

    def fake_run(cmd, *a, **kw):
        result = real_run(cmd, *a, **kw)
        if "--fix" in cmd:
            (Path(kw["cwd"]) / "run.py").write_text("import torch\ntorch.zeros(1).backward(\n")
        return result

    monkeypatch.setattr(realscripts.subprocess, "run", fake_run)
    pins = [{"name": "someone+demo", "run": ["run.py"]}]
    import io
    out = io.StringIO()
    result = realscripts.fix_run(tmp_path / "checkouts", tmp_path / "scratch", pins, out)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["someone+demo: 1 files changed by --fix",
                         "  run.py: 3 lines changed, SyntaxError: '(' was never closed (<unknown>, line 2)"]
    assert lines[2].startswith("  run run.py: broke: SyntaxError")
    assert lines[4] == "files changed: 1; broken: 2"
    assert len(result["broken"]) == 2


LABELS = """
[[missed]]
repo = "someone+demo"
where = "train.py:10"
code = "GG202"
span = 12
reason = "loss.data[0] on a 0-dim loss"

[[missed]]
repo = "someone+demo"
where = "train.py:3"
code = "GG103"
also = ["GG101"]
also_at = ["train.py:11"]
reason = "found at another place of the same bug, under an alternative code"

[[missed]]
repo = "someone+demo"
where = "train.py:5"
code = "GG103"
reason = "not reported"

[[missed]]
repo = "someone+absent"
where = "x.py:1"
code = "GG103"
reason = "a repository not checked out is not counted"
"""


def test_recall_against_hand_labels(tmp_path):
    repo = tmp_path / "checkouts" / "someone+demo"
    repo.mkdir(parents=True)
    (repo / "train.py").write_text(TRAIN)
    (tmp_path / "pins.toml").write_text(PINS)
    (tmp_path / "judged.toml").write_text(JUDGED)
    (tmp_path / "labels.toml").write_text(LABELS)
    run = subprocess.run(
        [sys.executable, str(BENCH), str(tmp_path / "checkouts"), "--pins", str(tmp_path / "pins.toml"),
         "--judged", str(tmp_path / "judged.toml"), "--labels", str(tmp_path / "labels.toml")],
        capture_output=True, text=True, check=True,
    )
    tail = run.stdout.split("real bugs found by hand and not reported: 1\n", 1)[1].splitlines()
    assert tail[1:] == [
        "",
        "rule   labels found  recall",
        "GG103       2     1  50.0%",
        "GG202       1     1  100.0%",
        "all         3     2  66.7%",
        "",
        "hand-labelled bugs not reported: 1",
        "  someone+demo/train.py:5: GG103 not reported",
    ]


def test_cells_parse_as_ipython_runs_them(tmp_path):
    sys.path.insert(0, str(BENCH.parent))
    try:
        import realscripts
    finally:
        sys.path.remove(str(BENCH.parent))
    import json
    cells = ['print("%d items"\n      % (3,))\n',                       # `%` starting a continuation line
             "if True:\n    %load_ext tensorboard\nelse:\n    !ls\n",     # magics as a block's only body
             "x = (1,\n"]                                                 # really broken
    for src, ok in zip(cells, (True, True, False)):
        nb = tmp_path / "nb.ipynb"
        nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": src}]}))
        assert (realscripts.parses(nb) is None) is ok, src


def test_checkout_from_a_local_copy_at_the_pinned_commit(tmp_path):
    sys.path.insert(0, str(BENCH.parent))
    try:
        import realscripts
    finally:
        sys.path.remove(str(BENCH.parent))
    work = tmp_path / "work"
    work.mkdir()
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "train.py").write_text("first = 1\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    pinned = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    (work / "train.py").write_text("second = 2\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    mirror = tmp_path / "mirror" / "someone+demo"
    mirror.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror / "repo")], check=True)
    pins = [{"name": "someone+demo", "url": "https://example.invalid/demo", "commit": pinned}]
    realscripts.checkout(pins, tmp_path / "checkouts", tmp_path / "mirror")
    assert (tmp_path / "checkouts" / "someone+demo" / "train.py").read_text() == "first = 1\n"
