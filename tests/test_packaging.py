"""GradGuard installed as a user installs it, from this checkout's current files.

`python -m build` makes the sdist and, from it, the wheel (so the sdist is complete);
`twine check --strict` passes both. The wheel goes into a fresh venv, the checkout into
pipx, and pre-commit runs the hook with `try-repo`: each time with the dependencies from
the package index (pinned by constraints.txt), and each time `gradguard --version` and
`gradguard check` on examples/*_leaky.py must answer as the checkout does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gradguard

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
LEAKY = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").glob("*_leaky.py"))
# What building the package reads from the checkout.
PACKAGE = ["pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", ".pre-commit-hooks.yaml", "server/gradguard"]
BIN = "Scripts" if os.name == "nt" else "bin"


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("timeout", 900)
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, stdin=subprocess.DEVNULL, **kwargs)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without this test run's Python (PYTHONPATH, an active venv) and with pip quiet."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_CONSTRAINT")
           and not k.startswith(("PRE_COMMIT", "GIT_", "PIPX_"))}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NO_COLOR": "1", **extra}


def copy_package(to: Path) -> Path:
    for name in PACKAGE:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, to / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)
    return to


@pytest.fixture(scope="module")
def expected() -> str:
    """What the checkout's own gradguard prints for examples/*_leaky.py."""
    proc = run(sys.executable, "-m", "gradguard", "check", "--no-cache", "--output-format", "concise", *LEAKY, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    return proc.stdout


def check_install(gradguard_exe: Path | str, expected: str, env: dict[str, str] | None = None) -> None:
    version = run(gradguard_exe, "--version", env=env)
    assert (version.stdout, version.returncode) == (f"gradguard {gradguard.__version__}\n", 0), version.stderr
    check = run(gradguard_exe, "check", "--no-cache", "--output-format", "concise", *LEAKY, cwd=ROOT, env=env)
    assert (check.stdout, check.returncode) == (expected, 1), check.stderr


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel, built from a copy of the checkout's package files."""
    source = copy_package(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("dist")
    proc = run(sys.executable, "-m", "build", "--outdir", out, source, env=clean_env(PIP_CONSTRAINT=str(CONSTRAINTS)))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def test_build_makes_a_wheel_and_an_sdist_named_for_the_version(dist):
    assert dist["wheel"].name == f"gradguard-{gradguard.__version__}-py3-none-any.whl"
    assert dist["sdist"].name == f"gradguard-{gradguard.__version__}.tar.gz"


def test_twine_check_passes(dist):
    proc = run(sys.executable, "-m", "twine", "check", "--strict", dist["sdist"], dist["wheel"], env=clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_wheel_carries_the_server_and_the_type_layers_stubs(dist):
    import zipfile

    names = set(zipfile.ZipFile(dist["wheel"]).namelist())
    assert {"gradguard/cli.py", "gradguard/lsp/server.py", "gradguard/typelayer/stubs/torch-stubs/__init__.pyi"} <= names
    entry_points = zipfile.ZipFile(dist["wheel"]).read(f"gradguard-{gradguard.__version__}.dist-info/entry_points.txt")
    assert "gradguard = gradguard.cli:main" in entry_points.decode()


def test_the_wheel_installs_into_a_fresh_venv(dist, expected, tmp_path):
    venv = tmp_path / "venv"
    made = run(sys.executable, "-m", "venv", venv)
    assert made.returncode == 0, made.stderr
    pip = run(venv / BIN / "python", "-m", "pip", "install", "-q", "-c", CONSTRAINTS, dist["wheel"], env=clean_env())
    assert pip.returncode == 0, pip.stdout + pip.stderr
    check_install(venv / BIN / "gradguard", expected, env=clean_env())
    # the language server is in the wheel too: it starts and answers `initialize`
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    lsp = subprocess.run([str(venv / BIN / "gradguard"), "lsp"], input=f"Content-Length: {len(request)}\r\n\r\n{request}",
                         capture_output=True, text=True, timeout=60, env=clean_env())
    assert '"textDocumentSync"' in lsp.stdout, lsp.stdout + lsp.stderr


def test_pipx_installs_the_checkout(expected, tmp_path):
    home, bin_dir = tmp_path / "pipx-home", tmp_path / "pipx-bin"
    env = clean_env(PIPX_HOME=str(home), PIPX_BIN_DIR=str(bin_dir), PIPX_MAN_DIR=str(tmp_path / "pipx-man"),
                    PIP_CONSTRAINT=str(CONSTRAINTS))
    source = copy_package(tmp_path / "checkout")
    proc = run(sys.executable, "-m", "pipx", "install", source, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"installed package gradguard {gradguard.__version__}" in proc.stdout, proc.stdout
    check_install(bin_dir / "gradguard", expected, env=env)


def git(cwd: Path, *args: str) -> str:
    env = clean_env(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
                    GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    proc = run("git", *args, cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_pre_commit_try_repo_runs_the_hook(expected, tmp_path):
    """`pre-commit try-repo <checkout> gradguard --files ...`, the checkout being a git
    repository whose last commit holds the current files (try-repo reads committed hooks)."""
    hook_repo = copy_package(tmp_path / "hook-repo")
    git(hook_repo, "init", "-q")
    git(hook_repo, "add", ".")
    git(hook_repo, "commit", "-q", "-m", "the checkout under test")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    for name in [*LEAKY, "examples/gradguard.toml"]:  # the configuration selects GG501 (info)
        shutil.copy2(ROOT / name, project / Path(name).name)
    git(project, "add", ".")
    env = clean_env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PIP_CONSTRAINT=str(CONSTRAINTS))
    files = [Path(name).name for name in LEAKY]
    proc = run(sys.executable, "-m", "pre_commit", "try-repo", "--color", "never", hook_repo, "gradguard",
               "--files", *files, cwd=project, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^gradguard\.+Failed$", proc.stdout, re.M), proc.stdout
    # the hook's report is the checkout's, file names as pre-commit passes them
    reported = [line for line in proc.stdout.splitlines() if re.match(r"\S+\.py:\d+:\d+: GG\d{3} ", line)]
    assert reported == [line.replace("examples/", "") for line in expected.splitlines() if " GG" in line]
    assert "- hook id: gradguard" in proc.stdout


def test_the_extension_and_the_package_share_one_version():
    """One version, tagged `v<version>` when released (README: Install)."""
    manifest = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    assert manifest["version"] == gradguard.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", gradguard.__version__)


def test_the_readme_installs_the_current_version():
    """The README's git URLs (`@vX.Y.Z`), wheel names and pre-commit `rev:` name this version."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tags = re.findall(r"@v(\d+\.\d+\.\d+)", readme) + re.findall(r"rev: v(\d+\.\d+\.\d+)", readme)
    wheels = re.findall(r"gradguard-(\d+\.\d+\.\d+)-py3-none-any\.whl", readme)
    assert len(tags) >= 4 and wheels, (tags, wheels)
    assert set(tags + wheels) == {gradguard.__version__}
