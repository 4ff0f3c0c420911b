"""Running the engine off the event loop.

One analysis thread: pygls reads `didChange` and `$/cancelRequest` on the loop,
so the loop must stay free, and a single thread is also the one owner anything
in the engine that is not thread-safe needs. Two measured costs are handled here:
- the cyclic GC, triggered again and again by the engine's millions of small
  allocations, scans every live object (the kept analyses too), holding the
  GIL - and so the event loop - for up to 0.3 s per full pass on a
  10,000-line file: paused while the engine runs, an analysis takes 25-45% less;
- glibc keeps the heap the native parser frees (300 MB after a 10,000-line
  file): `malloc_trim` gives it back to the OS in a few milliseconds.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Optional, TypeVar

from lsprotocol import types

from gradguard import engine
from gradguard.lsp import diagnostics
from gradguard.lsp.documents import Snapshot
from gradguard.settings import Settings
from gradguard.typelayer.refine import reanalyze

T = TypeVar("T")


def _malloc_trim() -> Optional[Callable[[int], int]]:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to trim
        return None


_TRIM = _malloc_trim()


_gc_lock = threading.RLock()
_gc_pauses = 0


@contextmanager
def gc_paused():
    """The cyclic GC off while any engine call runs (the analysis and hover threads overlap)."""
    global _gc_pauses
    with _gc_lock:
        _gc_pauses += 1
        gc.disable()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0:
                gc.enable()


def hosted(fn: Callable[..., T], *args) -> T:
    """Call `fn` with the cyclic GC paused, then return freed memory to the OS."""
    try:
        with gc_paused():
            return fn(*args)
    finally:
        if _TRIM is not None:
            _TRIM(0)


def read(fn: Callable[..., T], *args) -> T:
    """A short engine read (a hover): the GC paused, nothing to trim."""
    with gc_paused():
        return fn(*args)


class Worker:
    """The analysis thread."""

    def __init__(self):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradguard-analysis")

    async def run(self, fn: Callable[..., T], *args) -> T:
        """Run on the thread; cancelling the caller drops the job if it has not started yet."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, hosted, fn, *args)


@dataclass
class Outcome:
    """One finished analysis."""

    snapshot: Snapshot
    generation: int  # of the settings it ran with
    settings: Settings
    analysis: Optional[engine.Analysis] = None
    published: Optional[dict[str, list[types.Diagnostic]]] = None  # None: nothing new to publish
    calls: Optional[list] = None  # engine.outside.Call, when asked for (export_calls)
    summaries: Optional[dict] = None  # symbol -> engine.outside.Keeps | Builds, with the calls
    model_dropped: bool = False  # the engine model was let go to save memory
    log: list[tuple[types.MessageType, str]] = field(default_factory=list)


def analyse(
    snapshot: Snapshot,
    settings: Settings,
    generation: int,
    incremental: Optional[engine.Incremental] = None,
    ask_types: bool = False,
    export_calls: bool = False,
) -> Outcome:
    """The engine, then the translation to diagnostics (on the analysis thread).
    `incremental`: the document's parse of its earlier versions, re-used where the edit left it alone;
    `export_calls`: keep the calls it makes of the project's other files (Outcome.calls)."""
    outcome = Outcome(snapshot, generation, settings)
    name = snapshot.key.rsplit("/", 1)[-1]
    try:
        analysis = engine.analyze(
            snapshot.source,
            settings,
            keep_flow=True,  # for hovers
            line_label=snapshot.line_label,
            cells=snapshot.cell_starts,
            incremental=incremental,
            ask_types=ask_types,
            export_calls=export_calls,
        )
    except Exception:  # noqa: BLE001 - an engine bug must not take the server down
        outcome.log.append((types.MessageType.Error, f"GradGuard failed on {name}:\n{traceback.format_exc()}"))
        return outcome
    outcome.analysis = analysis
    for error in analysis.internal_errors:
        outcome.log.append((types.MessageType.Error, f"GradGuard internal error on {name}: {error}"))
    if analysis.error is not None:
        e = analysis.error
        if e.syntax:
            text = f"{name} v{snapshot.version}: syntax error at line {e.line}: {e.message}; keeping the last diagnostics"
            outcome.log.append((types.MessageType.Log, text))
        else:  # not a typing mistake: say it where the user sees it
            outcome.log.append((types.MessageType.Warning, f"GradGuard skipped {name}: {e.message}"))
        return outcome
    outcome.calls = analysis.calls if export_calls else None
    outcome.summaries = analysis.summaries if export_calls else None
    outcome.published = _without_skipped(snapshot, diagnostics.diagnostics(snapshot, analysis.findings), outcome.log)
    return outcome


def _without_skipped(snapshot: Snapshot, published: dict, log: list) -> dict:
    """A notebook cell Python cannot parse is left out of the analysis (as Jupyter runs the
    others); it keeps its last diagnostics, as a text document with a syntax error does."""
    for part in snapshot.parts:
        if part.skipped:
            published.pop(part.uri, None)
            name = snapshot.key.rsplit("/", 1)[-1]
            log.append((types.MessageType.Log, f"{name} v{snapshot.version}: cell {part.number} skipped: {part.skipped}"))
    return published


def refine(outcome: Outcome, facts: dict, incremental: engine.Incremental) -> Optional[Outcome]:
    """The outcome's analysis again with the type layer's facts (on the analysis thread);
    None when no fact changes anything the engine reads."""
    snapshot = outcome.snapshot
    refined = Outcome(snapshot, outcome.generation, outcome.settings)
    try:
        analysis = reanalyze(
            snapshot.source, outcome.settings, facts, incremental, keep_flow=True, line_label=snapshot.line_label,
            cells=snapshot.cell_starts,
        )
    except Exception:  # noqa: BLE001 - the syntactic diagnostics stay
        refined.log.append((types.MessageType.Error, f"GradGuard's type layer failed:\n{traceback.format_exc()}"))
        return refined
    if analysis is None or analysis.error is not None:
        return None
    refined.analysis = analysis
    refined.published = _without_skipped(snapshot, diagnostics.diagnostics(snapshot, analysis.findings), [])
    return refined
