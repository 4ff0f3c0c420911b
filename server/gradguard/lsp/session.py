"""The server's state between messages, and the analysis schedule.

Analyses run one at a time on a single worker thread, never on the event loop
(pygls reads `didChange` and `$/cancelRequest` there): one thread also means one
owner for anything in the engine that is not thread-safe. Each document (a
text document, or a notebook as a whole) has at most one pending run; a newer
request cancels it (a run not yet started is dropped, one already running
finishes and its result is discarded). A result is published only while its
document version and the settings it was computed with are still current.

On a syntax error (mid-typing) nothing is published for that version: the
client keeps showing the last good diagnostics, whose markers it moves along
with the edits (VS Code and Neovim both do), instead of flickering to empty and
back on every keystroke. Their quick fixes are withheld until a good version
is analysed, since their edits belong to the older text.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import traceback
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Optional

from lsprotocol import types

from gradguard.engine import Incremental
from gradguard.engine import analyze as engine_analyze
from gradguard.engine.fixes import FixResult, Rounds
from gradguard import notebooks
from gradguard.findings import Position
from gradguard.lsp import actions, hover, notebook, options
from gradguard.lsp.documents import PYTHON, Part, Snapshot, notebook_snapshot, text_snapshot
from gradguard.lsp.indexing import Indexer
from gradguard.lsp.positions import LineTables
from gradguard.lsp.types import TypeService
from gradguard.lsp.worker import Outcome, Worker, analyse, read
from gradguard.lsp.worker import refine as worker_refine
from gradguard.project import told_settings
from gradguard.settings import Settings
from gradguard.typelayer.refine import reanalyze

log = logging.getLogger(__name__)

CONFIGURATION_TIMEOUT_S = 5.0
# A hover waits this long for the engine's view of the receiver (it resolves the
# positions of the hovered statement: a few ms); past it, the hover shows the facts
# alone, and the answer, still computed, is ready for the next hover.
HOVER_STATE_BUDGET_S = 0.04
# How long a hover waits for jedi's name of the hovered call (cached after the first answer).
TYPE_HOVER_BUDGET_S = 0.25
# Engine models kept for hovers (memory, and GC time, grow with each): the most recently
# analysed documents; hovering another one re-analyses it in the background.
KEEP_MODELS = 2
# The type layer's per-document answers for fix-all's own analyses (their texts are the
# document's, fixed round by round: not the document's current version).
FIX_ALL_TYPES_KEY = "gradguard:fix-all"


class Session:
    def __init__(self, server):
        self.server = server
        self.options = options.Options()
        self.generation = 0  # bumped by every configuration change
        self.initialization: Any = None
        self.configured = asyncio.Event()
        self.tables = LineTables()
        self.open_texts: set[str] = set()
        self.outcomes: dict[str, Outcome] = {}  # the last analysis per document
        self.published: dict[str, tuple[Optional[int], list[types.Diagnostic]]] = {}  # per client URI
        self._published_by_key: dict[str, set[str]] = {}
        self.worker = Worker()
        # Hover reads of finished analyses, apart from the analysis thread (never waits behind it).
        self._reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradguard-hover")
        self._tasks: dict[str, asyncio.Task] = {}
        self.following: set[str] = set()  # documents whose pending run is for what other files now say of them
        # Per document, its earlier versions' parse (an edit re-parses only what it touched);
        # used by the analysis thread alone.
        self._incremental: dict[str, Incremental] = {}
        self.types: Optional[TypeService] = None  # the jedi layer (settings: types, interpreter)
        self._warmup: Optional[asyncio.Future] = None
        self._models: OrderedDict[str, None] = OrderedDict()  # keys whose outcome keeps its engine model
        self._fix_all: dict[tuple, list] = {}
        self.indexer = Indexer(self)  # the workspace's projects: how the other files call each one

    # ---------------------------------------------------------------- configuration
    async def load_configuration(self) -> None:
        """initializationOptions merged with the client's `gradguard` section, if it has one."""
        section = None
        if self.client_has("workspace.configuration"):
            try:
                request = self.server.workspace_configuration_async(
                    types.ConfigurationParams([types.ConfigurationItem(section=options.SECTION)])
                )
                section = (await asyncio.wait_for(request, CONFIGURATION_TIMEOUT_S))[0]
            except Exception as e:  # noqa: BLE001 - a client that cannot answer: use what we have
                self.log(types.MessageType.Warning, f"workspace/configuration failed ({e!r}); using initializationOptions")
        self.configure(options.merged(self.initialization, section))

    def configure(self, raw: Any) -> None:
        self.options, problems = options.parse(raw)
        self.log(types.MessageType.Log, f"GradGuard settings: {json.dumps(options.effective(self.options))}")
        self._configure_types()
        self.indexer.configure(self.options.project)
        self.generation += 1
        self._fix_all.clear()
        if problems:
            self.server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message="GradGuard settings: " + "; ".join(problems))
            )
        self.configured.set()

    _config_problem: Optional[str] = None  # the project file's last problem shown

    def _configure_types(self) -> None:
        """Start (and warm up), restart or stop the type layer as the settings say."""
        wanted = self.options.types
        if self.types is not None and (not wanted or self.types.interpreter != self.options.interpreter):
            self.types.shutdown()
            self.types = None
        if wanted and self.types is None:
            self.types = TypeService(self.server.workspace.root_path, self.options.interpreter)
            self._warmup = asyncio.ensure_future(self._warm_types(self.types))

    async def _warm_types(self, service: TypeService) -> None:
        problem = await service.warm_up()
        status = (False, f"types are off: {problem}") if problem is not None else await service.status()
        if status is None:
            return
        ok, message = status
        if ok:
            self.log(types.MessageType.Info, f"GradGuard {message}")
        else:  # said once per start of the type layer: a log line and a note the user sees
            self.log(types.MessageType.Warning, f"GradGuard: {message}")
            self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=f"GradGuard: {message}"))

    def settings_for(self, snapshot: Snapshot) -> Settings:
        """The file's settings, told how the other files of its project call it."""
        settings = self.file_settings(snapshot.path)
        if settings is options.EXCLUDED:
            return settings
        told, uses = self.indexer.told_of(snapshot.path)
        # (with the type layer on, jedi finds the other modules' classes and the engine analyses the file
        # without them: they are not part of its settings, which would only re-run it)
        near = self.indexer.neighbours_of(snapshot.path, snapshot.source) if self.types is None else ()
        if self.indexer.torch_code(snapshot.path):  # it calls the project's torch code: checked as `gradguard check` does
            settings = dataclasses.replace(settings, torch_code=True)
        return told_settings(settings, told, uses, near) if told or uses or near else settings

    def file_settings(self, path: Optional[str]) -> Settings:
        """The project's settings overridden by the editor's (an excluded file keeps none);
        a bad project file is named once (not on every keystroke) and the defaults are used."""
        try:
            project = options.project_settings(path)
            self._config_problem = None
        except options.ConfigError as e:
            project = Settings()
            if str(e) != self._config_problem:
                self._config_problem = str(e)
                self.server.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Warning, message=f"GradGuard configuration: {e}; using the defaults"
                    )
                )
        return project if project is options.EXCLUDED else self.options.settings(project)

    # ---------------------------------------------------------------- documents
    def key_for(self, uri: str) -> str:
        """The document an analysis covers: a cell's notebook, or the text document itself."""
        nb = self.server.workspace.get_notebook_document(cell_uri=uri)
        return nb.uri if nb is not None else uri

    def snapshot(self, key: str) -> Optional[Snapshot]:
        ws = self.server.workspace
        encoding = ws.position_encoding or types.PositionEncodingKind.Utf16
        nb = ws.get_notebook_document(notebook_uri=key)
        if nb is not None:
            return notebook_snapshot(nb, ws, encoding, self.tables)
        if key not in self.open_texts:
            return None
        doc = ws.get_text_document(key)
        if doc.language_id not in (None, PYTHON):
            return None
        return text_snapshot(key, doc.version, doc.source, encoding, self.tables)

    def current_version(self, key: str) -> Optional[int]:
        nb = self.server.workspace.get_notebook_document(notebook_uri=key)
        if nb is not None:
            return nb.version
        return self.server.workspace.get_text_document(key).version if key in self.open_texts else None

    def version_of(self, uri: str) -> Optional[int]:
        """A client document's current version (a text document or one notebook cell)."""
        return self.server.workspace.get_text_document(uri).version

    def is_current(self, outcome: Outcome) -> bool:
        key = outcome.snapshot.key
        return (
            outcome.generation == self.generation
            and (key in self.open_texts or self.server.workspace.get_notebook_document(notebook_uri=key) is not None)
            and self.current_version(key) == outcome.snapshot.version
        )

    def current_outcome(self, uri: str) -> Optional[Outcome]:
        outcome = self.outcomes.get(self.key_for(uri))
        return outcome if outcome is not None and self.is_current(outcome) else None

    def locate(self, uri: str, position: types.Position) -> Optional[tuple[Snapshot, Part, Position]]:
        """The current snapshot holding `uri`, its part, and `position` in program coordinates."""
        snapshot = self.snapshot(self.key_for(uri))
        part = snapshot.part(uri) if snapshot is not None else None
        if part is None:
            return None
        return snapshot, part, snapshot.to_program(uri, position)

    # ---------------------------------------------------------------- scheduling
    def schedule(self, key: str, *, now: bool = False, if_changed: bool = False) -> None:
        """(Re-)analyse a document after the debounce delay (at once for open/save/settings);
        `if_changed`: at once, what the project says of it having changed (the edit that changed
        it had its debounce), and only if its settings are not those its current analysis ran with
        (perhaps nothing the analysis reads changed)."""
        if if_changed:
            kept, snapshot = self.outcomes.get(key), self.snapshot(key)
            if kept is not None and snapshot is not None and self.is_current(kept) and not kept.model_dropped \
                    and kept.settings == self.settings_for(snapshot):
                return  # this version was analysed with these very settings (its type refinement may be running)
        else:
            self.indexer.edited(key)  # (its learning, and the others' runs for what it said, wait for this run)
        self.cancel(key)
        delay = 0.0 if now or if_changed else self.options.debounce_ms / 1000
        self._tasks[key] = asyncio.ensure_future(self._run(key, delay))
        (self.following.add if if_changed else self.following.discard)(key)

    def saved(self, key: str) -> None:
        """A save: analyse at once, and let jedi answer afresh (other files may have changed)."""
        if self.types is not None:
            self.types.forget(key)
        self.schedule(key, now=True)

    def schedule_all(self) -> None:
        for key in {*self.open_texts, *self.server.workspace.notebook_documents}:
            self.schedule(key, now=True)

    def cancel(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        self.following.discard(key)
        if task is not None:
            task.cancel()

    async def _run(self, key: str, delay: float) -> None:
        paid_elsewhere = False  # the runs owed to other documents (indexing.py): else this run starts them, at the end
        try:
            await self.configured.wait()  # didOpen may arrive while the configuration is still coming
            if delay:
                await asyncio.sleep(delay)
            snapshot = self.snapshot(key)
            if snapshot is None:
                return
            if not self.options.enable:
                self._publish(key, {p.uri: [] for p in snapshot.parts}, snapshot)
                return
            incremental = self._incremental.setdefault(key, Incremental())
            ask_types = self.types is not None
            settings = self.settings_for(snapshot)
            export = self.indexer.wants_calls(snapshot, settings.outside or settings.imported or settings.neighbours)
            outcome = await self.worker.run(analyse, snapshot, settings, self.generation, incremental, ask_types, export)
            for level, message in outcome.log:
                self.log(level, message)
            if not self.is_current(outcome):
                _dispose(outcome)
                paid_elsewhere = True  # (the newer run, or the close, pays what is owed)
                return  # superseded while it ran: a newer run is scheduled or the document closed
            if _typing_in_a_cell(self.outcomes.get(key), outcome):
                self.log(types.MessageType.Log, f"{key.rsplit('/', 1)[-1]} v{snapshot.version}: a cell being edited "
                                                "does not parse; keeping the last diagnostics")
                _dispose(outcome)
                return
            self._keep(key, outcome)
            if outcome.published is not None:
                self._publish(key, outcome.published, snapshot)
                if ask_types and self.types is not None and outcome.analysis.type_queries:
                    await self._refine(key, outcome, incremental)
                paid_elsewhere = True  # (learn pays them: at once, or once it knows this document's calls)
                self.indexer.learn(snapshot, outcome.calls, outcome.summaries, incremental)  # after the publish: its dependents
        except asyncio.CancelledError:
            paid_elsewhere = True  # (the run that cancelled it pays)
            raise
        except Exception:  # noqa: BLE001 - the server keeps serving
            log.exception("analysis of %s failed", key)
            self.log(types.MessageType.Error, f"GradGuard failed on {key}:\n{traceback.format_exc()}")
        finally:
            if self._tasks.get(key) is asyncio.current_task():
                del self._tasks[key]
                self.following.discard(key)
            if not paid_elsewhere:
                self.indexer.pay()

    async def _refine(self, key: str, outcome: Outcome, incremental: Incremental) -> None:
        """Publish the same version again with what jedi knows (after the syntactic publish)."""
        facts = await self.types.facts(key, outcome.analysis, outcome.snapshot.source, outcome.snapshot.path)
        if not facts or not self.is_current(outcome):
            return
        refined = await self.worker.run(worker_refine, outcome, facts, incremental)
        if refined is None:
            return
        for level, message in refined.log:
            self.log(level, message)
        if refined.published is None or not self.is_current(refined):
            _dispose(refined)
            return
        self._keep(key, refined)
        self._publish(key, refined.published, refined.snapshot)

    def _keep(self, key: str, outcome: Outcome) -> None:
        """Store the outcome; only the last KEEP_MODELS documents keep their engine model."""
        previous = self.outcomes.get(key)
        if previous is not None and previous is not outcome:
            _dispose(previous)
        self.outcomes[key] = outcome
        self._models.pop(key, None)
        if outcome.analysis is not None and outcome.analysis.flow is not None:
            self._models[key] = None
        while len(self._models) > KEEP_MODELS:
            old, _ = self._models.popitem(last=False)
            if old in self.outcomes:
                _dispose(self.outcomes[old])
                self.outcomes[old].analysis, self.outcomes[old].model_dropped = None, True

    def _publish(self, key: str, by_uri: dict[str, list[types.Diagnostic]], snapshot: Snapshot) -> None:
        versions = {p.uri: p.version for p in snapshot.parts}
        before = self._published_by_key.get(key, set())
        gone = before - versions.keys()  # notebook cells deleted since (a skipped cell keeps its diagnostics)
        for uri in gone:
            self._send(uri, [], None)
        for uri, items in by_uri.items():
            self._send(uri, items, versions.get(uri))
        self._published_by_key[key] = (before - gone) | set(by_uri)

    def _send(self, uri: str, items: list[types.Diagnostic], version: Optional[int]) -> None:
        if version is None:
            self.published.pop(uri, None)
        else:
            self.published[uri] = (version, items)
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version))

    def close(self, key: str) -> None:
        """Forget a closed document and clear what was published for it."""
        self.cancel(key)
        _dispose(self.outcomes.pop(key, None))
        self._models.pop(key, None)
        self._incremental.pop(key, None)
        if self.types is not None:
            self.types.forget(key)
        self.indexer.closed(key)
        for uri in self._published_by_key.pop(key, {key}):
            self.tables.drop(uri)
            self._send(uri, [], None)

    # ---------------------------------------------------------------- reads
    def diagnostics_at(self, uri: str, position: types.Position) -> list[types.Diagnostic]:
        """Published diagnostics of the current version whose range holds `position`."""
        version, items = self.published.get(uri, (None, []))
        if version is None or version != self.version_of(uri):
            return []
        at = (position.line, position.character)
        return [
            d for d in items if (d.range.start.line, d.range.start.character) <= at <= (d.range.end.line, d.range.end.character)
        ]

    async def receiver_state(self, uri: str, line: int, column: int, told: bool = False) -> Optional[str]:
        """The engine's words on the value at a program position, if they come within the budget;
        `told`: only what another file of the project says it is (a hover on any name)."""
        outcome = self.current_outcome(uri)
        if outcome is None:
            return None
        if outcome.model_dropped:  # let go for memory: rebuild it for the next hover
            key = self.key_for(uri)
            if key not in self._tasks:
                self.schedule(key, now=True)
            return None
        job = partial(read, hover.told_state if told else hover.receiver_state, outcome.analysis, line, column)
        future = asyncio.get_running_loop().run_in_executor(self._reads, job)
        try:  # shielded: a late answer still completes, and the engine caches its index
            state = await asyncio.wait_for(asyncio.shield(future), HOVER_STATE_BUDGET_S)
        except asyncio.TimeoutError:
            state = None
        symbol = None if told else await self._symbol(outcome.snapshot, line, column)
        return "; ".join(x for x in (symbol, state) if x) or None

    async def _symbol(self, snapshot: Snapshot, line: int, column: int) -> Optional[str]:
        """jedi's name for the hovered call in torch's public terms (`torch.Tensor.detach`), once jedi is warm."""
        if self.types is None or not self.types.warm.is_set():
            return None
        lookup = self.types.symbol(snapshot.source, snapshot.path, line, column)
        try:
            full = await asyncio.wait_for(asyncio.shield(asyncio.ensure_future(lookup)), TYPE_HOVER_BUDGET_S)
        except asyncio.TimeoutError:
            return None
        return f"resolves to `{full}`" if full else None

    async def fix_all_edits(self, uri: str) -> list[actions.DataEdit]:
        """The edits of `source.fixAll.gradguard`: every safe fix of the document, found by
        the same analysis as its diagnostics and quick fixes (the type layer's too, when on),
        in rounds as `gradguard check --fix` applies them; each fix not applied is logged,
        with why. Unsafe fixes are never applied."""
        key = self.key_for(uri)
        snapshot = self.snapshot(key)
        if snapshot is None:
            return []
        outcome = self.outcomes.get(key)
        current = outcome if outcome is not None and self.is_current(outcome) else None
        published = [d for p in snapshot.parts for d in self.published.get(p.uri, (None, []))[1]]
        if current is not None and self.types is None and not actions.safe_edits(published):
            return []  # the cheap answer: nothing safe to fix in the current findings
        settings = self.settings_for(snapshot)
        cache_key = (key, snapshot.version, self.generation, settings.outside, settings.imported,
                     settings.neighbours)  # the other files too
        if cache_key not in self._fix_all:
            name = key.rsplit("/", 1)[-1]
            if len(snapshot.parts) != 1 or snapshot.parts[0].uri != key:
                edits, notes = await self._fixed_cells(snapshot, settings, current)
            else:
                edits, notes = self._edits(snapshot, await self._fixed(snapshot, settings))
            for note in notes:
                self.log(types.MessageType.Warning, f"GradGuard fix-all, {name}: {note}")
            self._fix_all = {cache_key: edits}  # only the latest request's answer is worth keeping
        return self._fix_all[cache_key]

    def _edits(self, snapshot: Snapshot, fixed: FixResult) -> tuple[list, list[str]]:
        """A text document's fix-all as one edit, and what was not applied (where it is once fixed)."""
        notes = [f"line {u.at.line}, column {u.at.column + 1}: {u.message()}" for u in fixed.unapplied]
        change = actions.text_change(snapshot.source, fixed.source)
        if change is None:
            return [], notes
        rng, text = change
        placed = snapshot.place(rng, clamp=False)
        if placed is None:
            return [], notes
        part, lsp_range = placed
        return [{"uri": part.uri, "version": part.version, "range": actions.range_data(lsp_range), "newText": text}], notes

    async def _fixed(self, snapshot: Snapshot, settings: Settings) -> FixResult:
        """The source with every safe fix applied (as `gradguard check --fix` does, each
        round analysed as the diagnostics are); a round whose result does not parse is dropped."""
        rounds = Rounds(snapshot.source, await self._analysis_for_fixes(snapshot.source, snapshot.path, settings))
        while (text := rounds.next()) is not None:
            rounds.checked(await self._analysis_for_fixes(text, snapshot.path, settings))
        return rounds.result()

    async def _fixed_cells(self, snapshot: Snapshot, settings: Settings, current) -> tuple[list, list[str]]:
        """A notebook's fix-all: rounds of fixes made inside the cells, as `gradguard check --fix`
        makes them (the first round from the published analysis, the next ones without the
        type layer), one edit per changed cell."""
        cells = [notebook.Cell(p.uri, p.version or 0, p.text) for p in snapshot.parts]
        nb = notebooks.Notebook("", tuple(p.number - 1 for p in snapshot.parts), tuple(c.text for c in cells),
                                notebook.join(cells))
        analysis = current.analysis if current is not None else None
        fixed = await self.worker.run(partial(notebooks.fix_cells, nb, settings, analysis=analysis))
        edits = []
        for part, old, new in zip(snapshot.parts, nb.sources, fixed.sources):
            change = actions.text_change(old, new)
            if change is not None:
                rng, text = change
                lsp_range = part.table.range_to_lsp(rng, snapshot.encoding)
                edits.append({"uri": part.uri, "version": part.version, "range": actions.range_data(lsp_range), "newText": text})
        return edits, [r.message() for r in fixed.refused]

    async def _analysis_for_fixes(self, source: str, path: Optional[str], settings: Settings):
        """The engine on `source`, refined by the type layer when it is on; None on a parse error."""
        incremental = Incremental()
        service = self.types
        first = await self.worker.run(partial(engine_analyze, incremental=incremental, ask_types=service is not None), source, settings)
        if first.error is not None:
            return None
        if service is None or not first.type_queries:
            return first
        facts = await service.facts(FIX_ALL_TYPES_KEY, first, source, path)
        refined = await self.worker.run(reanalyze, source, settings, facts, incremental) if facts else None
        return refined if refined is not None else first

    # ---------------------------------------------------------------- client
    def log(self, level: types.MessageType, message: str) -> None:
        self.server.window_log_message(types.LogMessageParams(type=level, message=message))

    def client_has(self, dotted: str) -> bool:
        value: Any = self.server.client_capabilities
        for name in dotted.split("."):
            value = getattr(value, name, None)
        return bool(value)

    def document_changes(self) -> bool:
        return self.client_has("workspace.workspace_edit.document_changes")


def _typing_in_a_cell(previous: Optional[Outcome], outcome: Outcome) -> bool:
    """A notebook cell that parsed in the last analysis and does not now is being typed in:
    without it the other cells' findings would vanish and come back with every keystroke,
    so the last diagnostics stay (a cell broken from the start is only left out)."""
    if previous is None or outcome.published is None:
        return False
    was = {p.uri for p in previous.snapshot.parts if p.skipped}
    return any(p.skipped and p.uri not in was for p in outcome.snapshot.parts)


def _dispose(outcome: Optional[Outcome]) -> None:
    """An outcome no longer current: its engine model's memory comes back at once."""
    if outcome is not None and outcome.analysis is not None:
        outcome.analysis.dispose()
