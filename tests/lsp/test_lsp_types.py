"""The type layer in the server: syntactic diagnostics first, then the same version
re-published with what jedi knows (a model class from another file of the workspace);
hovers show the resolved type. Real jedi, real torch, over stdio."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_harness import Client, apply, edits_of, initialize
from test_lsp_code_actions import actions_for
from test_lsp_hover import hover

pytestmark = pytest.mark.asyncio

WORKSPACE = Path(__file__).resolve().parents[1] / "typelayer" / "workspace"
COLD_JEDI_S = 180  # jedi's first inference reads torch: seconds on a quiet machine, more on a busy one
LEAK = (
    "`out` carries an autograd graph (from `model(x)` on line 10) that is never back-propagated; "
    "storing it in `outputs` keeps every saved activation alive across iterations"
)


async def wait(client: Client, predicate, timeout: float = COLD_JEDI_S):
    async with asyncio.timeout(timeout):
        while not (result := predicate()):
            client.event.clear()
            await client.event.wait()
        return result


async def test_refined_publish_of_the_same_version_then_typed_hover(client: Client):
    await initialize(client, options={"debounceMs": 0, "types": True}, root=WORKSPACE)
    path = WORKSPACE / "train.py"
    uri = path.as_uri()
    client.open(uri, path.read_text())
    publishes = await wait(client, lambda: len(client.publishes(uri)) >= 2 and client.publishes(uri))
    first, refined = publishes[0], publishes[1]
    assert (first.version, first.diagnostics) == (1, [])  # syntax alone: `model` could be anything
    assert refined.version == 1
    assert [(d.code, d.range, d.message) for d in refined.diagnostics] == [
        ("GG101", types.Range(types.Position(10, 23), types.Position(10, 26)), LEAK)
    ]
    result = await hover(client, uri, types.Position(7, 12))  # model.requires_grad_(True)
    text = result.contents.value
    assert "`model` is `models.net.Net` (an nn.Module, from `models/net.py`)" in text
    assert "resolves to `torch.nn.Module.requires_grad_`" in text  # torch's public name, not its module path


async def test_types_off_publishes_each_version_once(client: Client):
    await initialize(client, options={"debounceMs": 0}, root=WORKSPACE)
    path = WORKSPACE / "train.py"
    uri = path.as_uri()
    client.open(uri, path.read_text())
    assert await client.diagnostics_for(uri) == []
    client.replace(uri, path.read_text() + "\n")
    assert await client.diagnostics_for(uri) == []
    assert [p.version for p in client.publishes(uri)] == [1, 2]


TYPED_FIXES = '''\
import torch

from models.net import Net


def collect(model, loader):
    outputs, norms, seen = [], [], []
    for x in loader:
        out = model(x)
        outputs.append(out)
        norms.append(out.norm())
        y = torch.randn(2, 4, requires_grad=True) * 2
        seen.append(y)
    return outputs, norms, seen


collect(Net(), [torch.randn(2, 4)])
'''


async def test_fix_all_uses_the_type_layer_and_applies_every_safe_fix(client: Client, tmp_path):
    """Fix-all sees what the diagnostics see: two of the three findings need jedi (`model` is
    a `Net`); all three safe fixes are applied, the unsafe `.item()` alternative never."""
    shutil.copytree(WORKSPACE / "models", tmp_path / "models")
    path = tmp_path / "train.py"
    path.write_text(TYPED_FIXES)
    await initialize(client, options={"debounceMs": 0, "types": True, "select": ["GG101"]}, root=tmp_path)
    uri = path.as_uri()
    client.open(uri, TYPED_FIXES)
    publishes = await wait(client, lambda: len(client.publishes(uri)) >= 2 and client.publishes(uri))
    assert [d.range.start.line + 1 for d in publishes[0].diagnostics] == [13]  # syntax alone
    refined = publishes[1].diagnostics
    assert [d.range.start.line + 1 for d in refined] == [10, 11, 13]
    titles = [a.title for d in refined for a in await actions_for(client, uri, [d], only=[types.CodeActionKind.QuickFix])]
    assert titles == [
        "Store `out.detach()`", "Ignore GG101 on this line",
        "Store `out.norm().detach()`", "Store `out.norm().detach().item()` (unsafe)", "Ignore GG101 on this line",
        "Store `y.detach()`", "Ignore GG101 on this line",
    ]
    (fix_all,) = await actions_for(client, uri, [], only=["source.fixAll"], at=refined[0].range)
    fixed = apply(TYPED_FIXES, edits_of(fix_all.edit, uri))
    assert fixed == (
        TYPED_FIXES.replace("outputs.append(out)", "outputs.append(out.detach())")
        .replace("norms.append(out.norm())", "norms.append(out.norm().detach())")
        .replace("seen.append(y)", "seen.append(y.detach())")
    )
    # Nothing is left to fix: the fixed text has no finding with or without types.
    version = client.replace(uri, fixed)
    assert await client.diagnostics_for(uri, version) == []
    assert await actions_for(client, uri, [], only=["source.fixAll"], at=refined[0].range) == []


# ---------------------------------------------------------------- an interpreter without torch
@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Path:
    """A virtual environment without torch (nor pip): the user's Python the client passes."""
    import subprocess
    import sys

    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv / "bin" / "python"


async def test_a_torchless_interpreter_finds_the_leak_through_the_stubs(client: Client, bare):
    await initialize(client, options={"debounceMs": 0, "types": True, "interpreter": str(bare)}, root=WORKSPACE)
    path = WORKSPACE / "train.py"
    uri = path.as_uri()
    client.open(uri, path.read_text())
    publishes = await wait(client, lambda: len(client.publishes(uri)) >= 2 and client.publishes(uri))
    assert [(d.code, d.message) for d in publishes[1].diagnostics] == [("GG101", LEAK)]
    note = f"GradGuard types: no torch in {bare}; nn.Module from GradGuard's bundled torch stubs"
    await wait(client, lambda: any(m.message == note for m in client.log_messages))
    assert client.messages == []  # nothing to warn about: the stubs resolve nn.Module


async def test_an_interpreter_jedi_cannot_use_is_said_once(client: Client, tmp_path):
    fake = tmp_path / "not-python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    await initialize(client, options={"debounceMs": 0, "types": True, "interpreter": str(fake)}, root=WORKSPACE)
    path = WORKSPACE / "train.py"
    uri = path.as_uri()
    client.open(uri, path.read_text())
    shown = await wait(client, lambda: client.messages)
    said = f"GradGuard: types are off: jedi cannot use {fake} (InvalidPythonEnvironment)"
    assert [(m.type, m.message) for m in shown] == [(types.MessageType.Warning, said)]
    assert [m.message for m in client.log_messages if m.message == said] == [said]
    await asyncio.sleep(1)
    assert len(client.messages) == 1
    assert await client.diagnostics_for(uri) == []  # syntax alone


async def test_a_torch_jedi_cannot_read_is_shown_once(client: Client, tmp_path):
    """An interpreter whose torch is an empty package: jedi finds torch (so no stubs) and no nn.Module."""
    import subprocess
    import sys

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    torch = next((venv / "lib").glob("python*/site-packages")) / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text("")
    python = venv / "bin" / "python"
    await initialize(client, options={"debounceMs": 0, "types": True, "interpreter": str(python)}, root=WORKSPACE)
    said = (
        f"GradGuard: types are on but jedi cannot resolve torch.nn.Module with {python} (its torch at {torch}): "
        "nn.Module subclasses from other files cannot be recognised"
    )
    shown = await wait(client, lambda: client.messages)
    assert [(m.type, m.message) for m in shown] == [(types.MessageType.Warning, said)]
    assert [m.message for m in client.log_messages if m.message == said] == [said]
    await asyncio.sleep(1)
    assert len(client.messages) == 1


async def test_hovers_name_torch_public_api():
    from gradguard.lsp.types import public_name

    assert public_name("torch._C._VariableFunctions.tensor") == "torch.tensor"
    assert public_name("torch._C.TensorBase.detach") == "torch.Tensor.detach"
    assert public_name("torch._tensor.Tensor.clone") == "torch.Tensor.clone"
    assert public_name("torch.nn.modules.module.Module.eval") == "torch.nn.Module.eval"
    assert public_name("torch._C._TensorBase.__setstate__") == "torch.Tensor.__setstate__"
    assert public_name("torch._dynamo.eval_frame.x") is None  # another private name: said nothing
    assert public_name("numpy.ndarray.copy") == "numpy.ndarray.copy"


async def test_an_attribute_a_method_assigns_is_named_on_its_class():
    # jedi names `x.data` after where torch assigns it (`self.data = ...` in Tensor.__setstate__):
    # the hover says `torch.Tensor.data`, as users write it; a method's local keeps its own name.
    import sys

    import jedi

    from gradguard.lsp.types import dotted_name, public_name

    source = (
        "import torch\nx = torch.randn(3)\ny = x.data\nz = torch.tensor([1.0])\nq = x.requires_grad\n"
        "class A:\n    def __init__(self):\n        self.w = 1\n    def f(self):\n        loc = 2\n        return loc\n"
        "A().w\n"
    )
    script = jedi.Script(source, path="/tmp/hover_names.py", environment=jedi.create_environment(sys.executable, safe=False))

    def named(line, column):
        return [public_name(dotted_name(n)) for n in script.goto(line, column)]

    assert named(3, 7) == ["torch.Tensor.data"]  # jedi: torch._tensor.Tensor.__setstate__.data
    assert named(4, 11) == ["torch.tensor"]  # jedi: torch._C._VariableFunctions.tensor
    assert named(5, 7) == ["torch.Tensor.requires_grad"]
    assert named(12, 5) == ["hover_names.A.w"]
    assert named(11, 16) == ["hover_names.A.f.loc"]
