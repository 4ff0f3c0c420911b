"""Drive the GradGuard language server over stdio like an editor and report
change-to-diagnostics latency, hover latency and the server's memory.

    .venv/bin/python bench/lsp_latency.py [--edits 20] [--hovers 40]
    .venv/bin/python bench/lsp_latency.py --types    # the jedi type layer
    .venv/bin/python bench/lsp_latency.py --project  # project-wide analysis (the `project` setting)

Files of 500, 2,000 and 10,000 lines of realistic training code are generated
from varied training-loop functions, opened one after another in one server
(they stay open, as in an editor), edited (one small change at a time, waiting
for its diagnostics; debounceMs 0, so the debounce is not measured: a number
changed, a line typed into a loop body and deleted again, the first line
edited) and hovered. The target: change-to-diagnostics p95 on the 2,000-line file within
1.5x that file's `libcst.parse_module` time measured in this run; hover p95
under 50 ms; RSS under 150 MB. A benchmark, not a timed test: it only prints.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import libcst
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from gradguard.engine import analyze

SIZES = (500, 2_000, 10_000)
IDLE_S = 6.0  # a pause before the second round of hovers, as when reading code

HEADER = """\
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

"""

# One group of functions; {i} and the numbers vary so no two groups are identical.
GROUP = '''
def train_epoch_{i}(model, loader, optimizer, criterion, device="cpu"):
    model.train()
    running_loss = 0.0
    losses = []
    for step, (inputs, targets) in enumerate(loader):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), {clip})
        optimizer.step()
        running_loss += loss.item()
        losses.append(loss)
        if step % {every} == 0:
            print(f"step {{step}}: {{running_loss / (step + 1):.4f}}")
    return running_loss / max(len(loader), 1), losses


def evaluate_{i}(model, loader, criterion):
    model.eval()
    total, correct = 0, 0
    predictions = []
    for inputs, targets in loader:
        logits = model(inputs)
        loss = criterion(logits, targets)
        predictions.append(logits)
        correct += (logits.argmax(1) == targets).sum().item()
        total += targets.size(0)
    return correct / max(total, 1), predictions


class Seq2Seq{i}(nn.Module):
    def __init__(self, vocab={vocab}, hidden={hidden}):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, state=None):
        out, state = self.rnn(self.embed(tokens), state)
        return self.head(out), state


def train_lm_{i}(model, batches, optimizer):
    state = None
    history = {{"loss": []}}
    for tokens, targets in batches:
        logits, state = model(tokens, state)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history["loss"].append(loss.detach().item())
    return history


def gan_step_{i}(generator, discriminator, g_opt, d_opt, real, z_dim={z}):
    z = torch.randn(real.size(0), z_dim)
    fake = generator(z)
    ones, zeros = torch.ones(real.size(0), 1), torch.zeros(real.size(0), 1)
    d_loss = F.binary_cross_entropy_with_logits(discriminator(real), ones) + F.binary_cross_entropy_with_logits(
        discriminator(fake.detach()), zeros
    )
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()
    g_loss = F.binary_cross_entropy_with_logits(discriminator(fake), ones)
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
    return d_loss.item(), g_loss.item()


@torch.no_grad()
def ema_update_{i}(target, source, decay={decay}):
    for t, s in zip(target.parameters(), source.parameters()):
        t.mul_(decay).add_(s.detach(), alpha=1 - decay)


net_{i} = nn.Sequential(nn.Linear({d}, {h}), nn.ReLU(), nn.Linear({h}, 3))
opt_{i} = torch.optim.SGD(net_{i}.parameters(), lr={lr})
data_{i} = [(torch.randn(8, {d}), torch.randint(0, 3, (8,))) for _ in range(4)]
train_epoch_{i}(net_{i}, data_{i}, opt_{i}, nn.CrossEntropyLoss())
evaluate_{i}(net_{i}, data_{i}, nn.CrossEntropyLoss())
snapshot_{i} = net_{i}(data_{i}[0][0]).detach().clone()
'''


def training_code(lines: int) -> str:
    """About `lines` lines (whole groups, then cut at a top-level statement)."""
    parts, i = [HEADER], 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(
            GROUP.format(
                i=i, clip=1 + i % 5, every=10 + i % 7, vocab=100 + i, hidden=32 + 8 * (i % 4), z=16 + i % 3,
                decay=f"0.99{i % 10}", d=4 + i % 6, h=16 + 4 * (i % 5), lr=f"0.0{1 + i % 9}",
            )
        )
        i += 1
    text = "".join(parts).split("\n")[:lines]
    while True:  # drop lines until the cut is not inside a block, bracket or decorator
        try:
            ast.parse("\n".join(text))
            return "\n".join(text) + "\n"
        except SyntaxError:
            text.pop()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def parse_ms(text: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        libcst.parse_module(text)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def analyze_ms(text: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        analyze(text)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


class Editor:
    """A minimal editor: open, edit, hover, and wait for the diagnostics of a version."""

    def __init__(self, options: dict | None = None, root: Path | None = None):
        self.client = LanguageClient("gradguard-bench", "1")
        self.options = {"debounceMs": 0, **(options or {})}
        self.root = root
        self.waiters: dict[tuple[str, int, int], asyncio.Future] = {}
        self.counts: dict[tuple[str, int], int] = {}
        self.seen: dict[tuple[str, int], int] = {}  # publishes per (uri, version): 2 once refined by types
        self.logs: list[str] = []
        self.logged = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams):
            key = (params.uri, params.version)
            self.counts[key] = len(params.diagnostics)
            self.seen[key] = self.seen.get(key, 0) + 1
            waiter = self.waiters.pop((*key, self.seen[key]), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(time.perf_counter())

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def logged(params: types.LogMessageParams):
            self.logs.append(params.message)
            self.logged.set()
            if params.type == types.MessageType.Error:
                print("server error:", params.message, file=sys.stderr)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def shown(params: types.ShowMessageParams):
            print("server message:", params.message, file=sys.stderr)

    async def start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "gradguard.lsp")
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    general=types.GeneralClientCapabilities(position_encodings=["utf-16"])
                ),
                initialization_options=self.options,
                root_uri=self.root.as_uri() if self.root else None,
            )
        )
        self.client.initialized(types.InitializedParams())

    @property
    def pid(self) -> int:
        return self.client._server.pid  # the server subprocess

    def expect(self, uri: str, version: int, nth: int = 1) -> asyncio.Future:
        """The time of the `nth` publish of a version (the second: refined by the type layer)."""
        future = asyncio.get_running_loop().create_future()
        self.waiters[(uri, version, nth)] = future
        return future

    async def open(self, uri: str, text: str) -> float:
        done = self.expect(uri, 1)
        start = time.perf_counter()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
        )
        return (await asyncio.wait_for(done, 600) - start) * 1000

    async def edit(
        self, uri: str, version: int, line: int, start: int, end: int, new: str, end_line: int | None = None
    ) -> float:
        done = self.expect(uri, version)
        t = time.perf_counter()
        end_line = line if end_line is None else end_line
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(types.Position(line, start), types.Position(end_line, end)), text=new
                    )
                ],
            )
        )
        return (await asyncio.wait_for(done, 600) - t) * 1000

    async def hover(self, uri: str, line: int, character: int) -> tuple[float, bool]:
        t = time.perf_counter()
        result = await self.client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line, character))
        )
        return (time.perf_counter() - t) * 1000, result is not None

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process, in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return tuple(int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))


def hover_targets(text: str, count: int) -> list[tuple[int, int]]:
    """Positions on `.detach`, `.item`, `.backward`, `torch.no_grad` ..., spread over the file."""
    found = []
    for n, line in enumerate(text.split("\n")):
        for m in re.finditer(r"\.(detach|item|clone|backward|no_grad)\b", line):
            found.append((n, m.start() + 2))
    step = max(1, len(found) // count)
    return found[::step][:count]


async def run(edits: int, hovers: int) -> None:
    editor = Editor()
    await editor.start()
    rows = []
    try:
        for size in SIZES:
            text = training_code(size)
            uri = Path(f"/tmp/gradguard-bench/train_{size}.py").as_uri()
            open_ms = await editor.open(uri, text)
            lines = text.split("\n")
            # In turn: change the learning rate of a group in the middle of the file; type a
            # new last line into a loop body there, then delete it; edit the file's first line.
            target = next(n for n in range(len(lines) // 2, len(lines)) if "lr=0.0" in lines[n])
            col = lines[target].index("lr=0.0") + len("lr=0.0")
            body_end = next(n for n in range(len(lines) // 2, len(lines)) if "losses.append(loss)" in lines[n]) + 1
            changes = []
            for k in range(edits if size <= 2_000 else max(4, edits // 4)):
                version, kind = k + 2, k % 4
                if kind == 0:
                    changes.append(await editor.edit(uri, version, target, col, col + 1, str(1 + k % 9)))
                elif kind == 1:
                    changes.append(await editor.edit(uri, version, body_end, 0, 0, "        seen = step\n"))
                elif kind == 2:
                    changes.append(await editor.edit(uri, version, body_end, 0, 0, "", end_line=body_end + 1))
                else:
                    changes.append(await editor.edit(uri, version, 0, 0, len("import math"), "import math "[: 11 + k % 2]))
            # Hovers right after the last edit, then after a pause (as when reading code).
            busy_ms, answered = [], 0
            for line, character in hover_targets(text, hovers):
                ms, ok = await editor.hover(uri, line, character)
                busy_ms.append(ms)
                answered += ok
            await asyncio.sleep(IDLE_S)
            hover_ms = []
            for line, character in hover_targets(text, hovers):
                ms, ok = await editor.hover(uri, line, character)
                hover_ms.append(ms)
                answered += ok
            rss, peak = memory_mb(editor.pid)
            rows.append(
                dict(
                    size=len(lines) - 1, parse=parse_ms(text), analyze=analyze_ms(text), open=open_ms,
                    findings=editor.counts.get((uri, 1)), changes=changes, hovers=hover_ms, busy=busy_ms,
                    answered=answered, rss=rss, peak=peak,
                )
            )
    finally:
        await editor.stop()

    print(f"{'lines':>6} {'findings':>8} {'parse':>8} {'analyze':>8} {'open':>8} {'change p50':>10} {'p95':>7} "
          f"{'hover p50':>9} {'p95':>7} {'busy p50':>8} {'p95':>7} {'first':>7} {'RSS MB':>7} {'peak MB':>7}")
    for r in rows:
        print(
            f"{r['size']:>6} {r['findings']:>8} {r['parse']:>6.0f}ms {r['analyze']:>6.0f}ms {r['open']:>6.0f}ms "
            f"{statistics.median(r['changes']):>8.0f}ms {percentile(r['changes'], 0.95):>5.0f}ms "
            f"{statistics.median(r['hovers']):>7.1f}ms {percentile(r['hovers'], 0.95):>5.1f}ms "
            f"{statistics.median(r['busy']):>6.1f}ms {percentile(r['busy'], 0.95):>5.1f}ms "
            f"{r['busy'][0]:>5.0f}ms {r['rss']:>7.0f} {r['peak']:>7.0f}"
        )
    mid = next(r for r in rows if 1_900 <= r["size"] <= 2_100)
    ratio = percentile(mid["changes"], 0.95) / mid["parse"]
    hover_p95 = max(percentile(r["hovers"], 0.95) for r in rows)
    busy_p95 = max(percentile(r["busy"], 0.95) for r in rows)
    print()
    print("parse: libcst.parse_module in this process; analyze: gradguard.engine.analyze in this process;")
    print("hover: after a pause; busy: right after the last edit; first: the first of those.")
    print(f"change-to-diagnostics p95 / parse_module on {mid['size']} lines: {ratio:.2f}x (target <= 1.5x); "
          f"engine analyze alone: {mid['analyze'] / mid['parse']:.2f}x")
    print(f"hover p95 (all sizes): {hover_p95:.1f} ms after a pause, {busy_p95:.1f} ms right after an edit "
          f"(target < 50 ms); answered {sum(r['answered'] for r in rows)}/{2 * sum(len(r['hovers']) for r in rows)}")
    print(f"server RSS: {rows[-1]['rss']:.0f} MB, peak {rows[-1]['peak']:.0f} MB (target < 150 MB)")


def children_rss_mb(pid: int) -> float:
    """RSS of a process's descendants (jedi's worker process and its environment subprocess)."""
    total = 0.0
    for child in Path(f"/proc/{pid}/task").glob("*/children"):
        for cpid in child.read_text().split():
            try:
                total += memory_mb(int(cpid))[0] + children_rss_mb(int(cpid))
            except OSError:
                pass
    return total


async def run_types(edits: int, hovers: int) -> None:
    """The type layer: first (syntactic) and refined diagnostics, hovers, and memory, on a
    500-line script whose models come from another module of the workspace."""
    workspace = Path(tempfile.mkdtemp(prefix="gradguard-types-"))
    shutil.copytree(Path(__file__).resolve().parents[1] / "tests/typelayer/workspace/models", workspace / "models")
    body = training_code(500)
    calls = [f"train_epoch_{i}(Net(), loader, optimizer, criterion)" for i in range(body.count("def train_epoch_"))]
    text = body.replace("import math\n", "import math\nfrom models.net import Net\n", 1) + "\n" + "\n".join(calls) + "\n"
    path = workspace / "train.py"
    path.write_text(text)
    uri = path.as_uri()
    lines = text.split("\n")
    target = next(n for n, line in enumerate(lines) if "lr=0.0" in line)
    col = lines[target].index("lr=0.0") + len("lr=0.0")
    results = {}
    for with_types in (False, True):
        editor = Editor({"types": with_types}, workspace)
        await editor.start()
        try:
            refined = editor.expect(uri, 1, 2) if with_types else None
            start = time.perf_counter()
            first_ms = await editor.open(uri, text)
            cold_ms = (await asyncio.wait_for(refined, 600) - start) * 1000 if refined else None
            firsts, warm = [], []
            for k in range(edits):
                version = k + 2
                second = editor.expect(uri, version, 2) if with_types else None
                t = time.perf_counter()
                firsts.append(await editor.edit(uri, version, target, col, col + 1, str(1 + k % 9)))
                if second is not None:
                    warm.append((await asyncio.wait_for(second, 600) - t) * 1000)
            hover_ms = [(await editor.hover(uri, line, ch))[0] for line, ch in hover_targets(text, hovers)]
            rss = memory_mb(editor.pid)[0]
            results[with_types] = dict(
                first=[first_ms, *firsts], cold=cold_ms, warm=warm, hovers=hover_ms, rss=rss,
                jedi_rss=children_rss_mb(editor.pid), findings=(editor.counts.get((uri, 1)), editor.seen.get((uri, 1))),
            )
        finally:
            await editor.stop()
    off, on = results[False], results[True]
    print(f"type layer on a {len(lines) - 1}-line script using `Net` from models/net.py ({edits} edits, {hovers} hovers)")
    print(f"{'types':>6} {'first p50':>9} {'p95':>7} {'refined cold':>12} {'warm p50':>8} {'p95':>7} "
          f"{'hover p50':>9} {'p95':>7} {'server MB':>9} {'jedi MB':>7}")
    for name, r in (("off", off), ("on", on)):
        cold = f"{r['cold']:>10.0f}ms" if r["cold"] is not None else f"{'-':>12}"
        warm = (f"{statistics.median(r['warm']):>6.0f}ms {percentile(r['warm'], 0.95):>5.0f}ms" if r["warm"]
                else f"{'-':>8} {'-':>7}")
        print(f"{name:>6} {statistics.median(r['first']):>7.0f}ms {percentile(r['first'], 0.95):>5.0f}ms {cold} {warm} "
              f"{statistics.median(r['hovers']):>7.1f}ms {percentile(r['hovers'], 0.95):>5.1f}ms {r['rss']:>9.0f} {r['jedi_rss']:>7.0f}")
    ratio = statistics.median(on["first"]) / statistics.median(off["first"])
    print()
    print(f"first (syntactic) diagnostics with types / without: {ratio:.2f}x (target within 1.10x)")
    if on["warm"]:
        print(f"warm refined diagnostics p95: {percentile(on['warm'], 0.95):.0f} ms (target < 500 ms)")
    print(f"findings v1: without types {off['findings'][0]}, with types {on['findings'][0]} (refined)")


# A package for --project: DEPENDENTS model files (2,000 lines of training code each, and a
# model whose generate() calls .numpy()) and train.py (2,000 lines, and a sample() that calls
# every model's generate() under no_grad): every model file's `outside` comes from train.py.
DEPENDENTS = 20
LINES = 2_000
MODEL = """

class Model{k}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, z):
        return self.fc(z)

    def generate(self, n):
        return self.forward(torch.randn(n, 8)).numpy()
"""
NO_GRAD = "@torch.no_grad()"
PAUSE_S = 1.0  # between the kinds of edits, as when moving to another file


def project_package(root: Path, lines: int) -> tuple[Path, list[Path]]:
    (root / "pkg/models").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0.1"\n')
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/models/__init__.py").write_text("")
    models = []
    for k in range(DEPENDENTS):
        models.append(root / f"pkg/models/m{k}.py")
        models[-1].write_text(training_code(lines) + MODEL.format(k=k))
    imports = "".join(f"from pkg.models.m{k} import Model{k}\n" for k in range(DEPENDENTS))
    calls = "".join(f"    model_{k} = Model{k}()\n    print(model_{k}.generate(4))\n" for k in range(DEPENDENTS))
    train = root / "pkg/train.py"
    train.write_text(imports + training_code(lines) + f"\n\n{NO_GRAD}\ndef sample():\n{calls}")
    return train, models


async def run_project(edits: int) -> None:
    """The edited file's change-to-diagnostics with the `project` setting off and on; with it on,
    the time from an edit of train.py that removes (or restores) its no_grad to the re-publish of
    an open model file, and from an edit of a model file (told by train.py) to its own diagnostics."""
    results = {}
    with tempfile.TemporaryDirectory(prefix="gradguard-project-") as tmp:
        train, models = project_package(Path(tmp), LINES)
        for on in (False, True):
            editor = Editor({"project": on}, root=Path(tmp))
            await editor.start()
            try:
                t = time.perf_counter()
                if on:
                    while not any(m.startswith("GradGuard indexed") for m in editor.logs):
                        editor.logged.clear()
                        await asyncio.wait_for(editor.logged.wait(), 600)
                index_ms = (time.perf_counter() - t) * 1000
                text, model_text = train.read_text(), models[0].read_text()
                await editor.open(train.as_uri(), text)
                await editor.open(models[0].as_uri(), model_text)
                opened = editor.counts.get((models[0].as_uri(), 1))
                lines, model_lines = text.split("\n"), model_text.split("\n")
                target = next(n for n in range(len(lines) // 2, len(lines)) if "lr=0.0" in lines[n])
                col = lines[target].index("lr=0.0") + len("lr=0.0")
                decorator = len(lines) - 1 - lines[::-1].index(NO_GRAD)  # sample()'s
                model_target = next(n for n in range(len(model_lines) // 2, len(model_lines)) if "lr=0.0" in model_lines[n])
                model_col = model_lines[model_target].index("lr=0.0") + len("lr=0.0")
                version, model_version = 1, 1
                same, toggled, dependent, model = [], [], [], []
                for k in range(edits):  # a number changed: what train.py calls stays the same
                    version += 1
                    same.append(await editor.edit(train.as_uri(), version, target, col, col + 1, str(1 + k % 9)))
                await asyncio.sleep(PAUSE_S)
                for k in range(edits):  # a number changed in a model file train.py's calls tell
                    model_version += 1
                    model.append(await editor.edit(models[0].as_uri(), model_version, model_target, model_col,
                                                   model_col + 1, str(1 + k % 9)))
                await asyncio.sleep(PAUSE_S)
                uri = models[0].as_uri()
                for k in range(edits):  # the no_grad removed, then restored: every model file's `outside` changes
                    version += 1
                    republished = editor.expect(uri, model_version, editor.seen[(uri, model_version)] + 1)
                    t = time.perf_counter()
                    toggled.append(await editor.edit(train.as_uri(), version, decorator, 0, 1, "#" if k % 2 == 0 else "@"))
                    if on:
                        dependent.append((await asyncio.wait_for(republished, 600) - t) * 1000)
                    else:
                        editor.waiters.clear()
                await asyncio.sleep(PAUSE_S)  # let the last re-analyses finish before reading the memory
                results[on] = dict(index=index_ms, same=same, toggled=toggled, dependent=dependent, model=model,
                                   rss=memory_mb(editor.pid)[0], findings=opened)
            finally:
                await editor.stop()
    print(f"project-wide analysis: train.py ({len(lines) - 1} lines) calls the generate() of {DEPENDENTS} model files "
          f"({len(model_lines) - 1} lines each) under no_grad; train.py and one model file open; {edits} edits of each kind")
    print(f"{'project':>7} {'findings':>8} {'index':>8} {'train.py edit p50':>17} {'p95':>7} {'model edit p50':>14} "
          f"{'p95':>7} {'no_grad edit p50':>16} {'p95':>7} {'model re-published p50':>22} {'p95':>7} {'RSS MB':>7}")

    def cell(values: list, width: int) -> str:
        if not values:
            return f"{'-':>{width}} {'-':>7}"
        return f"{statistics.median(values):>{width - 2}.0f}ms {percentile(values, 0.95):>5.0f}ms"

    for on in (False, True):
        r = results[on]
        index = f"{r['index']:>6.0f}ms" if on else f"{'-':>8}"
        print(f"{'on' if on else 'off':>7} {r['findings']:>8} {index} {cell(r['same'], 17)} {cell(r['model'], 14)} "
              f"{cell(r['toggled'], 16)} {cell(r['dependent'], 22)} {r['rss']:>7.0f}")
    print()
    print("train.py edit: a number changed (its calls stay the same); model edit: a number changed in the model")
    print("file, which train.py's calls tell (`outside`); no_grad edit: the decorator turned into a comment and")
    print("back (its calls change); model re-published: from that edit to the open model file's new diagnostics.")
    print("Each kind in a row, each edit waiting for its diagnostics, a pause between kinds.")
    print("findings: in the open model file as opened (with the project, its generate()'s GG401 is gone).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=20, help="edits per file (a quarter of them on the largest)")
    parser.add_argument("--hovers", type=int, default=40, help="hovers per file")
    parser.add_argument("--types", action="store_true", help="measure the jedi type layer instead (a 500-line script)")
    parser.add_argument("--project", action="store_true", help="measure project-wide analysis instead (2,000-line files)")
    args = parser.parse_args()
    if args.project:
        asyncio.run(run_project(args.edits))
    else:
        asyncio.run(run_types(args.edits, args.hovers) if args.types else run(args.edits, args.hovers))


if __name__ == "__main__":
    main()
