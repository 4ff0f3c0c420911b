"""`gradguard check --types` through the real entry point: the same refinement as the server."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKSPACE = Path(__file__).parent / "workspace"
LEAK = (
    "train.py:11:24: error: GG101 `out` carries an autograd graph (from `model(x)` on line 10) that is never "
    "back-propagated; storing it in `outputs` keeps every saved activation alive across iterations"
)
LOOKALIKE = (
    "lookalikes.py:18:9: warning: GG201 `mine` shares storage with `checkout` (from `checkout.detach()` on line 17): "
    "`.add_()` on `mine` silently changes `checkout` too, which is used again on line 19"
)


@pytest.fixture
def workspace(tmp_path):
    copy = tmp_path / "ws"
    shutil.copytree(WORKSPACE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def gradguard(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gradguard", "check", "--no-cache", "-j", "1", *args],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )


def test_types_find_the_leak_and_drop_the_look_alike(workspace):
    plain = gradguard(workspace, ".")
    assert plain.stdout.splitlines() == [LOOKALIKE, "Found 1 finding (1 fixable with --fix). 4 files checked."]
    typed = gradguard(workspace, "--types", ".")
    assert typed.stdout.splitlines() == [LEAK, "Found 1 finding (1 fixable with --fix). 4 files checked."]
    assert (plain.returncode, typed.returncode) == (1, 1)


def test_types_from_the_project_configuration(workspace):
    (workspace / "pyproject.toml").write_text("[tool.gradguard]\ntypes = true\n")
    assert gradguard(workspace, "train.py").stdout.splitlines()[0] == LEAK
    assert gradguard(workspace, "--no-types", "train.py").stdout.splitlines() == ["All checks passed! 1 file checked."]
