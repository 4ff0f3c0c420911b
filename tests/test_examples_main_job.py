"""The main job: `gradguard check examples/` - exact findings on the leaky script,
none on the fixed one, and `--fix` turns the leaky one into code with no findings."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

EXPECTED = """\
examples/train_leaky.py:47:29: GG101 `loss` carries an autograd graph; `.backward()` on line 45 freed its activations, but storing it in `epoch_losses` keeps the graph's nodes alive across iterations
examples/train_leaky.py:57:27: GG101 `logits` carries an autograd graph (from `model(images)` on line 56) that is never back-propagated; storing it in `all_logits` keeps every saved activation alive across iterations
examples/train_leaky.py:60:21: GG401 `probs` requires grad (from `model(images)` on line 56); `.numpy()` on it raises "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
examples/train_leaky.py:67:21: GG402 `1.0 / frequencies` is already a tensor: `torch.tensor()` copies it without its graph and warns "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()"; use `(1.0 / frequencies).clone().detach()`
"""


def gradguard(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "gradguard", *args], cwd=cwd, capture_output=True, text=True)


def test_check_examples_reports_exactly_the_planted_mistakes():
    result = gradguard("check", "examples/")
    assert result.returncode == 1
    findings = [line for line in result.stdout.splitlines(keepends=True) if line.startswith("examples/")]
    assert "".join(findings) == EXPECTED


def test_the_fixed_script_is_clean():
    result = gradguard("check", "examples/train_fixed.py")
    assert result.returncode == 0, result.stdout


def test_fix_turns_the_leaky_script_into_code_without_findings(tmp_path):
    leaky = tmp_path / "train_leaky.py"
    shutil.copy(EXAMPLES / "train_leaky.py", leaky)
    assert gradguard("check", "--fix", str(leaky), cwd=tmp_path).returncode == 0
    assert gradguard("check", str(leaky), cwd=tmp_path).returncode == 0
    fixed = leaky.read_text()
    assert "epoch_losses.append(loss.detach())  # for the loss curve" in fixed
    assert "class_weights = (1.0 / frequencies).clone().detach()" in fixed


def run_script(path: Path, cwd: Path):
    return subprocess.run([sys.executable, str(path)], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_runtime_the_fixed_script_trains(tmp_path):
    pytest.importorskip("torch")
    result = run_script(EXAMPLES / "train_fixed.py", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "epoch 1:" in result.stdout and (tmp_path / "val_probs.npy").exists()


def test_runtime_the_leaky_script_crashes_where_gg401_says(tmp_path):
    pytest.importorskip("torch")
    result = run_script(EXAMPLES / "train_leaky.py", tmp_path)
    assert result.returncode != 0
    assert "RuntimeError: Can't call numpy() on Tensor that requires grad." in result.stderr
    assert 'line 60, in evaluate' in result.stderr


def test_runtime_the_autofixed_script_trains(tmp_path):
    pytest.importorskip("torch")
    leaky = tmp_path / "train_leaky.py"
    shutil.copy(EXAMPLES / "train_leaky.py", leaky)
    gradguard("check", "--fix", str(leaky), cwd=tmp_path)
    result = run_script(leaky, tmp_path)
    assert result.returncode == 0, result.stderr
