"""Emacs as a third real LSP client, configured exactly as docs/editors.md says: the page's
eglot block is the init file of a batch Emacs, which must then show GradGuard's diagnostics
through flymake, list the quick fixes and apply the documented fix-all through eglot, with
`gradguard lsp --stdio` found on PATH.

Emacs comes from Debian (`emacs-nox`, and `elpa-eglot` before Emacs 29), installed by
`bash scripts/test.sh` as root; without it the test is skipped, saying so."""

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
SCRIPT = Path(__file__).with_name("test.el")
BIN = Path(sys.executable).parent  # the venv's bin: gradguard
# the Neovim test's file: two GG101 findings, the second on a line with Chinese text and an emoji
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
APT = "apt-get install -y --no-install-recommends emacs-nox elpa-eglot"


def find_emacs() -> tuple[str | None, str]:
    """(the emacs to run, why not)."""
    emacs = shutil.which("emacs")
    if emacs is None:
        return None, f"Emacs is not installed: as root, `{APT}`"
    probe = subprocess.run([emacs, "--batch", "--eval", '(princ (if (locate-library "eglot") "eglot" "none"))'],
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if probe.stdout != "eglot":
        return None, f"{emacs} has no eglot (Emacs 29+ has it built in): as root, `{APT}`"
    return emacs, ""


EMACS, WHY_NOT = find_emacs()


def documented_config() -> str:
    """The ```elisp block of docs/editors.md."""
    (block,) = re.findall(r"^```elisp\n(.*?)^```$", EDITORS.read_text(encoding="utf-8"), re.S | re.M)
    return block


@pytest.mark.skipif(EMACS is None, reason=WHY_NOT)
def test_emacs_eglot_diagnostics_quick_fixes_and_fix_all(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "gradguard.toml").write_text('select = ["GG101"]\n', encoding="utf-8")
    (tmp_path / "init.el").write_text(documented_config(), encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        [EMACS, "--batch", "-l", "init.el", "-l", str(SCRIPT)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"emacs exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.stdout.splitlines() == [
        "server: gradguard lsp --stdio",
        "diagnostic: eglot-error GG101 on `loss'",
        "diagnostic: eglot-warning GG101 on `loss'",
        "action: Store `loss.detach()`",
        "action: Store `loss.detach().item()` (unsafe)",
        "action: Ignore GG101 on this line",
        "after fix-all: 0",
        "detached: 2",
        "done: ok",
    ]
    fixed = (tmp_path / "train.py").read_text(encoding="utf-8")
    assert fixed == TRAIN.replace("append(loss)", "append(loss.detach())")
