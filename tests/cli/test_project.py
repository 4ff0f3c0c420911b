"""Project-wide analysis through the CLI: a file knows how the other files of its project call it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ganpkg_sources import CLIENT, FIT, NET, SAMPLE, SERVER, SHOW, UNIT

GG401 = (
    "ganpkg/models/net.py:15:16: warning: GG401 `self.forward(z)` requires grad when `generate()` runs with grad "
    "enabled (from `self.fc(z)` on line 11); `.numpy()` on it then raises \"Can't call numpy() on Tensor that "
    'requires grad. Use tensor.detach().numpy() instead."\n'
)
# With the caller's no_grad gone, main() - run by the script - proves the crash: an error, and why.
GG401_PROVED = (
    "ganpkg/models/net.py:15:16: error: GG401 `self.forward(z)` requires grad (from `self.fc(z)` on line 11); "
    "`.numpy()` on it raises \"Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
    'instead." (`generate()` is called with grad on: ganpkg/sample.py line 8, in `main()`)\n'
)


METER = """\
class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)
"""

TRAIN = """\
import torch
import torch.nn.functional as F

from ganpkg.models import Generator
from ganpkg.utils import AverageMeter


def train(steps=5):
    model = Generator()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = AverageMeter()
    for _ in range(steps):
        z = torch.randn(16, 8)
        loss = F.mse_loss(model(z), torch.zeros(16, 4))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.update(loss, z.size(0))
    return losses.avg, model
"""

GG101 = (
    "ganpkg/train.py:18:23: warning: GG101 `loss` carries an autograd graph; `.backward()` on line 16 freed its "
    "activations, but storing it in `losses.sum` (through `update()`) keeps the graph's nodes alive across iterations\n"
)


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A package: the model in ganpkg/models/net.py (re-exported by models/__init__.py), its only
    caller in ganpkg/sample.py, under `@torch.no_grad()`."""
    files = {
        "pyproject.toml": '[project]\nname = "ganpkg"\nversion = "0.1"\n',
        "ganpkg/__init__.py": "",
        "ganpkg/models/__init__.py": "from .net import Generator, create_model\n",
        "ganpkg/models/net.py": NET,
        "ganpkg/sample.py": SAMPLE,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def without_no_grad(package: Path) -> None:
    sample = package / "ganpkg/sample.py"
    sample.write_text(sample.read_text().replace("@torch.no_grad()\n", ""))


def test_a_method_only_called_under_no_grad_in_another_file_is_not_reported(gradguard, package):
    result = gradguard("check", "--no-cache", ".")
    assert (result.stdout, result.returncode) == ("All checks passed! 4 files checked.\n", 0)


def test_each_file_alone_reports_it(gradguard, package):
    result = gradguard("check", "--no-cache", "--no-project", ".")
    assert result.stdout == GG401 + "Found 1 finding (1 fixable with --fix). 4 files checked.\n"


def test_a_file_checked_alone_still_hears_its_callers(gradguard, package):
    """sample.py is read for its calls, not reported."""
    result = gradguard("check", "--no-cache", "ganpkg/models/net.py")
    assert (result.stdout, result.returncode) == ("All checks passed! 1 file checked.\n", 0)


def test_removing_the_callers_no_grad_reports_the_callee(gradguard, package):
    without_no_grad(package)
    result = gradguard("check", "--no-cache", "ganpkg/models/net.py")
    assert result.stdout == GG401_PROVED + "Found 1 finding (1 fixable with --fix). 1 file checked.\n"


def test_the_call_in_the_other_file_is_a_related_location(gradguard, package):
    """JSON and SARIF point at sample.py's call on line 8 (fresh and from the cache); after a Chinese string on its
    line the column is the line's indentation, which means the same in every encoding."""
    without_no_grad(package)
    here = {"line": 11, "column": 16, "end_line": 11, "end_column": 26, "message": "requires grad from here"}
    call = {"path": "ganpkg/sample.py", "line": 8, "column": 13, "end_line": 8, "end_column": 13,
            "message": "`generate()` is called here, with grad on"}
    for _ in range(2):
        [found] = json.loads(gradguard("check", "--output-format", "json", "ganpkg/models/net.py").stdout)
        assert found["related"] == [here, call]
    [result] = json.loads(gradguard("check", "--output-format", "sarif", ".").stdout)["runs"][0]["results"]
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in result["relatedLocations"]] == [
        "ganpkg/models/net.py", "ganpkg/sample.py"]
    sample = package / "ganpkg/sample.py"
    sample.write_text(sample.read_text().replace("print(g.generate(4))", 'print("训练", g.generate(4))'))
    [found] = json.loads(gradguard("check", "--output-format", "json", "ganpkg/models/net.py").stdout)
    assert found["related"] == [here, {**call, "column": 5, "end_column": 5}]


def test_the_cached_result_of_a_callee_goes_when_its_caller_changes(gradguard, package):
    """net.py's bytes do not change; what sample.py says of it does."""
    assert gradguard("check", ".").stdout == "All checks passed! 4 files checked.\n"
    assert gradguard("check", ".").stdout == "All checks passed! 4 files checked.\n"  # from the cache
    without_no_grad(package)
    assert gradguard("check", ".").stdout == GG401_PROVED + "Found 1 finding (1 fixable with --fix). 4 files checked.\n"


def test_callers_that_disagree_leave_it_reported(gradguard, package):
    (package / "ganpkg/show.py").write_text(textwrap.dedent("""\
        from ganpkg.models.net import Generator

        def show():
            print(Generator().generate(2))
    """))
    result = gradguard("check", "--no-cache", ".")
    assert result.stdout == GG401 + "Found 1 finding (1 fixable with --fix). 5 files checked.\n"


def test_an_object_nothing_tells_counts_only_for_the_one_method_of_that_name(gradguard, package):
    sample = package / "ganpkg/sample.py"
    sample.write_text(textwrap.dedent("""\
        import torch

        @torch.no_grad()
        def main(runner):
            print(runner.generate(4))
    """))
    assert gradguard("check", "--no-cache", ".").stdout == "All checks passed! 4 files checked.\n"
    (package / "ganpkg/other.py").write_text(textwrap.dedent("""\
        class Sampler:
            def generate(self, n):
                return list(range(n))
    """))
    result = gradguard("check", "--no-cache", ".")
    assert result.stdout == GG401 + "Found 1 finding (1 fixable with --fix). 5 files checked.\n"


def test_fixes_are_not_made_for_what_the_project_takes_away(gradguard, package):
    result = gradguard("check", "--no-cache", "--fix", ".")
    assert result.stdout == "All checks passed! 4 files checked.\n"
    assert (package / "ganpkg/models/net.py").read_text() == NET


def test_runtime_truth(package):
    """Under the caller's no_grad, `.numpy()` works; without it, PyTorch raises."""
    run = [sys.executable, "-m", "ganpkg.sample"]
    assert subprocess.run(run, cwd=package, capture_output=True, timeout=120).returncode == 0
    without_no_grad(package)
    failed = subprocess.run(run, cwd=package, capture_output=True, text=True, timeout=120)
    assert "Can't call numpy() on Tensor that requires grad" in failed.stderr


@pytest.fixture
def with_meter(package: Path) -> Path:
    """A meter class in utils.py (which never mentions torch), fed the loss in train.py's loop."""
    (package / "ganpkg/utils.py").write_text(METER)
    (package / "ganpkg/train.py").write_text(TRAIN)
    return package


def test_what_a_class_of_another_file_keeps_is_a_store(gradguard, with_meter):
    result = gradguard("check", "--no-cache", ".")
    assert result.stdout == GG101 + "Found 1 finding (1 fixable with --fix). 6 files checked.\n"
    result = gradguard("check", "--no-cache", "--no-project", ".")
    assert result.stdout == GG401 + "Found 1 finding (1 fixable with --fix). 6 files checked.\n"


def test_the_store_through_another_file_is_fixed_in_the_callers_file(gradguard, with_meter):
    result = gradguard("check", "--no-cache", "--fix", ".")
    assert result.stdout == "Fixed 1 finding. 6 files checked.\n"
    assert (with_meter / "ganpkg/train.py").read_text() == TRAIN.replace(
        "losses.update(loss, z.size(0))", "losses.update(loss.detach(), z.size(0))")
    assert (with_meter / "ganpkg/utils.py").read_text() == METER


def stdin(package: Path, text: str, *args: str) -> str:
    run = subprocess.run([sys.executable, "-m", "gradguard", "check", *args, "-"], cwd=package, input=text.encode(),
                         capture_output=True, timeout=120)
    return run.stdout.decode()


def test_code_on_stdin_is_checked_with_its_project(with_meter):
    """An editor's unsaved buffer on stdin, named by --stdin-filename: the callers (sample.py's no_grad) and
    the callees (utils.py's meter) of the file it stands for speak of it; the buffer, not the disk, is the truth."""
    assert stdin(with_meter, NET, "--stdin-filename", "ganpkg/models/net.py") == "All checks passed! 1 file checked.\n"
    assert stdin(with_meter, NET, "--no-project", "--stdin-filename", "ganpkg/models/net.py") == (
        GG401 + "Found 1 finding (1 fixable with --fix). 1 file checked.\n")
    assert stdin(with_meter, TRAIN, "--stdin-filename", "ganpkg/train.py") == (
        GG101 + "Found 1 finding (1 fixable with --fix). 1 file checked.\n")
    fixed = TRAIN.replace("losses.update(loss,", "losses.update(loss.detach(),")
    assert stdin(with_meter, fixed, "--stdin-filename", "ganpkg/train.py") == "All checks passed! 1 file checked.\n"


def test_runtime_truth_of_the_meter(with_meter):
    """The meter's sum holds the last step's graph (a grad_fn); fixed, it holds none and the model still learns."""
    check = (
        "from ganpkg.train import train\n"
        "avg, model = train()\n"
        "print(avg.grad_fn is not None, all(p.grad is not None for p in model.parameters()))\n"
    )
    run = [sys.executable, "-c", check]
    assert subprocess.run(run, cwd=with_meter, capture_output=True, text=True, timeout=120).stdout == "True True\n"
    train = with_meter / "ganpkg/train.py"
    train.write_text(train.read_text().replace("losses.update(loss,", "losses.update(loss.detach(),"))
    assert subprocess.run(run, cwd=with_meter, capture_output=True, text=True, timeout=120).stdout == "False True\n"


GG103 = (
    "ganpkg/show.py:10:11: warning: GG103 `model(z)` runs with grad enabled and its outputs reach only `.argmax()` "
    "(line 10), never a `.backward()`: autograd records the graph and keeps its activations for nothing\n"
)


def test_a_model_built_by_a_factory_of_another_module_is_a_model(gradguard, package):
    """create_model() lives in models/net.py (re-exported by models/__init__.py): through the project,
    `model` is an nn.Module with weights, loaded and run only to print a prediction."""
    (package / "ganpkg/show.py").write_text(SHOW)
    assert gradguard("check", "--no-cache", "ganpkg/show.py").stdout == (
        GG103 + "Found 1 finding (1 fixable with --fix). 1 file checked.\n")
    assert gradguard("check", "--no-cache", "--no-project", "ganpkg/show.py").stdout == (
        "All checks passed! 1 file checked.\n")


def test_star_imports_lead_where_explicit_ones_do(gradguard, package):
    """`from ganpkg.models import *` in show.py and `from .net import *` in models/__init__.py: the
    factory is found as through named imports; so is the meter of `from ganpkg.utils import *`."""
    (package / "ganpkg/models/__init__.py").write_text("from .net import *\n")
    (package / "ganpkg/show.py").write_text(SHOW.replace("import create_model", "import *"))
    assert gradguard("check", "--no-cache", "ganpkg/show.py").stdout == (
        GG103 + "Found 1 finding (1 fixable with --fix). 1 file checked.\n")
    (package / "ganpkg/utils.py").write_text(METER)
    (package / "ganpkg/train.py").write_text(
        TRAIN.replace("import Generator", "import *").replace("import AverageMeter", "import *"))
    assert gradguard("check", "--no-cache", "ganpkg/train.py").stdout == (
        GG101 + "Found 1 finding (1 fixable with --fix). 1 file checked.\n")


def test_runtime_truth_of_the_factory(package):
    (package / "ganpkg/show.py").write_text(SHOW)
    check = (
        "import torch\n"
        "from ganpkg.models import create_model\n"
        "from ganpkg.show import show\n"
        "torch.save(create_model().state_dict(), 'g.pt')\n"
        "print(show('g.pt').grad_fn is not None)\n"
    )
    run = subprocess.run([sys.executable, "-c", check], cwd=package, capture_output=True, text=True, timeout=120)
    assert run.stdout.endswith("True\n")


def test_a_meter_that_keeps_a_rebound_argument_keeps_no_graph(gradguard, with_meter):
    """clovaai's Averager: `v = v.data.sum()` before `self.sum += v` - what it keeps is not the argument."""
    (with_meter / "ganpkg/utils.py").write_text(METER.replace(
        "    def update(self, val, n=1):\n", "    def update(self, val, n=1):\n        val = val.data\n"))
    assert gradguard("check", "--no-cache", ".").stdout == "All checks passed! 6 files checked.\n"


def test_the_cached_result_of_a_caller_goes_when_its_callee_changes(gradguard, with_meter):
    """train.py's bytes do not change; what utils.py's meter keeps does."""
    summary = "Found 1 finding (1 fixable with --fix). 6 files checked.\n"
    assert gradguard("check", ".").stdout == GG101 + summary
    assert gradguard("check", ".").stdout == GG101 + summary  # from the cache
    utils = with_meter / "ganpkg/utils.py"
    utils.write_text(utils.read_text().replace("self.sum += val * n", "self.sum += float(val) * n"))
    assert gradguard("check", ".").stdout == "All checks passed! 6 files checked.\n"


def test_a_method_of_another_files_model_that_returns_its_graph_is_a_forward(gradguard, package):
    net = package / "ganpkg/models/net.py"
    net.write_text(net.read_text().replace("    def generate(self, n):", "    def sample(self, n):\n"
                                            "        return self.fc(torch.randn(n, 8))\n\n    def generate(self, n):"))
    (package / "ganpkg/show.py").write_text(textwrap.dedent("""\
        import torch

        from ganpkg.models import Generator


        def show(path):
            g = Generator()
            g.load_state_dict(torch.load(path))
            print(g.sample(4).argmax(1))
    """))
    assert gradguard("check", "--no-cache", "ganpkg/show.py").stdout == (
        "ganpkg/show.py:9:11: warning: GG103 `g.sample(4)` runs with grad enabled and its outputs reach only "
        "`.argmax()` (line 9), never a `.backward()`: autograd records the graph and keeps its activations for "
        "nothing\nFound 1 finding (1 fixable with --fix). 1 file checked.\n")
    assert gradguard("check", "--no-cache", "--no-project", "ganpkg/show.py").stdout == (
        "All checks passed! 1 file checked.\n")


MEMORY = """\
import torch
from torch import nn


class Memory(nn.Module):
    def __init__(self, n, m):
        super().__init__()
        self.register_buffer("bias", torch.full((n, m), 1e-6))

    def reset(self, batch_size):
        self.memory = self.bias.clone().repeat(batch_size, 1, 1)

    def write(self, w, add):
        self.memory = self.memory + torch.matmul(w.unsqueeze(-1), add.unsqueeze(1))


class Controller(nn.Module):
    def __init__(self):
        super().__init__()
        self.memory = Memory(6, 5)
        self.address = nn.Linear(4, 6)
        self.add = nn.Linear(4, 5)

    def init_sequence(self, batch_size):
        self.memory.reset(batch_size)

    def forward(self, x):
        self.memory.write(self.address(x).softmax(1), self.add(x))
        return self.memory.memory.sum((1, 2))
"""

SEQUENCES = """\
import torch

from ganpkg.memory import Controller


def train(net, steps=3):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    net.init_sequence(2)
    for _ in range(steps):
        optimizer.zero_grad()
        sum(net(torch.randn(2, 4)) for _ in range(3)).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    train(Controller())
"""

GG104 = (
    "ganpkg/memory.py:14:9: warning: GG104 `self.memory` is assigned a value with a graph in `write()` after reading "
    "the previous call's `self.memory` (line 14): every past batch's graph stays reachable, memory grows with every "
    "call, and the next `.backward()` fails with \"Trying to backward through the graph a second time\"; detach it "
    "when storing it (`init_sequence()`, its reset, is called only outside the training steps: ganpkg/sequences.py "
    "line 8, in `train()`)\n"
)


def per_batch(text: str) -> str:
    return text.replace("    net.init_sequence(2)\n    for _ in range(steps):\n",
                        "    for _ in range(steps):\n        net.init_sequence(2)\n")


def test_a_reset_another_file_calls_once_is_no_reset_per_batch(gradguard, package):
    """The model file alone cannot tell (its reset may run every batch elsewhere: not reported); the
    project says the only caller resets once, before the loop."""
    (package / "ganpkg/memory.py").write_text(MEMORY)
    (package / "ganpkg/sequences.py").write_text(SEQUENCES)
    assert gradguard("check", "--no-cache", "ganpkg/memory.py").stdout == (
        GG104 + "Found 1 finding (1 fixable with --fix). 1 file checked.\n")
    assert gradguard("check", "--no-cache", "--no-project", "ganpkg/memory.py").stdout == (
        "All checks passed! 1 file checked.\n")
    [found] = json.loads(gradguard("check", "--no-cache", "--output-format", "json", "ganpkg/memory.py").stdout)
    assert found["related"][-1] == {"path": "ganpkg/sequences.py", "line": 8, "column": 9, "end_line": 8,
                                    "end_column": 9, "message": "`init_sequence()` is called here, outside the training steps"}
    (package / "ganpkg/sequences.py").write_text(per_batch(SEQUENCES))
    assert gradguard("check", "--no-cache", "ganpkg/memory.py").stdout == "All checks passed! 1 file checked.\n"


def test_runtime_truth_of_the_reset(package):
    (package / "ganpkg/memory.py").write_text(MEMORY)
    (package / "ganpkg/sequences.py").write_text(SEQUENCES)
    run = [sys.executable, "-m", "ganpkg.sequences"]
    once = subprocess.run(run, cwd=package, capture_output=True, text=True, timeout=120)
    assert "Trying to backward through the graph a second time" in once.stderr
    (package / "ganpkg/sequences.py").write_text(per_batch(SEQUENCES))
    assert subprocess.run(run, cwd=package, capture_output=True, timeout=120).returncode == 0


AGENT = """\
import torch
from torch import nn
from torch.distributions import Categorical


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Linear(4, 3)

    def get_action_and_value(self, x):
        dist = Categorical(logits=self.actor(x))
        action = dist.sample()
        return action, dist.log_prob(action)
"""

ENJOY = """\
import torch

from ganpkg.agent import Agent


def enjoy(path):
    agent = Agent()
    agent.load_state_dict(torch.load(path))
    action, _ = agent.get_action_and_value(torch.randn(1, 4))
    return action.cpu().numpy()
"""


def test_a_method_of_another_files_model_returning_a_tuple_is_judged_by_its_elements(gradguard, package):
    """cleanrl's enjoy.py: the first element is a sampled action, without a graph - `.numpy()` works, no
    GG401; the second, dropped, is `log_prob`'s, with one (torch.distributions knowledge, read in the
    agent's class): an inference with grad on in a file that never trains, GG103."""
    (package / "ganpkg/agent.py").write_text(AGENT)
    (package / "ganpkg/enjoy.py").write_text(ENJOY)
    assert gradguard("check", "--no-cache", "ganpkg/enjoy.py").stdout == (
        "ganpkg/enjoy.py:9:17: warning: GG103 `agent.get_action_and_value(torch...` runs with grad enabled in "
        "`enjoy()`, which turns its results into NumPy, in a file that never trains: autograd records the graph "
        "and keeps its activations for nothing\n"
        "Found 1 finding (1 fixable with --fix). 1 file checked.\n"
    )
    check = (
        "import torch\nfrom ganpkg.agent import Agent\nfrom ganpkg.enjoy import enjoy\n"
        "torch.save(Agent().state_dict(), 'a.pt')\nprint(enjoy('a.pt').shape)\n"
        "print(Agent().get_action_and_value(torch.randn(1, 4))[1].grad_fn is not None)\n"
    )
    run = subprocess.run([sys.executable, "-c", check], cwd=package, capture_output=True, text=True, timeout=120)
    assert run.stdout == "(1,)\nTrue\n"


GG401_PASSED = (
    "ganpkg/unit.py:8:18: error: GG401 `scalar` requires grad: `scalar_to_float(data)` on line 16 passes `data` "
    "(from `nn.functional.mse_loss(self.module(...` on line 27); `.numpy()` on it raises \"Can't call "
    'numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."\n'
)


@pytest.fixture
def with_unit(package: Path) -> Path:
    """A training unit, its logger and the logger's conversion helper in unit.py; fit.py builds the unit
    with the logger and trains: only fit.py says what the unit's `logger` and `module` are."""
    (package / "ganpkg/unit.py").write_text(UNIT)
    (package / "ganpkg/fit.py").write_text(FIT)
    return package


def test_what_another_file_passes_a_constructor_is_what_its_parameters_hold(gradguard, with_unit):
    result = gradguard("check", "--no-cache", ".")
    assert result.stdout == GG401_PASSED + "Found 1 finding (1 fixable with --fix). 6 files checked.\n"
    result = gradguard("check", "--no-cache", "--no-project", ".")
    assert result.stdout == GG401 + "Found 1 finding (1 fixable with --fix). 6 files checked.\n"


def test_callers_that_pass_different_things_say_nothing(gradguard, with_unit):
    (with_unit / "ganpkg/replay.py").write_text(FIT.replace("InMemoryLogger()", "print").replace("def fit", "def replay"))
    result = gradguard("check", "--no-cache", ".")
    assert result.stdout == "All checks passed! 7 files checked.\n"


def test_runtime_truth_of_what_is_passed(with_unit):
    """The logger converts the loss that still requires grad: PyTorch raises; detached where it converts, fit runs,
    logs floats and the model still learns (its weights move)."""
    run = [sys.executable, "-m", "ganpkg.fit"]
    failed = subprocess.run(run, cwd=with_unit, capture_output=True, text=True, timeout=120)
    assert "Can't call numpy() on Tensor that requires grad" in failed.stderr
    unit = with_unit / "ganpkg/unit.py"
    unit.write_text(UNIT.replace("scalar.cpu().numpy()", "scalar.detach().cpu().numpy()"))
    check = ("import torch\nfrom ganpkg.fit import fit\ntorch.manual_seed(0)\nu = fit()\ntorch.manual_seed(0)\n"
             "start = torch.nn.Linear(4, 1).weight\n"
             "print(not torch.equal(start, u.module.weight), isinstance(u.logger.buffer[0]['loss'], float))\n")
    done = subprocess.run([sys.executable, "-c", check], cwd=with_unit, capture_output=True, text=True, timeout=120)
    assert done.stdout == "True True\n"


CELL = """\
import torch
from torch import nn


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, h):
        return torch.tanh(self.fc(torch.cat([x, h], dim=1)))
"""

STREAM = """\
import torch


def stream(cell, frames):
    h = torch.zeros(1, 4)
    tokens = []
    for x in frames:
        h = cell(x=x, h=h)
        tokens.append(h.argmax(-1))
    return tokens
"""


def stream_findings(shift: int) -> str:
    return (
        f"ganpkg/stream.py:{8 + shift}:13: warning: GG103 `cell(x=x, h=h)` runs with grad enabled and its outputs reach only "
        f"`.argmax()` (line {9 + shift}), never a `.backward()`: autograd records the graph and keeps its activations for nothing\n"
        f"ganpkg/stream.py:{8 + shift}:25: warning: GG102 `h` carries the previous step's graph into `cell(x=x, h=h)` with grad "
        f"enabled and nothing back-propagates it: the graph grows with every step of the loop on line {7 + shift}; run "
        "the loop under `torch.no_grad()`\n"
    )


def test_a_class_imported_from_another_module_tells_what_a_parameter_is(gradguard, package):
    """`cell(x=x, h=h)` is called the way the forward() of the `Cell` stream.py imports is declared
    (two keywords it declares): an instance of it, as if the class were defined in stream.py."""
    (package / "ganpkg/models/rnn.py").write_text(CELL)
    (package / "ganpkg/stream.py").write_text(STREAM.replace("import torch\n", "import torch\n\nfrom ganpkg.models.rnn import Cell\n", 1))
    result = gradguard("check", "--no-cache", "ganpkg/stream.py")
    assert result.stdout == stream_findings(2) + "Found 2 findings (2 fixable with --fix). 1 file checked.\n"
    result = gradguard("check", "--no-cache", "--no-project", "ganpkg/stream.py")
    assert result.stdout == "All checks passed! 1 file checked.\n"


def test_the_classes_of_a_module_that_imports_a_file_tell_what_its_parameters_are(gradguard, package):
    """run.py defines `Cell` and imports `stream`: stream.py's `cell` is known by its call as in one file."""
    (package / "ganpkg/stream.py").write_text(STREAM)
    (package / "ganpkg/run.py").write_text(CELL.replace("from torch import nn\n", "from torch import nn\n\nfrom ganpkg.stream import stream\n"))
    result = gradguard("check", "--no-cache", ".")
    assert result.stdout == stream_findings(0) + "Found 2 findings (2 fixable with --fix). 6 files checked.\n"


def test_runtime_truth_of_the_imported_cell(package):
    """The state fed back grows the graph at every frame: the sizes of the cell's output graphs rise."""
    (package / "ganpkg/models/rnn.py").write_text(CELL)
    (package / "ganpkg/stream.py").write_text(STREAM)
    check = (
        "import torch\n"
        "from ganpkg.models.rnn import Cell\n"
        "from ganpkg.stream import stream\n"
        "def size(fn):\n"
        "    seen, todo = set(), [fn]\n"
        "    while todo:\n"
        "        f = todo.pop()\n"
        "        if f is not None and f not in seen:\n"
        "            seen.add(f)\n"
        "            todo += [n for n, _ in f.next_functions]\n"
        "    return len(seen)\n"
        "cell, sizes = Cell(), []\n"
        "cell.register_forward_hook(lambda m, i, o: sizes.append(size(o.grad_fn)))\n"
        "stream(cell, [torch.randn(1, 4) for _ in range(4)])\n"
        "print(all(a < b for a, b in zip(sizes, sizes[1:])))\n"
    )
    run = [sys.executable, "-c", check]
    assert subprocess.run(run, cwd=package, capture_output=True, text=True, timeout=120).stdout == "True\n"


def test_what_a_method_of_an_imported_class_returns_is_known_and_cited_in_its_file(gradguard, package):
    (package / "ganpkg/users.py").write_text(CLIENT)
    (package / "ganpkg/server.py").write_text(SERVER)
    result = gradguard("check", "--no-cache", "ganpkg/server.py")
    assert result.stdout == (  # (the evaluation runs `test()` with grad on, GG103, and keeps its graphs, GG101)
        "ganpkg/server.py:9:19: warning: GG103 `client.test()` runs with grad enabled and its outputs reach only "
        "`.item()` (line 11), never a `.backward()`: autograd records the graph and keeps its activations for nothing\n"
        "ganpkg/server.py:10:23: error: GG101 `loss` carries an autograd graph (from `self.criterion(self.model(x), y)` "
        "on line 14 of ganpkg/users.py) that is never back-propagated; storing it in `losses` keeps every saved "
        "activation alive across iterations\n"
        "Found 2 findings (2 fixable with --fix). 1 file checked.\n"
    )
    assert gradguard("check", "--no-cache", "--no-project", "ganpkg/server.py").stdout == "All checks passed! 1 file checked.\n"


def test_runtime_truth_of_the_client(package):
    """What `test()` returns, kept in the list, carries the evaluation's graph."""
    (package / "ganpkg/users.py").write_text(CLIENT)
    check = (
        "import torch\n"
        "from ganpkg.users import Client\n"
        "loss, n = Client(torch.nn.Linear(2, 1), [(torch.randn(3, 2), torch.randn(3, 1))]).test()\n"
        "print(loss.grad_fn is not None)\n"
    )
    run = [sys.executable, "-c", check]
    assert subprocess.run(run, cwd=package, capture_output=True, text=True, timeout=120).stdout == "True\n"


def test_the_cached_result_goes_when_an_imported_class_changes(gradguard, package):
    (package / "ganpkg/users.py").write_text(CLIENT)
    (package / "ganpkg/server.py").write_text(SERVER)
    assert gradguard("check", "ganpkg/server.py").stdout.endswith("Found 2 findings (2 fixable with --fix). 1 file checked.\n")
    (package / "ganpkg/users.py").write_text(CLIENT.replace("return loss, len", "return loss.item(), len"))
    assert gradguard("check", "ganpkg/server.py").stdout == "All checks passed! 1 file checked.\n"


def test_nothing_is_reported_or_fixed_inside_an_imported_class_but_in_its_own_file(gradguard, package):
    (package / "ganpkg/users.py").write_text(CLIENT)
    (package / "ganpkg/server.py").write_text(SERVER)
    result = gradguard("check", "--no-cache", "--fix", "ganpkg/server.py")
    assert result.stdout == "Fixed 2 findings. 1 file checked.\n"
    assert (package / "ganpkg/server.py").read_text() == SERVER.replace(
        "losses.append(loss)", "losses.append(loss.detach())").replace("def evaluate", "@torch.no_grad()\ndef evaluate")
    assert (package / "ganpkg/users.py").read_text() == CLIENT


def _run_project(root: Path, monkeypatch) -> tuple[dict, list]:
    """The CLI's project run in this process (one worker, no cache): its counts, and each file's findings."""
    from gradguard import cli
    from gradguard.config import Resolver
    from gradguard.discovery import discover

    monkeypatch.chdir(root)
    resolver = Resolver()
    tasks = [(p, resolver.for_path(p).settings_for(p), None) for p in discover(["."], resolver).files]
    stats: dict = {}
    results = list(cli.run_project(tasks, cli.Job(), 1, resolver, stats))
    return stats, [(r.path, f.code, f.range.start.line, f.message) for r in results for f in r.findings]


HELPERS = """\
import torch


def scaled(x, factor):
    return x * factor


def run(net, x):
    return net(x).sum()
"""


def test_a_file_is_analysed_again_only_where_what_it_is_told_answers_what_it_asked(tmp_path, monkeypatch):
    # helpers.py's functions are called only from main.py: `scaled` is passed numbers, which cannot add
    # a finding, so helpers.py is not analysed again; once `run` is passed a model with weights, it is
    # (a model's forward under grad: what it returns has a graph) - and the findings are those of a
    # project run that analyses every told file again
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0.1"\n')
    (tmp_path / "helpers.py").write_text(HELPERS)
    main = "import torch\nfrom helpers import scaled, run\n\n\ndef main():\n    return scaled(2.0, 3)\n"
    (tmp_path / "main.py").write_text(main)
    stats, found = _run_project(tmp_path, monkeypatch)
    assert (stats["again"], found) == (0, [])  # (the run with every told file analysed again finds none either)
    (tmp_path / "main.py").write_text(main + "\n\ndef score(x):\n    return run(torch.nn.Linear(4, 1), x).item()\n")
    stats, found = _run_project(tmp_path, monkeypatch)
    assert (stats["again"], found) == (1, [])


def test_a_class_joined_from_another_module_is_still_a_call_of_that_module(tmp_path, monkeypatch):
    # fit.py is analysed with unit.py's classes joined (it builds a RegressionUnit): its calls of them are
    # still exported as calls of ganpkg.unit, so unit.py hears what fit.py passes (the logger's class)
    for name, text in {"pyproject.toml": '[project]\nname = "ganpkg"\nversion = "0.1"\n', "ganpkg/__init__.py": "",
                       "ganpkg/unit.py": UNIT, "ganpkg/fit.py": FIT}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    stats, found = _run_project(tmp_path, monkeypatch)
    assert found == [("ganpkg/unit.py", "GG401", 8, GG401_PASSED.split("GG401 ", 1)[1].rstrip("\n"))]  # (alone: none)


def test_a_file_analysed_twice_by_a_project_run_comes_from_the_cache_both_times(gradguard, with_unit):
    """unit.py is analysed told nothing, then told what fit.py passes: the cache keeps both results, so
    an unchanged project is read from it whole (each finding reworded in the cache shows it is read)."""
    first = gradguard("check", ".").stdout
    assert first == GG401_PASSED + "Found 1 finding (1 fixable with --fix). 6 files checked.\n"
    gradguard("check", ".")
    (path,) = [p for p in (with_unit / ".gradguard_cache").iterdir() if p.suffix == ".json"]
    entries = json.loads(path.read_text())
    for records in entries.values():
        for _, key, payload in records:
            for finding in payload[0] if not key.startswith("neighbours:") else ():
                finding[3] = "from the cache"
    path.write_text(json.dumps(entries))
    assert gradguard("check", ".").stdout.splitlines()[0] == "ganpkg/unit.py:8:18: error: GG401 from the cache"


def test_the_classes_of_other_modules_a_file_works_with_come_from_the_cache(gradguard, package):
    """The cache keeps which classes of other modules stream.py works with (they cost a parse of every
    module to choose): emptied there, the next run of the unchanged project reads it and finds nothing;
    a change to the module that defines `Cell` chooses them again."""
    (package / "ganpkg/models/rnn.py").write_text(CELL)
    (package / "ganpkg/stream.py").write_text(STREAM.replace("import torch\n", "import torch\n\nfrom ganpkg.models.rnn import Cell\n", 1))
    found = stream_findings(2) + "Found 2 findings (2 fixable with --fix). 1 file checked.\n"
    assert gradguard("check", "ganpkg/stream.py").stdout == found
    (path,) = [p for p in (package / ".gradguard_cache").iterdir() if p.suffix == ".json"]
    entries = json.loads(path.read_text())
    (record,) = [r for r in entries[str(package / "ganpkg/stream.py")] if r[1].startswith("neighbours:")]
    record[2] = []
    path.write_text(json.dumps(entries))
    assert gradguard("check", "ganpkg/stream.py").stdout == "All checks passed! 1 file checked.\n"
    (package / "ganpkg/models/rnn.py").write_text(CELL + "\n")
    assert gradguard("check", "ganpkg/stream.py").stdout == found


def _write(root: Path, files: dict) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0.1"\n')
    for name, text in files.items():
        (root / name).write_text(text)


# StyleGAN2's phases (tests/corpus GG103/b29_stylegan2_generator_phase_fakes): the caller freezes both
# networks, and each phase unfreezes its own through a loop variable the analysis does not follow.
GAN_PHASES = """\
import torch
import torch.nn.functional as F


def accumulate(phase, G, D, real, z):
    if phase == "G":
        loss = F.softplus(-D(G(z)))
        loss.mean().backward()
    else:
        with torch.no_grad():
            fake = G(z)
        loss = F.softplus(D(fake)) + F.softplus(-D(real))
        loss.mean().backward()


def train(G, D, loader, z_dim):
    opt_G = torch.optim.Adam(G.parameters())
    opt_D = torch.optim.Adam(D.parameters())
    for real in loader:
        for phase, module, opt in (("G", G, opt_G), ("D", D, opt_D)):
            opt.zero_grad()
            module.requires_grad_(True)
            accumulate(phase, G, D, real, torch.randn(real.shape[0], z_dim))
            module.requires_grad_(False)
            opt.step()
"""
GAN_MAIN = """\
import torch
from torch import nn

from phases import train

G = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 12))
D = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 1))
G.requires_grad_(False)
D.requires_grad_(False)
train(G, D, [torch.randn(4, 12) for _ in range(3)], 6)
"""


def test_a_model_the_caller_froze_is_not_told_to_be_one_without_weights(gradguard, tmp_path):
    """`G.requires_grad_(False)` in main.py says nothing of what `train()` does with `G` (it unfreezes
    each network for its phase): told "a module without weights", every loss of phases.py was taken
    to have no graph (GG302 twice, a false positive)."""
    _write(tmp_path, {"phases.py": GAN_PHASES, "main.py": GAN_MAIN})
    assert gradguard("check", "--no-cache", ".").stdout == "All checks passed! 2 files checked.\n"


# SAM's thresholded prediction (tests/corpus GG303/sam_loss_requires_grad_): main.py passes a torch loss.
SAM_STEP = """\
import torch


def train_step(model, images, masks, optimizer, criterion):
    pred = model(images)
    pred_t = torch.from_numpy(torch.sigmoid(pred).detach().numpy())
    loss = criterion(pred_t, masks)
    loss.requires_grad_()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
"""
SAM_MAIN = """\
import torch

from step import train_step

model = torch.nn.Conv2d(1, 1, 3, padding=1)
train_step(model, torch.randn(2, 1, 4, 4), torch.rand(2, 1, 4, 4).round(),
           torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.BCELoss())
"""


def test_a_loss_another_file_passes_is_told_as_a_loss(gradguard, tmp_path):
    """`torch.nn.BCELoss()` passed for `criterion` is a loss (told as one: what it computes from a cut
    prediction has no graph, and where the cut was is kept), not just a module without weights."""
    _write(tmp_path, {"step.py": SAM_STEP, "main.py": SAM_MAIN})
    assert gradguard("check", "--no-cache", ".").stdout == (
        "step.py:5:12: warning: GG103 `model(images)` runs with grad enabled and its outputs reach only "
        "`.numpy()` (line 6), never a `.backward()`: autograd records the graph and keeps its activations for "
        "nothing\n"
        "step.py:8:5: error: GG303 `loss.requires_grad_()` makes `loss` a new leaf, but its graph was cut "
        "(`.detach()` on line 6): `.backward()` on line 10 runs without error, but no gradient reaches what "
        "computed it, so the model never learns; remove the cut and back-propagate the original tensor\n"
        "Found 2 findings (1 fixable with --fix). 2 files checked.\n")


# The location-sensitive attention fed its own alignment (tests/corpus GG102/location_attention_...):
# main.py never mentions torch, it builds the project's model and hands it to the project's function.
ATTENTION = """\
import torch
from torch import nn


class LocationAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.project = nn.Linear(1, hidden_size)
        self.score = nn.Linear(hidden_size, 1)

    def forward(self, last):
        return self.score(self.project(last.unsqueeze(2))).squeeze(2).softmax(dim=1)


def align_frames(attention, batch_size, num_tokens, num_frames):
    last = torch.zeros(batch_size, num_tokens)
    picks = []
    for _ in range(num_frames):
        last = attention(last)
        picks.append(last.argmax(dim=1))
    return picks
"""
ATTENTION_MAIN = """\
from attention import LocationAttention, align_frames

print(align_frames(LocationAttention(hidden_size=8), batch_size=2, num_tokens=5, num_frames=4))
"""


def test_a_script_that_never_mentions_torch_still_tells_what_it_passes(gradguard, tmp_path):
    """main.py imports from attention.py, which uses torch: it is analysed for what it passes (the
    project's `LocationAttention`), where a file without torch used to be passed over - and to make
    every name it calls one that may run in any grad mode."""
    _write(tmp_path, {"attention.py": ATTENTION, "main.py": ATTENTION_MAIN})
    assert gradguard("check", "--no-cache", ".").stdout == (
        "attention.py:19:16: warning: GG103 `attention(last)` runs with grad enabled and its outputs reach only "
        "`.argmax()` (line 20), never a `.backward()`: autograd records the graph and keeps its activations for "
        "nothing\n"
        "attention.py:19:26: warning: GG102 `last` carries the previous step's graph into `attention(last)` with "
        "grad enabled and nothing back-propagates it: the graph grows with every step of the loop on line 18; "
        "run the loop under `torch.no_grad()`\n"
        "Found 2 findings (2 fixable with --fix). 2 files checked.\n")
    assert gradguard("check", "--no-cache", "--no-project", ".").stdout == "All checks passed! 2 files checked.\n"


# The PyTorch FAQ's `total_loss += loss` across two modules: engine.py's `one_step()` back-propagates
# the loss and returns it; fit.py (which never mentions torch) keeps every step's result.
STEP_ENGINE = """\
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)


def one_step(net, opt, x, y):
    loss = ((net(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss
"""
STEP_FIT = """\
from engine import Regressor, one_step


def fit(batches, make_optimizer):
    net = Regressor()
    opt = make_optimizer(net.parameters())
    history = []
    for x, y in batches:
        history.append(one_step(net, opt, x, y))
    return net, history
"""
PREDICT = """

MODEL = Regressor()


def predict(x):
    return MODEL(x).sigmoid()
"""
EVALUATE = """\
import torch

from engine import predict


def evaluate(batches):
    preds = []
    for x in batches:
        preds.append(predict(x))
    return torch.cat(preds)
"""
KEPT_ACROSS_FILES = (
    "fit.py:9:24: warning: GG101 `one_step(net, opt, x, y)` carries an autograd graph; `.backward()` in "
    "`one_step()` (engine.py line 17) freed its activations, but storing it in `history` keeps the graph's nodes "
    "alive across iterations\n"
)


def test_a_graph_another_files_function_returns_is_kept_by_the_caller(gradguard, tmp_path):
    """What `one_step()` returns carries the graph it back-propagated (its summary: engine.py line 17), so
    fit.py's loop is a training loop and its list keeps every step's graph; one file alone cannot tell."""
    _write(tmp_path, {"engine.py": STEP_ENGINE, "fit.py": STEP_FIT})
    assert gradguard("check", "--no-cache", ".").stdout == (
        KEPT_ACROSS_FILES + "Found 1 finding (1 fixable with --fix). 2 files checked.\n")
    assert gradguard("check", "--no-cache", "--no-project", ".").stdout == "All checks passed! 2 files checked.\n"


def test_the_kept_graph_is_fixed_in_the_callers_file_once(gradguard, tmp_path):
    _write(tmp_path, {"engine.py": STEP_ENGINE, "fit.py": STEP_FIT})
    assert gradguard("check", "--no-cache", "--fix", ".").stdout == "Fixed 1 finding. 2 files checked.\n"
    fixed = STEP_FIT.replace("history.append(one_step(net, opt, x, y))", "history.append(one_step(net, opt, x, y).detach())")
    assert (tmp_path / "fit.py").read_text() == fixed
    assert (tmp_path / "engine.py").read_text() == STEP_ENGINE
    assert gradguard("check", "--no-cache", "--fix", ".").stdout == "All checks passed! 2 files checked.\n"
    assert (tmp_path / "fit.py").read_text() == fixed


@pytest.mark.parametrize("engine, fit", [
    (STEP_ENGINE.replace("    return loss\n", "    return loss.item()\n"), STEP_FIT),  # a number: nothing kept
    # predictions made with grad off (`predict()` returns a graph where its caller runs it with grad on)
    (STEP_ENGINE + PREDICT, EVALUATE.replace("        preds.append(", "        with torch.no_grad():\n            preds.append(")),
    # one backward over every step's loss, after the loop: the list is what it reads
    (STEP_ENGINE.replace("    loss.backward()\n    opt.step()\n", ""),
     STEP_FIT.replace("    return net, history\n", "    sum(history).backward()\n    return net, history\n")),
], ids=["returns-a-number", "predictions-under-no-grad", "caller-back-propagates-the-list"])
def test_what_another_files_function_returns_is_no_kept_graph_when_it_is_none(gradguard, tmp_path, engine, fit):
    _write(tmp_path, {"engine.py": engine, "fit.py": fit})
    assert gradguard("check", "--no-cache", ".").stdout == "All checks passed! 2 files checked.\n"


def test_the_cached_result_of_a_caller_goes_when_what_a_callee_returns_changes(gradguard, tmp_path):
    _write(tmp_path, {"engine.py": STEP_ENGINE, "fit.py": STEP_FIT})
    summary = "Found 1 finding (1 fixable with --fix). 2 files checked.\n"
    assert gradguard("check", ".").stdout == KEPT_ACROSS_FILES + summary
    assert gradguard("check", ".").stdout == KEPT_ACROSS_FILES + summary  # from the cache
    engine = tmp_path / "engine.py"
    engine.write_text(engine.read_text().replace("    return loss\n", "    return loss.item()\n"))
    assert gradguard("check", ".").stdout == "All checks passed! 2 files checked.\n"


def test_runtime_truth_of_the_returned_graph(tmp_path):
    """Each kept result has a grad_fn (its graph's nodes stay alive); fixed, none has, and the model
    still learns (its weights get gradients and change)."""
    _write(tmp_path, {"engine.py": STEP_ENGINE, "fit.py": STEP_FIT})
    check = (
        "import torch\n"
        "from fit import fit\n"
        "torch.manual_seed(0)\n"
        "data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]\n"
        "net, history = fit(data, lambda p: torch.optim.SGD(p, lr=0.1))\n"
        "before = [h.item() for h in history]\n"
        "print(all(h.grad_fn is not None for h in history), net.fc.weight.grad is not None, before[0] != before[-1])\n"
    )
    run = [sys.executable, "-c", check]
    assert subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout == "True True True\n"
    fit = tmp_path / "fit.py"
    fit.write_text(fit.read_text().replace("one_step(net, opt, x, y))", "one_step(net, opt, x, y).detach())"))
    assert subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout == "False True True\n"


# A function of another file returns a dict (or tuple) whose items hold graphs it made (its summary:
# outside.Gives); the caller hands one item back to a function of that file, which converts it.
CURVES_ENGINE = """\
import numpy as np
import torch
from torch import nn


def train(data, epochs):
    net = nn.Linear(4, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    history = {"loss": [], "epoch": []}
    for epoch in range(epochs):
        for x, y in data:
            loss = ((net(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        history["loss"].append(loss)
        history["epoch"].append(epoch)
    return net, history


def curve(losses):
    return np.log10(losses)
"""
CURVES_MAIN = """\
from engine import curve, train


def main(data):
    net, history = train(data, 2)
    return curve(history["loss"])
"""
CURVES_KEPT = (
    "engine.py:16:32: warning: GG101 `loss` carries an autograd graph; `.backward()` on line 14 freed its activations, "
    "but storing it in `history[\"loss\"]` keeps the graph's nodes alive across iterations\n"
)
CURVES_CONVERTED = (
    "engine.py:22:12: warning: GG401 `losses` holds tensors that require grad when `curve()` runs with grad enabled; "
    "`np.log10()` on it then raises \"Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
    "instead.\"\n"
)


def test_an_item_of_what_another_files_function_returns_tells_the_parameter_it_is_passed_to(gradguard, tmp_path):
    """`history["loss"]` of `net, history = train(...)`: the list of losses `train()` returns in its dict
    (engine.py's summary), passed back to `curve()`; one file alone cannot tell what `curve()` is given."""
    _write(tmp_path, {"engine.py": CURVES_ENGINE, "main.py": CURVES_MAIN})
    assert gradguard("check", "--no-cache", ".").stdout == (
        CURVES_KEPT + CURVES_CONVERTED + "Found 2 findings (1 fixable with --fix). 2 files checked.\n")
    assert gradguard("check", "--no-cache", "--no-project", ".").stdout == (
        CURVES_KEPT + "Found 1 finding (1 fixable with --fix). 2 files checked.\n")


@pytest.mark.parametrize("engine, main", [
    (CURVES_ENGINE.replace("history[\"loss\"].append(loss)", "history[\"loss\"].append(loss.item())"), CURVES_MAIN),
    (CURVES_ENGINE, CURVES_MAIN.replace("history[\"loss\"]", "history[\"epoch\"]")),
    (CURVES_ENGINE, CURVES_MAIN.replace("    return curve(", "    history = {\"loss\": [1.0]}\n    return curve(")),
], ids=["numbers-kept", "the-other-key", "rebound"])
def test_an_item_of_another_files_result_without_graphs_tells_nothing_wrong(gradguard, tmp_path, engine, main):
    _write(tmp_path, {"engine.py": engine, "main.py": main})
    assert CURVES_CONVERTED not in gradguard("check", "--no-cache", ".").stdout


def test_runtime_truth_of_the_returned_curves(tmp_path):
    """`curve()` raises on what `train()` returned; with `.item()` it returns the curve."""
    _write(tmp_path, {"engine.py": CURVES_ENGINE, "main.py": CURVES_MAIN})
    check = (
        "import torch\n"
        "from main import main\n"
        "data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]\n"
        "try:\n    main(data)\nexcept RuntimeError as e:\n    print(\"Can't call numpy() on Tensor that requires grad\" in str(e))\n"
        "else:\n    print('no error')\n"
    )
    run = [sys.executable, "-c", check]
    assert subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout == "True\n"
    engine = tmp_path / "engine.py"
    engine.write_text(engine.read_text().replace("history[\"loss\"].append(loss)", "history[\"loss\"].append(loss.item())"))
    assert subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout == "no error\n"


# d2l's notebooks and their utility module: `linreg` returns a graph it makes from the leaves it is given,
# `squared_loss` returns what the graph given to `y_hat` becomes and does nothing else with it (their
# summaries, read from utils.py, whose own training function calls them with graphs).
D2L_UTILS = """\
import torch


def linreg(X, w, b):
    return torch.mm(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.view(y_hat.size())) ** 2 / 2


def sgd(params, lr, batch_size):
    for param in params:
        param.data -= lr * param.grad / batch_size


def train(features, labels, epochs):
    w = torch.zeros((3, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for _ in range(epochs):
        l = squared_loss(linreg(features, w, b), labels).sum()
        l.backward()
        sgd([w, b], 0.03, 10)
        w.grad.data.zero_()
        b.grad.data.zero_()
"""
D2L_MAIN = """\
import torch
from torch import nn

import utils as d2l

features = torch.randn(20, 3)
labels = torch.randn(20, 1)
net, loss = d2l.linreg, d2l.squared_loss


def init_params():
    w = torch.randn((3, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    return [w, b]


def fit():
    w, b = init_params()
    train_ls = []
    for _ in range(3):
        l = loss(net(features, w, b), labels).sum()
        if w.grad is not None:
            w.grad.data.zero_()
            b.grad.data.zero_()
        l.backward()
        d2l.sgd([w, b], 0.1, 20)
        train_ls.append(loss(net(features, w, b), labels).mean().item())
    return train_ls


def fit_pytorch():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train_ls = []
    for _ in range(3):
        l = loss(model(features), labels).mean()
        opt.zero_grad()
        l.backward()
        opt.step()
        train_ls.append(loss(model(features), labels).mean().item())
    return train_ls
"""
D2L_FOUND = (
    "main.py:27:30: warning: GG103 `net(features, w, b)` runs with grad enabled and its outputs reach only `.item()` "
    "(line 27), never a `.backward()`: autograd records the graph and keeps its activations for nothing\n"
    "main.py:40:30: warning: GG103 `model(features)` runs with grad enabled and its outputs reach only `.item()` "
    "(line 40), never a `.backward()`: autograd records the graph and keeps its activations for nothing\n"
    "Found 2 findings (2 fixable with --fix). 2 files checked.\n"
)


def test_outputs_given_to_another_files_function_go_where_what_it_returns_goes(gradguard, tmp_path):
    """A hand-written model of another file (`net = d2l.linreg`, given the leaves the caller trains) is a
    forward, and outputs given to another file's loss that returns their graph reach only `.item()`: both
    per-epoch losses are evaluations (also read from the cache); one file alone cannot tell."""
    _write(tmp_path, {"utils.py": D2L_UTILS, "main.py": D2L_MAIN})
    assert gradguard("check", ".").stdout == D2L_FOUND
    assert gradguard("check", ".").stdout == D2L_FOUND  # from the cache: the summaries keep what they say
    assert gradguard("check", "--no-cache", "--no-project", ".").stdout == "All checks passed! 2 files checked.\n"


@pytest.mark.parametrize("utils", [
    # it keeps what it is given: no summary says where the graph goes
    D2L_UTILS.replace("    return (y_hat - y.view(y_hat.size())) ** 2 / 2\n",
                      "    SEEN.append(y_hat)\n    return (y_hat - y.view(y_hat.size())) ** 2 / 2\n\n\nSEEN = []\n"),
    # it back-propagates inside
    D2L_UTILS.replace("    return (y_hat - y.view(y_hat.size())) ** 2 / 2\n",
                      "    out = (y_hat - y.view(y_hat.size())) ** 2 / 2\n    out.sum().backward(retain_graph=True)\n    return out\n"),
], ids=["keeps-its-argument", "back-propagates"])
def test_a_loss_of_another_file_that_does_more_with_the_graph_leaves_it_unknown(gradguard, tmp_path, utils):
    _write(tmp_path, {"utils.py": utils, "main.py": D2L_MAIN.replace("model(features)", "model(features + 0)")})
    assert "main.py:40" not in gradguard("check", "--no-cache", ".").stdout


def test_runtime_truth_of_the_evaluations_through_another_file(tmp_path):
    """The per-epoch forwards carry a graph (each the model's), and both models still learn."""
    _write(tmp_path, {"utils.py": D2L_UTILS, "main.py": D2L_MAIN})
    check = (
        "import torch, main, utils\n"
        "seen = []\n"
        "main.net = lambda *a: seen.append(utils.linreg(*a)) or seen[-1]\n"
        "a = main.fit()\n"
        "hooked = []\n"
        "real = torch.nn.Linear.forward\n"
        "torch.nn.Linear.forward = lambda self, x: hooked.append(real(self, x)) or hooked[-1]\n"
        "b = main.fit_pytorch()\n"
        "print(seen[-1].grad_fn is not None, hooked[-1].grad_fn is not None, a[0] > a[-1], b[0] > b[-1])\n"
    )
    run = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.stdout == "True True True True\n", run.stderr

# LanPaint's sampler (tests/corpus GG402/lanpaint_sigmas_copy): the caller passes an object of its own
# class, whose `sigmas` is a tensor; the sampler copies it with `torch.tensor(...)`.
SAMPLER = """\
import torch


class InpaintSampler:
    def __init__(self, model_sampling):
        self.model_sampling = model_sampling

    def schedule(self, sigmas):
        return torch.cat((torch.zeros(1, device=sigmas.device),
                          torch.tensor(self.model_sampling.sigmas, device=sigmas.device)))
"""
SAMPLER_MAIN = """\
import torch

from sampler import InpaintSampler


class Sampling:
    sigmas = torch.linspace(0.1, 10.0, 5)


print(InpaintSampler(Sampling()).schedule(torch.ones(3)))
"""


def test_an_object_of_the_callers_own_class_tells_its_tensor_attributes(gradguard, tmp_path):
    """`Sampling()`, of a class main.py defines, is passed with what its tensor attributes are: the
    sampler's `self.model_sampling.sigmas` is a tensor, and `torch.tensor()` of it copies it."""
    _write(tmp_path, {"sampler.py": SAMPLER, "main.py": SAMPLER_MAIN})
    assert gradguard("check", "--no-cache", ".").stdout == (
        "sampler.py:10:27: warning: GG402 `self.model_sampling.sigmas` is already a tensor: `torch.tensor()` copies "
        "it and warns \"To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()\"; "
        "use `self.model_sampling.sigmas.clone()...`\n"
        "Found 1 finding (1 fixable with --fix). 2 files checked.\n")


def test_an_attribute_that_is_a_list_tells_nothing(gradguard, tmp_path):
    _write(tmp_path, {"sampler.py": SAMPLER,
                      "main.py": SAMPLER_MAIN.replace("torch.linspace(0.1, 10.0, 5)", "[0.1, 2.5, 10.0]")})
    assert gradguard("check", "--no-cache", ".").stdout == "All checks passed! 2 files checked.\n"


def test_runtime_truth_of_the_sampling_object(tmp_path):
    """With the tensor, the copy warns; with the list, it does not."""
    _write(tmp_path, {"sampler.py": SAMPLER, "main.py": SAMPLER_MAIN})
    run = [sys.executable, "-W", "error::UserWarning", "main.py"]
    assert "To copy construct from a tensor" in subprocess.run(run, cwd=tmp_path, capture_output=True, text=True,
                                                               timeout=120).stderr
    (tmp_path / "main.py").write_text(SAMPLER_MAIN.replace("torch.linspace(0.1, 10.0, 5)", "[0.1, 2.5, 10.0]"))
    assert subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120).returncode == 0
