"""GradGuard installed as a user installs it, from this checkout's current files.

`python -m build` makes the sdist and, from it, the wheel (so the sdist is complete);
`twine check --strict` passes both. The wheel goes into a fresh venv; each install line of
the README runs as written in a git copy of the checkout (released as docs/releasing.md
says: committed on `main`, tagged `v<version>`); pre-commit runs the hook with `try-repo`
at the README snippet's `rev:`. Each time the dependencies come from the package index
(pinned by constraints.txt), and each time `gradguard --version` and `gradguard check` on
examples/*_leaky.py must answer as the checkout does.
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
README = (ROOT / "README.md").read_text(encoding="utf-8")
TAG = f"v{gradguard.__version__}"
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


def git(cwd: Path, *args: str) -> str:
    env = clean_env(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
                    GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    proc = run("git", *args, cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def released_clone(to: Path) -> Path:
    """A git repository of the package files, committed on `main` and tagged as a release is
    (docs/releasing.md: `git tag -a vX.Y.Z -m ...`)."""
    copy_package(to)
    git(to, "init", "-q", "-b", "main")
    git(to, "add", ".")
    git(to, "commit", "-q", "-m", "the checkout under test")
    git(to, "tag", "-a", TAG, "-m", f"gradguard {gradguard.__version__}")
    return to


def readme_block(section: str, language: str) -> str:
    text = README.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(rf"^```{language}\n(.*?)^```$", text, re.S | re.M)
    return block


INSTALL_LINES = [line for line in readme_block("Install", "sh").splitlines() if line.strip()]


@pytest.mark.parametrize("line", INSTALL_LINES, ids=[line.split("#")[0].strip() for line in INSTALL_LINES])
def test_each_install_line_of_the_readme_works_as_written_in_a_clone(line, expected, tmp_path):
    """Pasted into bash in a clone: with pipx (its own home), or into the active environment
    (a fresh venv first on PATH); either way a `gradguard` that answers as the checkout does."""
    clone = released_clone(tmp_path / "clone")
    venv = tmp_path / "project-venv"
    assert run(sys.executable, "-m", "venv", venv).returncode == 0
    pipx_bin = tmp_path / "pipx-bin"
    tools = Path(sys.executable).parent  # where pipx is, as a user's PATH has it
    env = clean_env(PIPX_HOME=str(tmp_path / "pipx-home"), PIPX_BIN_DIR=str(pipx_bin),
                    PIPX_MAN_DIR=str(tmp_path / "pipx-man"), PIP_CONSTRAINT=str(CONSTRAINTS),
                    PATH=os.pathsep.join([str(venv / BIN), str(tools), os.environ["PATH"]]))
    proc = run("bash", "-c", line, cwd=clone, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    installed = [exe for exe in (pipx_bin / "gradguard", venv / BIN / "gradguard") if exe.exists()]
    assert len(installed) == 1, installed
    check_install(installed[0], expected, env=clean_env())


def test_a_git_url_installs_the_release_tag(expected, tmp_path):
    """The README's git URL line at the tag docs/releasing.md creates, instead of a branch."""
    (line,) = [line for line in INSTALL_LINES if "git+file://$PWD@main" in line]
    clone = released_clone(tmp_path / "clone")
    git(clone, "checkout", "-q", "-b", "work")
    (clone / "README.md").write_text("changed after the release\n")
    git(clone, "commit", "-q", "-am", "after the release")
    env = clean_env(PIPX_HOME=str(tmp_path / "pipx-home"), PIPX_BIN_DIR=str(tmp_path / "pipx-bin"),
                    PIPX_MAN_DIR=str(tmp_path / "pipx-man"), PIP_CONSTRAINT=str(CONSTRAINTS),
                    PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    proc = run("bash", "-c", line.replace("@main", f"@{TAG}"), cwd=clone, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    check_install(tmp_path / "pipx-bin" / "gradguard", expected, env=clean_env())


def test_pre_commit_try_repo_runs_the_readmes_snippet(expected, tmp_path):
    """The README's `.pre-commit-config.yaml`, its `repo:` a released copy of the checkout:
    pre-commit accepts it, and `pre-commit try-repo <clone> gradguard --ref <its rev>` runs the
    hook at that rev (a tag that docs/releasing.md's steps create)."""
    hook_repo = released_clone(tmp_path / "hook-repo")
    git(hook_repo, "checkout", "-q", "-b", "work")  # later commits: the rev, not the branch, is run
    (hook_repo / ".pre-commit-hooks.yaml").write_text("[]\n")
    git(hook_repo, "commit", "-q", "-am", "after the release")
    snippet = readme_block("Command line", "yaml")
    rev = re.search(r"^  rev: (\S+)", snippet, re.M).group(1)
    assert rev == TAG
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    for name in [*LEAKY, "examples/gradguard.toml"]:  # the configuration selects GG501 (info)
        shutil.copy2(ROOT / name, project / Path(name).name)
    (project / ".pre-commit-config.yaml").write_text(re.sub(r"^- repo: \S+", f"- repo: {hook_repo}", snippet, flags=re.M))
    git(project, "add", ".")
    env = clean_env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PIP_CONSTRAINT=str(CONSTRAINTS))
    valid = run(sys.executable, "-m", "pre_commit", "validate-config", ".pre-commit-config.yaml", cwd=project, env=env)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    files = [Path(name).name for name in LEAKY]
    proc = run(sys.executable, "-m", "pre_commit", "try-repo", "--color", "never", hook_repo, "gradguard",
               "--ref", rev, "--files", *files, cwd=project, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^gradguard\.+Failed$", proc.stdout, re.M), proc.stdout
    # the hook's report is the checkout's, file names as pre-commit passes them
    reported = [line for line in proc.stdout.splitlines() if re.match(r"\S+\.py:\d+:\d+: \w+: GG\d{3} ", line)]
    assert reported == [line.replace("examples/", "") for line in expected.splitlines() if " GG" in line]
    assert "- hook id: gradguard" in proc.stdout


def test_the_extension_and_the_package_share_one_version():
    """One version, tagged `v<version>` when released (README: Install)."""
    manifest = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    assert manifest["version"] == gradguard.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", gradguard.__version__)


def test_the_readme_installs_the_current_version():
    """The README's wheel name and pre-commit `rev:` name this version; the lock file agrees."""
    tags = re.findall(r"rev: v(\d+\.\d+\.\d+)", README)
    wheels = re.findall(r"gradguard-(\d+\.\d+\.\d+)-py3-none-any\.whl", README)
    assert tags and wheels, (tags, wheels)
    assert set(tags + wheels) == {gradguard.__version__}
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["version"] == lock["packages"][""]["version"] == gradguard.__version__
