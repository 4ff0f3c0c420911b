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
examples/rnn_leaky.py:25:9: warning: GG202 in-place write through `emb.data` after `emb` was saved for backward: autograd never sees it, and the backward that follows computes silently wrong gradients
examples/rnn_leaky.py:42:18: info: GG501 `labels = targets.clone()` copies `targets`, but neither is written in place, stored or returned: the copy only costs memory and time
examples/rnn_leaky.py:43:53: warning: GG102 `hidden` carries the previous iteration's graph into `model(inputs, hidden)`: without `hidden.detach()` at the start of the iteration the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"
examples/rnn_leaky.py:45:34: warning: GG301 `.detach()` cuts the prediction of the loss on line 45 from its model: the `.backward()` on line 46 sends no gradient through it
examples/rnn_leaky.py:48:13: error: GG203 `p` is a leaf tensor that requires grad (a parameter on line 47); the in-place `-=` on it raises "a leaf Variable that requires grad is being used in an in-place operation."
examples/rnn_leaky.py:60:13: warning: GG201 `scaled` shares storage with `logits` (from `logits.detach()` on line 59): `/=` on `scaled` silently changes `logits` too, which is used again on line 64
examples/rnn_leaky.py:62:20: info: GG501 `draw = probs.clone()` copies `probs`, but neither is written in place, stored or returned: the copy only costs memory and time
examples/rnn_leaky.py:75:9: error: GG302 `loss` carries no graph (computed inside `torch.no_grad()` on line 73); `.backward()` on it raises "element 0 of tensors does not require grad and does not have a grad_fn"
examples/rnn_leaky.py:90:14: warning: GG104 `self.state` is assigned a value with a graph in `forward()` after reading the previous call's `self.state` (line 90): every past batch's graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it
examples/rnn_leaky.py:100:16: error: GG303 `torch.tensor(..., requires_grad=True)` makes a new leaf from `loss.item()`, whose graph was cut (`.item()` on line 100): `.backward()` on line 101 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor
examples/train_leaky.py:47:29: warning: GG101 `loss` carries an autograd graph; `.backward()` on line 45 freed its activations, but storing it in `epoch_losses` keeps the graph's nodes alive across iterations
examples/train_leaky.py:56:18: warning: GG103 `model(images)` runs with grad enabled after `.eval()` on line 52 and its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients)
examples/train_leaky.py:57:27: error: GG101 `logits` carries an autograd graph (from `model(images)` on line 56) that is never back-propagated; storing it in `all_logits` keeps every saved activation alive across iterations
examples/train_leaky.py:58:63: info: GG901 unused `# noqa` directive: GG101 reports nothing on this line
examples/train_leaky.py:60:21: error: GG401 `probs` requires grad (from `model(images)` on line 56); `.numpy()` on it raises "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
examples/train_leaky.py:67:21: warning: GG402 `1.0 / frequencies` is already a tensor: `torch.tensor()` copies it and warns "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()"; use `(1.0 / frequencies).clone().detach()`
"""


def gradguard(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "gradguard", *args], cwd=cwd, capture_output=True, text=True)


def test_check_examples_reports_exactly_the_planted_mistakes():
    result = gradguard("check", "examples/")
    assert result.returncode == 1
    findings = [line for line in result.stdout.splitlines(keepends=True) if line.startswith("examples/")]
    assert "".join(findings) == EXPECTED


def test_the_fixed_scripts_are_clean():
    result = gradguard("check", "examples/train_fixed.py", "examples/rnn_fixed.py")
    assert result.returncode == 0, result.stdout


def test_every_rule_has_its_mistake_in_the_examples():
    from gradguard.rules import all_rules

    assert {line.split()[2] for line in EXPECTED.splitlines()} == {r.code for r in all_rules()}


def test_fix_leaves_only_the_findings_without_a_safe_fix(tmp_path):
    leaky = tmp_path / "rnn_leaky.py"
    shutil.copy(EXAMPLES / "rnn_leaky.py", leaky)
    gradguard("check", "--fix", str(leaky), cwd=tmp_path)
    result = gradguard("check", "--output-format", "json", str(leaky), cwd=tmp_path)
    import json

    assert sorted(f["code"] for f in json.loads(result.stdout)) == ["GG202", "GG301", "GG302", "GG303"]  # GG501 is opt-in (examples/gradguard.toml)
    fixed = leaky.read_text()
    assert "        hidden = hidden.detach()\n        model.zero_grad()" in fixed
    assert "            with torch.no_grad():\n                p -= lr * p.grad" in fixed
    assert "scaled = logits.clone().detach()" in fixed
    assert (
        "        if isinstance(self.state, tuple):\n            self.state = type(self.state)(*(s.detach() for s in self.state))"
        " if hasattr(self.state, \"_fields\") else tuple(s.detach() for s in self.state)\n"
        "        elif self.state is not None:\n            self.state = self.state.detach()\n"
        "        out, self.state = self.lstm(self.embed(tokens), self.state)\n"
    ) in fixed


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


def test_runtime_the_fixed_rnn_trains(tmp_path):
    pytest.importorskip("torch")
    result = run_script(EXAMPLES / "rnn_fixed.py", tmp_path)
    assert result.returncode == 0, result.stderr


def test_runtime_the_leaky_rnn_crashes_where_gg203_says(tmp_path):
    pytest.importorskip("torch")
    result = run_script(EXAMPLES / "rnn_leaky.py", tmp_path)
    assert "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation." in result.stderr
    assert "line 48, in train" in result.stderr


def test_runtime_the_autofixed_script_trains(tmp_path):
    pytest.importorskip("torch")
    leaky = tmp_path / "train_leaky.py"
    shutil.copy(EXAMPLES / "train_leaky.py", leaky)
    gradguard("check", "--fix", str(leaky), cwd=tmp_path)
    result = run_script(leaky, tmp_path)
    assert result.returncode == 0, result.stderr


def test_check_examples_sh_says_why_it_exits_1(tmp_path):
    """The script as run on a fresh machine, with its install step stubbed (an existing
    .venv whose pip does nothing): the findings, then one line on stderr saying that the
    exit status 1 is the leaky examples' doing."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check-examples.sh", tmp_path / "scripts")
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("#!/bin/sh\nexit 0\n")  # `pip install -e .`: already installed
    (bin_dir / "gradguard").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gradguard "$@"\n')
    for stub in bin_dir.iterdir():
        stub.chmod(0o755)
    run = subprocess.run(["bash", "scripts/check-examples.sh"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 1
    assert "".join(line for line in run.stdout.splitlines(keepends=True) if line.startswith("examples/")) == EXPECTED
    assert run.stderr == (
        "check-examples: exit status 1, as intended: the findings are the mistakes planted in "
        "examples/train_leaky.py and examples/rnn_leaky.py (examples/*_fixed.py have none)\n"
    )
