"""Neovim 0.7 (Debian's `neovim`) as a second real client: diagnostics, hover,
a code action applied to the buffer, all through Neovim's own LSP client."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

NVIM = shutil.which("nvim")
SCRIPT = Path(__file__).with_name("test.lua")

TRAIN = textwrap.dedent(
    """\
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
    val_losses = []
    model.eval()
    for x, y in loader:
        loss = criterion(model(x), y)
        val_losses.append(loss)
    train_losses = []
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        print("训练😀", train_losses.append(loss))
    feat = model(torch.ones(1, 4))
    s = "训练😀"; frozen = feat.detach()
    """
)


@pytest.mark.skipif(NVIM is None, reason="nvim is not on PATH (apt-get install neovim)")
def test_neovim_diagnostics_hover_and_code_action(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    out = tmp_path / "fixed.py"
    env = {**os.environ, "GRADGUARD_PYTHON": sys.executable, "GRADGUARD_OUT": str(out)}
    proc = subprocess.run(
        [NVIM, "--headless", "--clean", "-c", f"luafile {SCRIPT}", "train.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    report = proc.stdout.splitlines()
    assert proc.returncode == 0, f"nvim exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert report == [
        "diagnostics: 2",
        "source: gradguard",
        "code: GG101",
        "squiggled: loss",
        "hover: **`Tensor.detach()`**: the **same storage** as `x`, out of the graph: `requires_grad=False`, "
        "`grad_fn=None`, `is_leaf=True`; the version counter is shared. An in-place write through it changes `x`. "
        "If `x` was saved for backward before the write, `backward()` raises \"one of the variables needed for "
        "gradient computation has been modified by an inplace operation\"; if the write comes before the op that "
        "saves `x`, there is no error at all and results and gradients are silently wrong.",
        "hover state: **Here:** `feat` carries an autograd graph: from `model(torch.ones(1, 4))` on line 20",
        "hover marked: x.detach()",
        "action: Store `loss.detach()`",
        "action: Store `loss.detach().item()` (unsafe)",
        "action: Ignore GG101 on this line",
        "after fix: 1",
        "done: ok",
    ]
    assert out.read_text(encoding="utf-8") == TRAIN.replace(
        'print("训练😀", train_losses.append(loss))', 'print("训练😀", train_losses.append(loss.detach()))'
    )
