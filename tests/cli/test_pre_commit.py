"""The pre-commit hooks, run by pre-commit itself (from PyPI) against temporary git
repositories, the hook repository being a commit of this checkout's current code.

pre-commit clones the hook repository at `rev` and pip-installs it into a fresh
environment (from PyPI, pinned by constraints.txt): that happens once per test
session, in a PRE_COMMIT_HOME shared by these tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What `pip install .` needs of the checkout (README.md: the package's long description).
PACKAGE = ["pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "server/gradguard"]
LEAK = """import torch

net = torch.nn.Linear(2, 1)
kept = []
for x in [torch.randn(3, 2)]:
    out = net(x).sum()
    kept.append(out)
"""
MESSAGE = (
    "a.py:7:17: error: GG101 `out` carries an autograd graph (from `net(x)` on line 6) that is never back-propagated; "
    "storing it in `kept` keeps every saved activation alive across iterations"
)


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="session")
def hooks(tmp_path_factory) -> dict:
    """A git repository holding the current code, and a pre-commit home with its hooks installed."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in PACKAGE:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "hooks under test")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "GIT_"))},
        "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home")),
        "PIP_CONSTRAINT": str(ROOT / "constraints.txt"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "NO_COLOR": "1",
    }
    return {"repo": repo, "rev": git(repo, "rev-parse", "HEAD").strip(), "env": env}


@pytest.fixture
def project(tmp_path, hooks):
    """A git repository whose .pre-commit-config.yaml uses both hooks; `run(*args)` runs pre-commit."""
    git(tmp_path, "init", "-q")
    (tmp_path / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hooks['repo']}\n  rev: {hooks['rev']}\n  hooks:\n  - id: gradguard\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess:
        git(tmp_path, "add", "-A")
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--color", "never", *args],
            cwd=tmp_path,
            env=hooks["env"],
            capture_output=True,
            text=True,
            timeout=900,
        )

    install = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install-hooks"], cwd=tmp_path, env=hooks["env"], capture_output=True, text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return run


def use_hook(root: Path, hooks: dict, hook: str) -> None:
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hooks['repo']}\n  rev: {hooks['rev']}\n  hooks:\n  - id: {hook}\n"
    )


def status_line(name: str, outcome: str, note: str = "") -> str:
    """pre-commit's `name....outcome` line, 79 columns wide."""
    return name + "." * (79 - len(name) - len(note) - len(outcome)) + note + outcome


def test_a_leak_fails_the_commit(project, tmp_path):
    (tmp_path / "a.py").write_text(LEAK)
    run = project("--all-files")
    assert run.returncode == 1
    assert run.stdout == (
        f"{status_line('gradguard', 'Failed')}\n"
        "- hook id: gradguard\n"
        "- exit code: 1\n"
        "\n"
        f"{MESSAGE}\n"
        "Found 1 finding (1 fixable with --fix). 1 file checked.\n"
        "\n"
    )


def test_clean_code_passes(project, tmp_path):
    (tmp_path / "a.py").write_text(LEAK.replace("kept.append(out)", "kept.append(out.detach())"))
    run = project("--all-files")
    assert (run.stdout, run.returncode) == (f"{status_line('gradguard', 'Passed')}\n", 0)


def test_zero_files_to_check_is_success(project, tmp_path):
    (tmp_path / "README.md").write_text("no Python here\n")
    run = project("--all-files")
    assert (run.stdout, run.returncode) == (f"{status_line('gradguard', 'Skipped', '(no files to check)')}\n", 0)


def test_excluded_files_are_excluded_for_pre_commit_too(project, tmp_path):
    (tmp_path / "gradguard.toml").write_text('extend-exclude = ["generated"]\n')
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "a.py").write_text(LEAK)
    run = project("--all-files")
    assert (run.stdout, run.returncode) == (f"{status_line('gradguard', 'Passed')}\n", 0)


def test_the_fix_hook_fixes_and_reports(project, tmp_path, hooks):
    use_hook(tmp_path, hooks, "gradguard-fix")
    (tmp_path / "a.py").write_text(LEAK)
    run = project("--all-files")
    assert run.returncode == 1  # pre-commit fails a hook that changed files, so the fix gets reviewed
    assert run.stdout == (
        f"{status_line('gradguard (fix)', 'Failed')}\n"
        "- hook id: gradguard-fix\n"
        "- files were modified by this hook\n"
        "\n"
        "Fixed 1 finding. 1 file checked.\n"
        "\n"
    )
    assert (tmp_path / "a.py").read_text() == LEAK.replace("kept.append(out)", "kept.append(out.detach())")
    again = project("--all-files")
    assert (again.stdout, again.returncode) == (f"{status_line('gradguard (fix)', 'Passed')}\n", 0)
