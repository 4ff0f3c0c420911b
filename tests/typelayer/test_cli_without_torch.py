"""`gradguard check --types` reading an interpreter that has no torch (the environment a
linter usually runs from: pipx, pre-commit, a CI job): GradGuard's bundled torch stubs
resolve `nn.Module`, so a model two modules away (a subclass of a subclass) still
makes the leak visible, and the NumPy look-alikes stay silent."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKSPACE = Path(__file__).parent / "workspace"
LEAK = (
    "train.py:11:24: error: GG101 `out` carries an autograd graph (from `model(x)` on line 10) that is never "
    "back-propagated; storing it in `outputs` keeps every saved activation alive across iterations\n"
)


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Path:
    """A virtual environment without torch (nor pip): what jedi reads through `--python`."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv / "bin" / "python"


@pytest.fixture
def project(tmp_path) -> Path:
    shutil.copytree(WORKSPACE, tmp_path / "p", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "p"


def check(project: Path, *args: str):
    return subprocess.run(
        [sys.executable, "-m", "gradguard", "check", "--no-cache", "-q", *args],
        cwd=project, capture_output=True, text=True, timeout=300,
    )


def test_without_types_the_model_from_another_file_is_unknown(project):
    run = check(project, "train.py")
    assert (run.returncode, run.stdout) == (0, "")


def test_types_with_a_torchless_python_find_the_leak_through_the_stubs(project, bare):
    run = check(project, "--types", "--python", str(bare), "train.py", "lookalikes.py")
    assert (run.returncode, run.stdout, run.stderr) == (1, LEAK, "")


def test_python_in_the_configuration(project, bare):
    (project / "pyproject.toml").write_text(f'[tool.gradguard]\ntypes = true\npython = "{bare}"\n')
    run = check(project, "train.py")
    assert (run.returncode, run.stdout) == (1, LEAK)


def test_a_python_jedi_cannot_use_is_said_once(project, tmp_path):
    fake = tmp_path / "not-python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    (project / "other.py").write_text((project / "train.py").read_text())  # two files: two workers may ask
    run = check(project, "--types", "--python", str(fake), "train.py", "other.py")
    assert (run.returncode, run.stdout) == (0, "")  # syntax alone: the model from another file is unknown
    assert run.stderr == f"warning: types are off: jedi cannot use {fake} (InvalidPythonEnvironment)\n"


def test_the_base_class_in_a_third_module(project, bare):
    """models/base.py `class Base(nn.Module)`, models/deep.py `class Deep(Base)`, deep_train.py uses it."""
    (project / "models" / "base.py").write_text("from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n")
    (project / "models" / "deep.py").write_text(
        "from torch import nn\n\nfrom models.base import Base\n\n\nclass Deep(Base):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n"
        "    def forward(self, x):\n        return self.fc(x)\n"
    )
    (project / "deep_train.py").write_text((project / "train.py").read_text().replace("models.net import Net", "models.deep import Deep").replace("Net()", "Deep()"))
    assert check(project, "deep_train.py").stdout == ""  # syntax alone: unknown
    run = check(project, "--types", "--python", str(bare), "deep_train.py", "lookalikes.py")
    assert (run.returncode, run.stdout, run.stderr) == (1, LEAK.replace("train.py", "deep_train.py", 1), "")


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> tuple[Path, Path]:
    """A venv whose `torch` is an empty package (a broken install): jedi finds torch, so no stubs,
    and nn.Module does not resolve."""
    venv = tmp_path_factory.mktemp("broken") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    return venv / "bin" / "python", site / "torch"


def test_types_that_cannot_resolve_nn_module_are_said_once(project, broken):
    python, torch = broken
    (project / "other.py").write_text((project / "train.py").read_text())  # two files: two workers may ask
    run = check(project, "--types", "--python", str(python), "train.py", "other.py", "lookalikes.py")
    assert (run.returncode, run.stdout) == (0, "")
    assert run.stderr == (
        f"warning: types are on but jedi cannot resolve torch.nn.Module with {python} (its torch at {torch}): "
        "nn.Module subclasses from other files cannot be recognised\n"
    )
