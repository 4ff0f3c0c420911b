"""Project-wide analysis in the server: an open file knows how the other files of its project call it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from ganpkg_sources import CLIENT, FIT, NET, SAMPLE, SERVER, SHOW, UNIT
from lsp_harness import Client, diag, initialize

pytestmark = pytest.mark.asyncio

OPTIONS = {"select": ["GG401"], "debounceMs": 0}
SAMPLE_WITH_GRAD = SAMPLE.replace("@torch.no_grad()\n", "")

AT = diag((14, 15, 14, 38))  # `self.forward(z).numpy()`
NUMPY = "\"Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.\""
ALONE = (
    "`self.forward(z)` requires grad when `generate()` runs with grad enabled (from `self.fc(z)` on line 11); "
    f"`.numpy()` on it then raises {NUMPY}"
)
# With the caller's no_grad gone, main() - run by the script - proves the crash: an error, and why.
PROVED = (
    f"`self.forward(z)` requires grad (from `self.fc(z)` on line 11); `.numpy()` on it raises {NUMPY} "
    "(`generate()` is called with grad on: ganpkg/sample.py line 8, in `main()`)"
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


async def start(client: Client, package: Path, **options) -> None:
    """initialize with the package as the workspace; wait until it is indexed."""
    await initialize(client, options={**OPTIONS, **options}, root=package)
    await client.wait_until(lambda: indexed(client), "the index")


def indexed(client: Client) -> bool:
    return any(m.message.startswith("GradGuard indexed") for m in client.log_messages)


def summary(diagnostics: list[types.Diagnostic]) -> list[tuple]:
    return [(d.code, d.range, d.severity, d.message) for d in diagnostics]


async def next_publish(client: Client, uri: str, after: int) -> list[types.Diagnostic]:
    """The diagnostics of the first publish for `uri` after the first `after` ones."""
    found = await client.wait_until(lambda: client.publishes(uri)[after:], f"a new publish of {uri}")
    return list(found[0].diagnostics)


async def test_the_workspace_is_indexed_in_the_background_with_progress(client: Client, package: Path):
    await start(client, package)
    [(token, reports)] = client.progress_reports.items()
    begin, *middle, end = reports
    assert (token, begin.kind, begin.title, begin.percentage) == ("gradguard/index", "begin", "GradGuard: indexing", 0)
    assert [r.message for r in middle] == [f"{n}/4 files" for n in range(1, 5)]
    assert (end.kind, end.message) == ("end", "4 files")
    [watch] = client.registrations
    assert watch.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    assert watch.register_options == {"watchers": [{"globPattern": "**/*.py"}]}
    assert client.published == []  # nothing published for files not open


async def test_a_method_called_only_under_no_grad_in_another_file_is_silent(client: Client, package: Path):
    await start(client, package)
    net = (package / "ganpkg/models/net.py").as_uri()
    client.open(net, NET)
    assert await client.diagnostics_for(net) == []


async def test_editing_the_caller_reports_the_callee_without_touching_it(client: Client, package: Path):
    await start(client, package)
    net, sample = (package / "ganpkg/models/net.py").as_uri(), (package / "ganpkg/sample.py").as_uri()
    client.open(net, NET)
    assert await client.diagnostics_for(net) == []
    client.open(sample, SAMPLE)
    assert await client.diagnostics_for(sample) == []
    before = len(client.publishes(net))
    client.replace(sample, SAMPLE_WITH_GRAD)  # not saved: the buffer is the truth
    [found] = await next_publish(client, net, before)
    assert summary([found]) == [("GG401", AT, types.DiagnosticSeverity.Error, PROVED)]
    at = types.Position(7, 12)  # `generate` of `print(g.generate(4))`, in the edited buffer
    assert found.related_information[1] == types.DiagnosticRelatedInformation(
        types.Location(sample, types.Range(at, at)), "`generate()` is called here, with grad on")
    [edited] = [i for i, p in enumerate(client.published) if p.uri == sample and p.version == 2]
    [callee] = [i for i, p in enumerate(client.published) if p.uri == net][before:]
    assert edited < callee  # the edited document's own diagnostics come first
    before = len(client.publishes(net))
    client.replace(sample, SAMPLE)
    assert await next_publish(client, net, before) == []
    assert (package / "ganpkg/models/net.py").read_text() == NET


async def test_closing_an_unsaved_caller_makes_the_disk_the_truth_again(client: Client, package: Path):
    await start(client, package)
    net, sample = (package / "ganpkg/models/net.py").as_uri(), (package / "ganpkg/sample.py").as_uri()
    client.open(net, NET)
    assert await client.diagnostics_for(net) == []
    client.open(sample, SAMPLE_WITH_GRAD)  # an unsaved edit: the disk still has the no_grad
    assert summary(await next_publish(client, net, 1)) == [("GG401", AT, types.DiagnosticSeverity.Error, PROVED)]
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(sample)))
    assert await next_publish(client, net, 2) == []


async def test_a_caller_changed_on_disk_reports_the_callee(client: Client, package: Path):
    await start(client, package)
    net, sample = package / "ganpkg/models/net.py", package / "ganpkg/sample.py"
    client.open(net.as_uri(), NET)
    assert await client.diagnostics_for(net.as_uri()) == []

    def changed() -> None:
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            [types.FileEvent(sample.as_uri(), types.FileChangeType.Changed)]
        ))

    sample.write_text(SAMPLE_WITH_GRAD)
    changed()
    assert summary(await next_publish(client, net.as_uri(), 1)) == [("GG401", AT, types.DiagnosticSeverity.Error, PROVED)]
    sample.write_text(SAMPLE)
    changed()
    assert await next_publish(client, net.as_uri(), 2) == []


async def test_a_caller_deleted_on_disk_leaves_the_callee_alone(client: Client, package: Path):
    """Nothing else calls generate(): the file is analysed as it is alone."""
    await start(client, package)
    net, sample = package / "ganpkg/models/net.py", package / "ganpkg/sample.py"
    client.open(net.as_uri(), NET)
    assert await client.diagnostics_for(net.as_uri()) == []
    sample.unlink()
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(sample.as_uri(), types.FileChangeType.Deleted)]
    ))
    assert summary(await next_publish(client, net.as_uri(), 1)) == [("GG401", AT, types.DiagnosticSeverity.Warning, ALONE)]


async def test_the_project_setting_off_analyses_each_file_alone(client: Client, package: Path):
    await initialize(client, options={**OPTIONS, "project": False}, root=package)
    net = (package / "ganpkg/models/net.py").as_uri()
    client.open(net, NET)
    assert summary(await client.diagnostics_for(net)) == [("GG401", AT, types.DiagnosticSeverity.Warning, ALONE)]
    assert client.progress_reports == {} and client.registrations == []


async def test_turning_the_project_setting_on_indexes_the_workspace(client: Client, package: Path):
    await initialize(client, options={**OPTIONS, "project": False}, configurable=False, root=package)
    net = (package / "ganpkg/models/net.py").as_uri()
    client.open(net, NET)
    assert summary(await client.diagnostics_for(net)) == [("GG401", AT, types.DiagnosticSeverity.Warning, ALONE)]
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"gradguard": OPTIONS}))
    # re-published at once as it is alone (the index is not ready yet), then once it is ready
    await client.wait_until(lambda: indexed(client) and client.publishes(net)[-1].diagnostics == [], "net.py told by sample.py")


VIZ = """\
import torch
from torch import nn


def render(n):
    layer = nn.Linear(8, 4)
    return layer(torch.randn(n, 8)).numpy()
"""
# net.py, which sample.py's calls tell, now calls render() only under no_grad
NET_PREVIEWING = "from ganpkg.viz import render\n" + NET + "\n\n@torch.no_grad()\ndef preview():\n    return render(2)\n"


async def test_a_file_told_by_others_tells_its_own_callees_after_its_publish(client: Client, package: Path):
    """net.py's analysis is shaped by sample.py's calls: what it calls itself comes from an analysis
    of its own, told nothing, after its diagnostics are published."""
    (package / "ganpkg/viz.py").write_text(VIZ)
    await start(client, package)
    net, viz = (package / "ganpkg/models/net.py").as_uri(), (package / "ganpkg/viz.py").as_uri()
    client.open(viz, VIZ)
    render_alone = (
        "`layer(torch.randn(n, 8))` requires grad when `render()` runs with grad enabled; "
        f"`.numpy()` on it then raises {NUMPY}"
    )
    assert summary(await client.diagnostics_for(viz)) == [
        ("GG401", diag((6, 11, 6, 43)), types.DiagnosticSeverity.Warning, render_alone)
    ]
    client.open(net, NET)
    assert await client.diagnostics_for(net) == []
    client.replace(net, NET_PREVIEWING)
    assert await client.diagnostics_for(net) == []
    assert await next_publish(client, viz, 1) == []


async def test_a_caller_created_on_disk_that_disagrees_leaves_the_callee_reported(client: Client, package: Path):
    await start(client, package)
    net, show = package / "ganpkg/models/net.py", package / "ganpkg/show.py"
    client.open(net.as_uri(), NET)
    assert await client.diagnostics_for(net.as_uri()) == []
    show.write_text("import torch\n\nfrom ganpkg.models.net import Generator\n\n\ndef show():\n    print(Generator().generate(2))\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(show.as_uri(), types.FileChangeType.Created)]
    ))
    assert summary(await next_publish(client, net.as_uri(), 1)) == [("GG401", AT, types.DiagnosticSeverity.Warning, ALONE)]


async def test_fix_all_makes_no_fix_for_what_the_project_takes_away(client: Client, package: Path):
    await start(client, package)
    net = (package / "ganpkg/models/net.py").as_uri()
    client.open(net, NET)
    assert await client.diagnostics_for(net) == []
    fix_all = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=net), range=AT,
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"]),
    ))
    assert fix_all is None


METER = """\
class AverageMeter:
    def __init__(self):
        self.sum = 0.0

    def update(self, val):
        self.sum += val
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
        loss = F.mse_loss(model(torch.randn(16, 8)), torch.zeros(16, 4))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.update(loss)
    return losses.sum
"""
KEPT = (
    "`loss` carries an autograd graph; `.backward()` on line 15 freed its activations, but storing it in "
    "`losses.sum` (through `update()`) keeps the graph's nodes alive across iterations"
)


async def test_what_a_class_of_another_file_keeps_is_a_store_and_follows_its_buffer(client: Client, package: Path):
    """utils.py never mentions torch; its meter keeps what it is given: train.py's loop stores the
    graph through it - until an unsaved edit of utils.py keeps a number instead."""
    (package / "ganpkg/utils.py").write_text(METER)
    (package / "ganpkg/train.py").write_text(TRAIN)
    await start(client, package, select=["GG101"])
    train, utils = (package / "ganpkg/train.py").as_uri(), (package / "ganpkg/utils.py").as_uri()
    client.open(train, TRAIN)
    assert summary(await client.diagnostics_for(train)) == [
        ("GG101", diag((16, 22, 16, 26)), types.DiagnosticSeverity.Warning, KEPT)]
    client.open(utils, METER)
    before = len(client.publishes(train))
    client.replace(utils, METER.replace("self.sum += val", "self.sum += float(val)"))
    assert await next_publish(client, train, before) == []


PASSED = (
    "`scalar` requires grad: `scalar_to_float(data)` on line 16 passes `data` (from "
    f"`nn.functional.mse_loss(self.module(...` on line 27); `.numpy()` on it raises {NUMPY}"
)


async def test_what_another_file_passes_a_constructor_follows_its_buffer(client: Client, package: Path):
    """unit.py alone says nothing (its `logger` could be anything); fit.py builds the unit with the logger
    whose helper converts the loss: unit.py's error appears - and goes when an unsaved edit of fit.py
    passes `print` instead, without unit.py being touched."""
    (package / "ganpkg/unit.py").write_text(UNIT)
    (package / "ganpkg/fit.py").write_text(FIT)
    await start(client, package)
    unit, fit = (package / "ganpkg/unit.py").as_uri(), (package / "ganpkg/fit.py").as_uri()
    client.open(unit, UNIT)
    assert summary(await client.diagnostics_for(unit)) == [
        ("GG401", diag((7, 17, 7, 37)), types.DiagnosticSeverity.Error, PASSED)]
    client.open(fit, FIT)
    before = len(client.publishes(unit))
    client.replace(fit, FIT.replace("InMemoryLogger()", "print"))
    assert await next_publish(client, unit, before) == []
    assert (package / "ganpkg/unit.py").read_text() == UNIT


async def hover_at(client: Client, uri: str, text: str, needle: str) -> str | None:
    line = text[: text.index(needle)].count("\n")
    column = text.index(needle) - text.rfind("\n", 0, text.index(needle)) - 1
    found = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, column + 1)))
    return found.contents.value if found is not None else None


async def test_a_hover_on_a_name_says_which_file_told_what_it_is(client: Client, package: Path):
    """The unit's logger is what fit.py builds the unit with; show.py's model is what the factory of
    models/net.py returns. Names nothing in another file speaks of get no hover."""
    (package / "ganpkg/unit.py").write_text(UNIT)
    (package / "ganpkg/fit.py").write_text(FIT)
    (package / "ganpkg/show.py").write_text(SHOW)
    await start(client, package, select=["GG401", "GG103"])
    unit, show = (package / "ganpkg/unit.py").as_uri(), (package / "ganpkg/show.py").as_uri()
    client.open(unit, UNIT)
    await client.diagnostics_for(unit)
    assert await hover_at(client, unit, UNIT, "logger.log(") == (
        "**Here:** `self.logger` is a `InMemoryLogger` (passed by ganpkg/fit.py line 9, in `fit()`)")
    assert await hover_at(client, unit, UNIT, "step += 1") is None
    client.open(show, SHOW)
    await client.diagnostics_for(show)
    assert await hover_at(client, show, SHOW, "model.load_state_dict") == (
        "**Here:** `model` is an `nn.Module` (`create_model` returns an nn.Module (ganpkg/models/net.py) on line 7)")


STORED = (
    "`loss` carries an autograd graph (from `self.criterion(self.model(x), y)` on line 14 of ganpkg/users.py) "
    "that is never back-propagated; storing it in `losses` keeps every saved activation alive across iterations"
)


async def test_an_imported_class_tells_what_its_method_returns_and_follows_its_buffer(client: Client, package: Path):
    """server.py keeps what `Client.test()` of users.py returns: a graph - until an unsaved edit of
    users.py returns a number."""
    (package / "ganpkg/users.py").write_text(CLIENT)
    (package / "ganpkg/server.py").write_text(SERVER)
    await start(client, package, select=["GG101"])
    server, users = (package / "ganpkg/server.py").as_uri(), (package / "ganpkg/users.py").as_uri()
    client.open(server, SERVER)
    assert summary(await client.diagnostics_for(server)) == [
        ("GG101", diag((9, 22, 9, 26)), types.DiagnosticSeverity.Error, STORED)]
    client.open(users, CLIENT)
    before = len(client.publishes(server))
    client.replace(users, CLIENT.replace("return loss, len", "return loss.item(), len"))
    assert await next_publish(client, server, before) == []


def saved(client: Client, uri: str) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))


def logged(client: Client, message: str) -> bool:
    return any(m.message == message for m in client.log_messages)


async def test_a_dependent_follows_what_the_edit_says_at_once_and_only_when_it_changed(client: Client, package: Path):
    """A debounce of a minute: an edit of sample.py is analysed when it is saved. net.py, which sample.py's
    calls tell, is re-analysed for what they now say without a debounce of its own (nor a wait for the
    typing to pause) - and not for an edit that changes nothing sample.py says of the other files."""
    await start(client, package, debounceMs=60_000)
    net, sample = (package / "ganpkg/models/net.py").as_uri(), (package / "ganpkg/sample.py").as_uri()
    client.open(net, NET)
    assert await client.diagnostics_for(net) == []
    client.open(sample, SAMPLE)
    assert await client.diagnostics_for(sample) == []
    client.replace(sample, SAMPLE.replace("g.generate(4)", "g.generate(5)"))  # a number: the same calls
    saved(client, sample)
    assert await client.diagnostics_for(sample) == []
    await client.wait_until(lambda: logged(client, "GradGuard: ganpkg/sample.py v2: what it says of the other files is unchanged"),
                            "sample.py v2 learned")
    client.replace(sample, SAMPLE_WITH_GRAD)
    saved(client, sample)
    assert await client.diagnostics_for(sample) == []
    [found] = await next_publish(client, net, 1)
    assert summary([found]) == [("GG401", AT, types.DiagnosticSeverity.Error, PROVED)]
    assert logged(client, "GradGuard: ganpkg/sample.py v3: what it says of the other files changed")
    assert [p.version for p in client.publishes(net)] == [1, 1]  # opened, then told of v3's call with grad on


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
GROWS = ("`last` carries the previous step's graph into `attention(last)` with grad enabled and nothing "
         "back-propagates it: the graph grows with every step of the loop on line 18; run the loop under "
         "`torch.no_grad()`")


async def test_a_caller_that_never_mentions_torch_tells_what_it_passes_and_follows_its_buffer(client: Client, tmp_path: Path):
    """main.py never mentions torch; it builds the project's attention and hands it to `align_frames()`
    (as `gradguard check` reads it, tests/cli/test_project.py): attention.py's GG102 appears, and goes
    when an unsaved edit of main.py passes a plain function instead."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0.1"\n')
    (tmp_path / "attention.py").write_text(ATTENTION)
    (tmp_path / "main.py").write_text(ATTENTION_MAIN)
    await start(client, tmp_path, select=["GG102"])
    attention, main = (tmp_path / "attention.py").as_uri(), (tmp_path / "main.py").as_uri()
    client.open(attention, ATTENTION)
    assert summary(await client.diagnostics_for(attention)) == [
        ("GG102", diag((18, 25, 18, 29)), types.DiagnosticSeverity.Warning, GROWS)]
    client.open(main, ATTENTION_MAIN)
    before = len(client.publishes(attention))
    client.replace(main, ATTENTION_MAIN.replace("LocationAttention(hidden_size=8)", "abs"))
    assert await next_publish(client, attention, before) == []


# The PyTorch FAQ's `total_loss += loss` across two modules (tests/cli/test_project.py): fit.py never
# mentions torch, and keeps what engine.py's `one_step()` returns after back-propagating it.
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
KEPT_ACROSS_FILES = (
    "`one_step(net, opt, x, y)` carries an autograd graph; `.backward()` in `one_step()` (engine.py line 17) "
    "freed its activations, but storing it in `history` keeps the graph's nodes alive across iterations"
)


async def test_a_caller_without_torch_has_its_own_diagnostics_and_follows_what_its_callee_returns(
        client: Client, tmp_path: Path):
    """fit.py never mentions torch, but calls engine.py's functions: it is checked as `gradguard check`
    checks it, and its GG101 goes when an unsaved edit of engine.py returns `loss.item()`."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0.1"\n')
    (tmp_path / "engine.py").write_text(STEP_ENGINE)
    (tmp_path / "fit.py").write_text(STEP_FIT)
    await start(client, tmp_path, select=["GG101"])
    fit, engine = (tmp_path / "fit.py").as_uri(), (tmp_path / "engine.py").as_uri()
    client.open(fit, STEP_FIT)
    assert summary(await client.diagnostics_for(fit)) == [
        ("GG101", diag((8, 23, 8, 47)), types.DiagnosticSeverity.Warning, KEPT_ACROSS_FILES)]
    client.open(engine, STEP_ENGINE)
    before = len(client.publishes(fit))
    client.replace(engine, STEP_ENGINE.replace("    return loss\n", "    return loss.item()\n"))
    assert await next_publish(client, fit, before) == []
