"""The `gradguard` command: check, fix and explain, ruff-style.

Exit codes: 0 nothing found, 1 findings, 2 a usage error or a file that could
not be read, parsed or written (2 wins over 1).
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import signal
import stat
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import repeat

import click

from gradguard import __version__, cache, notebooks, project, render, sarif
from gradguard.cells import CellMap, Indent
from gradguard.config import PYPROJECT, ConfigError, Resolver
from gradguard.discovery import Discovered, discover, skipped_file
from gradguard.docs import rule_markdown
from gradguard.engine import Incremental, analyze, mentions_torch
from gradguard.engine.fixes import chosen_fix, fix_source
from gradguard.engine.model import GradMode
from gradguard.engine.outside import Builds, Call, Gives, Keeps, Returns
from gradguard.engine.parsing import ParseError
from gradguard.findings import Finding
from gradguard.rules import all_rules, rule_by_code
from gradguard.progress import Progress
from gradguard.project.callers import callees_by_file, outside_by_file, summaries_wanted
from gradguard.project.neighbours import neighbours, offered_by, shape
from gradguard.settings import COPY_ORDERS, Settings

BOM = b"\xef\xbb\xbf"
EXIT_FINDINGS = 1
EXIT_ERROR = 2
FAIL_ON = ("info", "warning", "error")  # `--fail-on`: the least severe finding that fails a run
RANK = {"info": 0, "warning": 1, "error": 2}


# ---------------------------------------------------------------- one file (runs in worker processes)
@dataclass(frozen=True)
class Job:
    """What to do with every file; sent to each worker once per chunk, so keep it small."""

    settings: Settings = Settings()  # for a path given without its own settings
    mode: str = "check"  # "check" | "fix" (write) | "diff" (print, never write)
    unsafe: bool = False
    want_source: bool = False  # code frames need the text the findings point into
    export_calls: bool = False  # list the calls each file makes of the project's other files (FileResult.calls)


@dataclass(frozen=True)
class FileError:
    message: str
    line: int | None = None  # 1-based
    column: int | None = None  # 0-based


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    source: str | None = None  # the text the findings point into (after fixes)
    error: FileError | None = None  # the file could not be checked (or its fixes not written)
    internal_errors: list[str] = field(default_factory=list)
    unfixed: list[FileError] = field(default_factory=list)  # fixes not applied, and why (warnings)
    fixed: int = 0
    diff: str = ""
    cells: CellMap | None = None  # a notebook: where its code cells are in the findings' program
    cell_sources: dict[int, str] | None = None  # a notebook's code cells by number, for code frames
    digest: str | None = None  # SHA-256 of the bytes the result describes, when it is worth caching
    notes: list[str] = field(default_factory=list)  # about the run, not the file: printed once (the type layer)
    skipped: list[str] = field(default_factory=list)  # notebook cells left out (Python cannot parse them), and why
    calls: list = field(default_factory=list)  # engine.outside.Call: with Job.export_calls
    summaries: dict = field(default_factory=dict)  # symbol -> engine.outside.Keeps: with Job.export_calls
    asked: frozenset = frozenset()  # (symbol, question) it read of Settings.outside: with Job.export_calls


def check_file(task: str | tuple[str, Settings], job: Job) -> FileResult:
    """Read, analyse and maybe fix one file; never raises, so one bad file cannot stop the run."""
    path, settings = (task, job.settings) if isinstance(task, str) else task
    try:
        if path.endswith(notebooks.SUFFIX):
            result = _check_notebook(path, settings, job)
        else:
            result = _check_file(path, settings, job)
    except Exception as e:  # an engine bug must not hide the other files' results
        result = FileResult(path, error=FileError(f"internal error: {type(e).__name__}: {e}"))
    if _notes:
        result.notes, _notes[:] = list(_notes), []
    return result


def _read(path: str) -> tuple[bytes, str, bool] | FileResult:
    """(bytes, text, had a BOM), or the result that says why the file cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return FileResult(path, error=FileError(e.strerror or str(e)))
    bom = data.startswith(BOM)
    body = data[len(BOM) :] if bom else data
    try:
        return data, body.decode("utf-8"), bom  # bytes.decode keeps "\r\n" and "\r" as they are
    except UnicodeDecodeError as e:
        return FileResult(path, error=FileError(_decode_problem(body, e)), digest=cache.content_hash(data))


def _check_file(path: str, settings: Settings, job: Job) -> FileResult:
    read = _read(path)
    if isinstance(read, FileResult):
        return read
    data, text, bom = read
    digest = cache.content_hash(data)
    analysis = _analyse(text, settings, path, job.export_calls)
    if analysis.error is not None:
        return FileResult(path, error=_analysis_error(analysis.error), digest=digest)
    result = FileResult(
        path,
        analysis.findings,
        text if job.want_source else None,
        internal_errors=list(analysis.internal_errors),
        digest=None if analysis.internal_errors else digest,
        calls=analysis.calls,
        summaries=analysis.summaries,
        asked=analysis.asked,
    )
    if job.mode == "check" or not any(chosen_fix(f, job.unsafe) for f in analysis.findings):
        return result

    try:
        fixed = fix_source(text, settings, unsafe=job.unsafe, analysis=analysis)
    except Exception as e:  # report the findings unfixed rather than lose them
        result.internal_errors.append(f"fixing failed: {type(e).__name__}: {e}")
        result.digest = None
        return result
    result.unfixed = _unapplied(fixed, as_read=job.mode == "diff")
    if fixed.unapplied:
        result.digest = None  # a cached result would not say them again
    if fixed.source == text:
        return result
    if job.mode == "diff":
        result.diff = render.unified_diff(path, text, fixed.source)
        result.fixed = fixed.fixed
        result.digest = None  # what it found is not what is left after the fixes
        return result
    new_data = (BOM if bom else b"") + fixed.source.encode("utf-8")
    try:
        write_atomic(path, new_data)
    except OSError as e:
        result.error = FileError(f"cannot write fixes: {e.strerror or e}")
        result.digest = None
        return result
    result.findings = fixed.remaining
    result.source = fixed.source if job.want_source else None
    result.fixed = fixed.fixed
    result.digest = cache.content_hash(new_data)
    return result


def _unapplied(fixed, *, as_read: bool) -> list[FileError]:
    """The fixes not applied, placed in the text as read (--diff) or as written (--fix)."""
    out = []
    for u in fixed.unapplied:
        at = u.where(as_read=as_read)
        out.append(FileError(u.message(as_read=as_read), at.line, at.column))
    return out


def _analyse(text: str, settings: Settings, path: str, export_calls: bool = False):
    """The engine; with `types`, refined by jedi (one oracle per project root and worker process)."""
    if not settings.types:
        return analyze(text, settings, export_calls=export_calls)
    incremental = Incremental()
    first = analyze(text, settings, incremental=incremental, ask_types=True, export_calls=export_calls)
    if first.error is not None or not first.type_queries:
        return first
    oracle = _oracle(path, settings.python)
    if oracle is None:
        return first
    from gradguard.typelayer import refine  # jedi only for --types

    refined = refine(first, text, oracle, os.path.abspath(path), settings, incremental=incremental)
    if refined is None:
        return first
    refined.calls = first.calls  # what the file calls of others is syntax: the first analysis has it
    return refined


_oracles: dict = {}  # (project root, interpreter) -> Oracle, or None when jedi cannot start; per worker process
_roots: dict = {}  # directory -> project root (the configuration is read once per directory)
_notes: list[str] = []  # what this worker has to say once about the type layer (sent with the next result)


def _oracle(path: str, python: str | None):
    """jedi for the project holding `path` (its configuration's root, else the file's directory),
    reading the packages of `python` (default: the interpreter running GradGuard)."""
    from gradguard.typelayer.oracle import Oracle

    directory = os.path.dirname(os.path.abspath(path))
    if directory not in _roots:
        config = Resolver().for_dir(directory)
        _roots[directory] = config.root if config.path else directory
    key = (_roots[directory], python)
    if key not in _oracles:
        oracle = Oracle(key[0], python, batch=True)
        try:
            status = oracle.status()  # one question: does nn.Module resolve, from torch or the stubs?
        except Exception as e:  # noqa: BLE001 - not an interpreter, jedi cannot start it
            _notes.append(f"types are off: jedi cannot use {oracle.interpreter} ({type(e).__name__})")
            oracle = None
        else:
            if not status.ok:
                _notes.append(status.message())
        _oracles[key] = oracle
    return _oracles[key]


def _check_notebook(path: str, settings: Settings, job: Job) -> FileResult:
    read = _read(path)
    if isinstance(read, FileResult):
        return read
    data, text, _ = read
    digest = cache.content_hash(data)
    try:
        nb = notebooks.read(text)
    except notebooks.NotebookError as e:
        return FileResult(path, error=FileError(str(e)), digest=digest)
    result, analysis, nb = _analyse_notebook(path, nb, settings, job, digest)
    if result.error is not None or job.mode == "check" or not any(chosen_fix(f, job.unsafe) for f in analysis.findings):
        return result
    try:
        fixed = notebooks.fix_cells(nb, settings, unsafe=job.unsafe, analysis=analysis)
        changes = fixed.changes(nb)
    except Exception as e:  # report the findings unfixed rather than lose them
        result.internal_errors.append(f"fixing failed: {type(e).__name__}: {e}")
        result.digest = None
        return result
    result.unfixed = [FileError(r.message(as_read=True)) for r in fixed.refused]  # the file as read: --diff
    if fixed.refused:
        result.digest = None
    if not changes:
        return result
    new_text = notebooks.rewrite(text, changes)
    if job.mode == "diff":
        result.diff = render.unified_diff(path, text, new_text)
        result.fixed = fixed.fixed
        result.digest = None
        return result
    new_data = new_text.encode("utf-8")
    try:
        write_atomic(path, new_data)
    except OSError as e:
        result.error = FileError(f"cannot write fixes: {e.strerror or e}")
        result.digest = None
        return result
    after, _, _ = _analyse_notebook(path, notebooks.read(new_text), settings, job, cache.content_hash(new_data))
    after.fixed = fixed.fixed
    after.unfixed = [FileError(r.message()) for r in fixed.refused]  # the file as written
    return after


def _analyse_notebook(path: str, nb: notebooks.Notebook, settings: Settings, job: Job, digest: str):
    """(result, analysis, the notebook as analysed: a cell the engine cannot parse is left out)."""
    while True:
        cells = nb.cell_map
        analysis = analyze(nb.program.source, settings, line_label=cells.label, export_calls=job.export_calls,
                           cells=nb.program.starts)
        err = analysis.error
        if err is None or not err.syntax:
            break
        number, line = cells.locate(err.line)
        fewer = nb.without(err.line, f"GradGuard cannot parse it: {err.message} (line {line})")
        if fewer is None:
            return FileResult(path, error=FileError(f"SyntaxError in cell {number}, line {line}: {err.message}"),
                              digest=digest), analysis, nb
        nb = fewer
    if err is not None:
        return FileResult(path, error=FileError(err.message), digest=digest), analysis, nb
    sources = dict(zip(cells.numbers, nb.sources)) if job.want_source else None
    internal = list(analysis.internal_errors)
    findings = notebooks.offered(nb, analysis.findings)
    # A fix that cannot be made in the cells is not cached away: --fix and --diff must see it to report it.
    refused = findings != analysis.findings
    skipped = nb.skipped()
    result = FileResult(
        path, findings, None, internal_errors=internal, cells=cells, cell_sources=sources,
        digest=None if internal or refused or skipped else digest, skipped=skipped, calls=analysis.calls,
        summaries=analysis.summaries, asked=analysis.asked,
    )
    return result, analysis, nb


def _analysis_error(err: ParseError) -> FileError:
    # The engine also refuses valid code it will not analyse (too large, too deep): not a SyntaxError.
    if err.syntax:
        return FileError(f"SyntaxError: {err.message}", err.line, err.column)
    return FileError(err.message)


def _decode_problem(data: bytes, e: UnicodeDecodeError) -> str:
    line = data.count(b"\n", 0, e.start) + 1
    line_start = data.rfind(b"\n", 0, e.start) + 1
    column = len(data[line_start : e.start].decode("utf-8", "replace")) + 1
    return f"not valid UTF-8: {e.reason} (byte 0x{data[e.start]:02x} at line {line}, column {column})"


def write_atomic(path: str, data: bytes) -> None:
    """Replace the file's contents all at once, keeping its permission bits (and a symlink as a link)."""
    target = os.path.realpath(path)
    st = os.stat(target)
    if not os.access(target, os.W_OK):  # os.replace would quietly swap out a read-only file
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if hasattr(os, "chown"):
            with contextlib.suppress(OSError):  # keep the owner where we may (root fixing another's file)
                os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def check_files(tasks: list, job: Job, jobs: int) -> Iterator[FileResult]:
    """Results in the order of `tasks` (paths, or (path, settings)), however many processes do the work."""
    workers = min(jobs, len(tasks))
    if workers <= 1:
        yield from (check_file(t, job) for t in tasks)
        return
    chunksize = max(1, len(tasks) // (workers * 4))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    try:
        yield from pool.map(check_file, tasks, repeat(job), chunksize=chunksize)
    finally:
        pool.shutdown(cancel_futures=True)


def _ignore_interrupts() -> None:
    # Ctrl-C is the parent's to handle: one message, not a traceback per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# ---------------------------------------------------------------- the cache around the workers
def _cached(path: str, payload: list, job: Job) -> FileResult | None:
    """A cached result rebuilt, or None when the job needs the file itself (fixes to make)."""
    findings = [cache.finding_from(d) for d in payload[0]]
    if job.mode != "check" and any(chosen_fix(f, job.unsafe) for f in findings):
        return None  # --fix and --diff work from the file as it is now, never from the cache
    error = FileError(*payload[1]) if payload[1] is not None else None
    cells = None
    if payload[2] is not None:
        numbers, starts, indents = payload[2]
        cells = CellMap(tuple(numbers), tuple(starts), tuple(Indent(prefix, tuple(removed)) for prefix, removed in indents))
    calls = [Call(*c[:8], _tuples(c[8]), *c[9:12]) for c in payload[3]] if len(payload) > 3 else []
    summaries = {k: _summary(v) for k, v in payload[4].items()} if len(payload) > 4 else {}
    asked = frozenset(tuple(a) for a in payload[5]) if len(payload) > 5 else frozenset()
    result = FileResult(path, findings, error=error, cells=cells, calls=calls, summaries=summaries, asked=asked)
    if job.want_source and findings:
        read = _read(path)
        if isinstance(read, FileResult):
            return None
        if cells is None:
            result.source = read[1]
        else:
            nb = notebooks.read(read[1])
            result.cell_sources = dict(zip(nb.cell_map.numbers, nb.sources))
    return result


def _payload(result: FileResult) -> list:
    error = None if result.error is None else [result.error.message, result.error.line, result.error.column]
    cells = None if result.cells is None else [
        list(result.cells.numbers), list(result.cells.starts), [[i.prefix, list(i.removed)] for i in result.cells.indents]]
    calls = [[c.target, c.by_name, c.mode, c.proved, c.how, c.in_loop, c.unknown, c.per_batch, c.args, c.line, c.column,
              c.result] for c in result.calls]
    summaries = {k: _summary_data(v) for k, v in result.summaries.items()}
    return [[cache.finding_data(f) for f in result.findings], error, cells, calls, summaries,
            sorted(list(a) for a in result.asked)]


def _tuples(data):
    """JSON's lists back into the tuples they were (Call.args)."""
    return tuple(_tuples(x) for x in data) if isinstance(data, list) else data


def _summary_data(summary) -> list:
    """An engine.outside summary as the cache's plain data."""
    if isinstance(summary, Keeps):
        return ["keeps", list(summary.params), [list(p) for p in summary.kept]]
    if isinstance(summary, Returns):
        return ["returns", summary.name, summary.scalar, summary.backward, [list(t) for t in summary.through]]
    if isinstance(summary, Gives):
        return ["gives", summary.shape]
    return ["builds", summary.parameterized, summary.where, list(summary.forwards)]


def _summary(data: list):
    """An engine.outside summary from the cache's plain data."""
    if data[0] == "keeps":
        return Keeps(tuple(data[1]), tuple(map(tuple, data[2])))
    if data[0] == "returns":
        return Returns(data[1], data[2], data[3], through=tuple(map(tuple, data[4])) if len(data) > 4 else ())
    if data[0] == "gives":
        return Gives(_tuples(data[1]))
    return Builds(data[1], data[2], tuple(data[3]))


def run_tasks(tasks: list[tuple[str, Settings, cache.Cache | None]], job: Job, jobs: int) -> Iterator[FileResult]:
    """check_files with the cache: hits come from it, the rest from the workers, all in order."""
    keys = {}
    hits: dict[int, FileResult] = {}
    for i, (path, settings, store) in enumerate(tasks):
        if store is None:
            continue
        try:
            with open(path, "rb") as f:
                digest = cache.content_hash(f.read())
        except OSError:
            continue
        keys[i] = _cache_key(settings, job)
        payload = store.get(path, digest, keys[i])
        if payload is not None:
            hit = _cached(path, payload, job)
            if hit is not None:
                hits[i] = hit
    misses = [(path, settings) for i, (path, settings, _) in enumerate(tasks) if i not in hits]
    computed = check_files(misses, job, jobs)
    for i, (path, settings, store) in enumerate(tasks):
        if i in hits:
            yield hits[i]
            continue
        result = next(computed)
        if store is not None and result.digest is not None:
            store.put(path, result.digest, keys.get(i) or _cache_key(settings, job), _payload(result))
        yield result


def _cache_key(settings: Settings, job: Job) -> str:
    # a result kept without the file's calls cannot serve a run that needs them
    return cache.settings_hash(settings) + ("+calls" if job.export_calls else "")


def run_project(tasks: list, job: Job, jobs: int, resolver: Resolver, stats: dict | None = None) -> Iterator[FileResult]:
    """run_tasks, with each file knowing how the rest of its project calls it and what the
    functions it calls of other files do (gradguard/project): every file is checked once, with the
    classes of the other modules it works with (read from their text) and for the calls it makes
    of the others (with the project's files not given that may call them, unreported), then again,
    told what the others say, where that answers a question its first analysis asked - or, for
    --fix and --diff, every file, so that no fix is made for a finding the project takes away."""
    given = [path for path, _, _ in tasks]
    store = next((s for _, _, s in tasks if s is not None), None)
    groups = project.group(given)
    members = {root: discover([root], resolver).files if project.root_of(paths[0]) else paths  # a loose file's
               for root, paths in groups.items()}                                            # directory is not walked
    texts = {os.path.abspath(p): project.read(p) for p in [*given, *(p for found in members.values() for p in found)]}
    indexes = {root: project.index(root, {p: texts[os.path.abspath(p)] for p in members[root]}) for root in groups}
    torch_code = set().union(*(project.torch_code_users(index, lambda p: mentions_torch(texts.get(p, "")),
                                                        lambda p: project.called_names(texts[p]))
                               for index in indexes.values()))

    def told_torch(path: str, settings: Settings) -> Settings:
        return replace(settings, torch_code=True) if os.path.abspath(path) in torch_code else settings

    tasks = [(p, told_torch(p, settings), s) for p, settings, s in tasks]
    near = _near(indexes, given, texts, store)
    beyond = [(p, told_torch(p, resolver.for_path(p).settings_for(p)), store)
              for root, paths in groups.items() for p in project.callers_beyond(root, paths, members[root], texts)]
    first = list(run_tasks([(p, replace(settings, neighbours=near.get(p, ())), s) for p, settings, s in tasks] + beyond,
                           replace(job, mode="check", export_calls=True), jobs))
    outside, callees = _told(indexes, members, texts, first, resolver, torch_code)
    again = {}
    for i, (path, settings, s) in enumerate(tasks):
        told, uses = outside.get(os.path.abspath(path)), callees.get(path)
        if job.mode != "check" or uses or (told and _answers(told, first[i])):  # (--fix: the first pass fixed nothing)
            again[i] = (path, project.told_settings(settings, told, uses, near.get(path)), s)
    if stats is not None:  # for bench/project_cost.py
        stats.update(files=len(tasks), beyond=len(beyond), again=len(again))
    redone = run_tasks(list(again.values()), job, jobs)
    for i in range(len(tasks)):
        yield next(redone) if i in again else first[i]


def _answers(told: dict, first: FileResult) -> bool:
    """Does what the other files say of a file (symbol -> Outside) answer a question its analysis
    asked of them (FileResult.asked) otherwise than its first analysis, which had no answer, took it:
    grad off for a function with findings that may vanish, grad on for certain where a finding
    needs it, a reset run every training step or never, what every call passes."""
    asked = first.asked
    for symbol, o in told.items():
        if o.mode is GradMode.OFF and first.findings and (symbol, "mode") in asked:
            return True
        if o.proved and (symbol, "proved") in asked:
            return True
        if o.per_batch is not None and (symbol, "per_batch") in asked:
            return True
        if o.params and (symbol, "params") in asked and (first.findings or not all(_number(w) for _, w in o.params)):
            return True  # (a number carries no graph: told one, no finding is added; one found may go)
    return False


def _number(what: tuple) -> bool:
    """Is what every call passes (engine.outside.describe) a number, or items of numbers?"""
    return what == ("number",) or (what[0] == "items" and _number(what[1]))


def _near(indexes: dict, given: list, texts: dict, store: cache.Cache | None = None) -> dict:
    """For the `given` files that mention torch: the classes of other modules they work with
    (path -> Settings.neighbours), read from the modules' text, or from the cache when none of the
    texts they are chosen from changed. `texts`: absolute path -> text."""
    shapes: dict = {}
    digests: dict = {}  # path -> the hash of its text (a module many files import is hashed once)

    def shape_of(path: str):
        if path not in shapes:
            shapes[path] = shape(texts[path]) if path in texts else None
        return shapes[path]

    def digest_of(path: str) -> str:
        if path not in digests:
            digests[path] = cache.content_hash(texts[path].encode())
        return digests[path]

    near = {}
    for index in indexes.values():
        for path in given:
            full = os.path.abspath(path)
            if full not in index.modules or not mentions_torch(texts[full]):
                continue
            key = digest = None
            if store is not None:
                read = [full, *sorted(p for p in offered_by(index, full) if p in texts)]
                digest = digest_of(full)
                key = "neighbours:" + cache.content_hash("\0".join(f"{p}\0{digest_of(p)}" for p in read).encode())[:16]
                kept = store.get(full, digest, key)
                if kept is not None:
                    if kept:
                        near[path] = tuple(tuple(n) for n in kept)
                    continue
            found = neighbours(index, path, texts[full], shape_of)
            if store is not None:
                store.put(full, digest, key, [list(n) for n in found])
            if found:
                near[path] = found
    return near


def _told(indexes: dict, members: dict, texts: dict, first: list, resolver: Resolver,
          torch_code: frozenset | set = frozenset()) -> tuple[dict, dict]:
    """From the first pass (`first`: FileResults with their calls and summaries): what the other files
    say of each file (absolute path -> {symbol: Outside}) and what the functions it calls of other
    files do (path -> {target: Keeps | Builds}). `texts`: absolute path -> text, every file's;
    `torch_code`: the files analysed though they never mention torch (project.torch_code_users)."""
    calls = {r.path: r.calls for r in first}
    # a file the engine passed over (no torch: a meter in utils.py) is summarised if a caller needs it
    summaries = {os.path.abspath(r.path): r.summaries for r in first
                 if r.summaries or mentions_torch(texts[os.path.abspath(r.path)])}
    outside: dict = {}
    callees: dict = {}
    for root, index in indexes.items():
        mine = {p: calls[p] for p in calls if os.path.abspath(p).startswith(root + os.sep)}
        unread = frozenset().union(*(project.called_names(texts[os.path.abspath(p)])
                                     for p in mine if not mentions_torch(texts[os.path.abspath(p)])
                                     and os.path.abspath(p) not in torch_code))
        outside.update(outside_by_file(index, mine, unread, summaries))
        for path in summaries_wanted(index, mine) - summaries.keys():  # a model or a meter in a module not given
            summaries[path] = analyze(texts[path], resolver.for_path(path).settings_for(path), summarize=True).summaries
        callees.update(callees_by_file(index, mine, summaries))
    return outside, callees


def _told_stdin(path: str, text: str, settings: Settings, resolver: Resolver, cache_dir: str | None) -> Settings:
    """`settings` told what the project of `path` says of the code read from stdin, which stands
    for the file's text (an editor's unsaved buffer): the other files that may call it are read for
    their calls (from the cache where it has them), as `run_project` reads files not given."""
    path = os.path.abspath(path)
    root = project.root_of(path)
    if root is None:
        return settings
    members = [os.path.abspath(p) for p in discover([root], resolver).files]
    members += [] if path in members else [path]
    texts = {p: project.read(p) for p in members if p != path}
    texts[path] = text
    store = cache.Cache(cache_dir) if cache_dir else None
    beyond = [(p, resolver.for_path(p).settings_for(p), store) for p in project.callers_beyond(root, [path], members, texts)]
    job = Job(mode="check", export_calls=True)
    indexes = {root: project.index(root, texts)}
    near = _near(indexes, [path], texts).get(path)
    own = analyze(text, replace(settings, neighbours=near or ()), export_calls=True)
    first = [*run_tasks(beyond, job, 1), FileResult(path, calls=own.calls, summaries=own.summaries)]
    outside, callees = _told(indexes, {root: members}, texts, first, resolver)
    return project.told_settings(settings, outside.get(path), callees.get(path), near)


# ---------------------------------------------------------------- options
def _codes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """`--select GG1,GG201 --select GG3` -> ("GG1", "GG201", "GG3"), each a prefix of a known rule."""
    codes = tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
    known = [r.code for r in all_rules()]
    unknown = [c for c in codes if not any(k.startswith(c) for k in known)]
    if unknown:
        raise click.BadParameter(f"no rule code starts with {', '.join(unknown)} (see `gradguard rules`)")
    return codes


def _use_color(stream) -> bool:
    # https://no-color.org: set and non-empty means no colour.
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _jobs_default() -> int:
    # The cores this process may run on (a container or `taskset` may allow fewer than the machine has).
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _config_failed(e: ConfigError) -> None:
    err = render.Palette(_use_color(sys.stderr))
    click.echo(render.file_error(_shown(e.path), f"`{e.key}`: {e.problem}" if e.key else e.problem, style=err), err=True)
    sys.exit(EXIT_ERROR)


def _shown(path: str) -> str:
    """A path as the user would type it from here."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


FORMATS = ["text", "concise", "json", "sarif", "github"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gradguard", message="%(prog)s %(version)s")
def main() -> None:
    """GradGuard: catches PyTorch's quiet autograd and storage mistakes."""


def _selection_options(f):
    """The flags that override the configuration file (check and config share them)."""
    options = [
        click.option(
            "--select",
            multiple=True,
            callback=_codes,
            metavar="CODES",
            help="Only these rule codes or prefixes (comma-separated; repeatable); replaces the file's selection.",
        ),
        click.option(
            "--extend-select",
            multiple=True,
            callback=_codes,
            metavar="CODES",
            help="Add these rule codes or prefixes to the selection.",
        ),
        click.option(
            "--ignore",
            multiple=True,
            callback=_codes,
            metavar="CODES",
            help="Skip these rule codes or prefixes; the longest matching prefix wins.",
        ),
        click.option(
            "--copy-order",
            type=click.Choice(COPY_ORDERS),
            default=None,
            help="Method order of the copies fixes make. [default: clone-detach]",
        ),
        click.option("--strict/--no-strict", default=None, help="Report likely (not only proven) problems."),
        click.option(
            "--types/--no-types",
            default=None,
            help="Ask jedi what syntax cannot tell (an nn.Module from another file, a NumPy array): slower.",
        ),
        click.option(
            "--python",
            type=click.Path(exists=True, dir_okay=True),
            callback=lambda ctx, param, value: os.path.abspath(value) if value else None,  # symlinks kept: a venv's python is one
            default=None,
            metavar="PATH",
            help="With --types: the project's Python (or virtual environment) whose packages jedi reads; "
            "default: the one running GradGuard.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _overrides(select, extend_select, ignore, copy_order, strict, types=None, python=None) -> dict:
    return {
        "python": python,
        "select": select,
        "extend_select": extend_select,
        "ignore": ignore,
        "copy_order": copy_order,
        "strict": strict,
        "types": types,
    }


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True)
@_selection_options
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (or count) unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of each finding.")
@click.option(
    "--extend-include",
    multiple=True,
    callback=lambda ctx, param, values: tuple(g.strip() for v in values for g in v.split(",") if g.strip()),
    metavar="GLOBS",
    help="Also check the files these globs match when a directory is walked (comma-separated; repeatable).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--no-project", is_flag=True,
              help="Check each file alone, not knowing how the other files of its project call it.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    envvar="GRADGUARD_CACHE_DIR",
    default=None,
    help="The cache's directory (also GRADGUARD_CACHE_DIR).  [default: .gradguard_cache in the project root]",
)
@click.option("--force-exclude", is_flag=True, help="Apply `exclude` to files named on the command line too.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=_jobs_default,
    show_default="all cores",
    help="Files checked in parallel.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="warning",
    show_default=True,
    help="The least severe finding that makes the exit status 1 (info findings are reported, not failed on).",
)
@click.option("--exit-zero", is_flag=True, help="Exit with status 0 even when findings are reported.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="With --fix: exit with status 1 if any file was changed.")
@click.option(
    "--stdin-filename",
    default=None,
    metavar="PATH",
    help="With `-` as the path: the name the code read from stdin goes by (findings, configuration).",
)
@click.option("-v", "--verbose", is_flag=True, help="Also say which files a directory walk passed over, and why.")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only: no summary line.")
@click.option("-s", "--silent", is_flag=True, help="Print nothing; the exit status alone tells.")
@click.option(
    "--output-file",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the report to this file instead of stdout.",
)
def check(
    paths: tuple[str, ...],
    output_format: str,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    copy_order: str | None,
    strict: bool | None,
    types: bool | None,
    python: str | None,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    statistics: bool,
    extend_include: tuple[str, ...],
    no_cache: bool,
    no_project: bool,
    cache_dir: str | None,
    force_exclude: bool,
    jobs: int,
    fail_on: str,
    exit_zero: bool,
    exit_non_zero_on_fix: bool,
    stdin_filename: str | None,
    verbose: bool,
    quiet: bool,
    silent: bool,
    output_file: str | None,
) -> None:
    """Check PATHS (files, or directories searched for *.py, *.ipynb and Python scripts; default: .).

    \b
    Exit status: 0 no finding at --fail-on's severity or above (or --exit-zero);
    1 such findings (or, with --exit-non-zero-on-fix, a file was fixed);
    2 a file could not be checked, or a usage or configuration error.
    """
    ending = Exit(fail_on, exit_zero, exit_non_zero_on_fix, quiet or silent)
    if paths == ("-",):
        overrides = _overrides(select, extend_select, ignore, copy_order, strict, types, python)
        with _redirected(output_file, silent):
            cache_dir = None if no_cache else cache.directory([stdin_filename or "."], cache_dir)
            _check_stdin(stdin_filename, overrides, output_format, fix, unsafe_fixes, diff, ending,
                         (not no_project, cache_dir))
        return
    if "-" in paths:
        raise click.UsageError("`-` (read stdin) must be the only path")
    overrides = {**_overrides(select, extend_select, ignore, copy_order, strict, types, python),
                 "extend_include": extend_include}
    walk = Walk(force_exclude, verbose, None if no_cache else cache.directory(paths, cache_dir), not no_project)
    with _redirected(output_file, silent):
        _check(paths, output_format, overrides, fix, unsafe_fixes, diff, statistics, walk, jobs, ending)


@dataclass(frozen=True)
class Walk:
    """How the files are found, and where their results are kept."""

    force_exclude: bool = False
    verbose: bool = False  # say which files were passed over, and why
    cache_dir: str | None = None  # None: no cache
    project: bool = True  # each file told how the rest of its project calls it (run_project)


@dataclass(frozen=True)
class Exit:
    """What decides the exit status and the closing lines (ruff's conventions)."""

    fail_on: str = "warning"
    zero: bool = False
    on_fix: bool = False
    quiet: bool = False

    def fails(self, findings: list) -> bool:
        return any(RANK[f.severity.value] >= RANK[self.fail_on] for f in findings)


@contextlib.contextmanager
def _redirected(output_file: str | None, silent: bool):
    """The report into --output-file, or (with --silent) nowhere; stderr too when silent."""
    if output_file is None and not silent:
        yield
        return
    target = open(os.devnull if silent else output_file, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    saved = sys.stdout, sys.stderr
    sys.stdout = target
    if silent:
        sys.stderr = target
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        target.close()


def _check_stdin(name: str | None, overrides: dict, output_format: str, fix: bool, unsafe: bool, diff: bool,
                 ending: Exit, project_and_cache: tuple[bool, str | None] = (False, None)) -> None:
    """`gradguard check - --stdin-filename train.py`: the code on stdin, as editors and pre-commit
    integrations hand it over, checked with what the rest of its project says of it (the project of
    the name it goes by). `--fix` prints the fixed code on stdout (the findings left go to stderr);
    `--diff` prints the diff."""
    path = name or "-"
    if path.endswith(notebooks.SUFFIX):
        raise click.UsageError("notebooks cannot be read from stdin: pass the .ipynb file's path")
    try:
        settings = Resolver(overrides).for_path(os.path.abspath(name) if name else os.getcwd()).settings_for(
            os.path.abspath(name) if name else os.path.join(os.getcwd(), "-"))
    except ConfigError as e:
        _config_failed(e)
    data = sys.stdin.buffer.read()
    body = data[len(BOM):] if data.startswith(BOM) else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        click.echo(render.file_error(path, _decode_problem(body, e)), err=True)
        sys.exit(EXIT_ERROR)
    with_project, cache_dir = project_and_cache
    if with_project and name:
        settings = _told_stdin(name, text, settings, Resolver(overrides), cache_dir)
    analysis = _analyse(text, settings, path)
    if analysis.error is not None:
        e = _analysis_error(analysis.error)
        if fix:
            click.echo(text, nl=False)  # an editor replaces the buffer with what it gets: give it back unchanged
        click.echo(render.file_error(path, e.message, e.line, e.column), err=True)
        sys.exit(EXIT_ERROR)
    findings, fixed = analysis.findings, 0
    if fix or diff:
        result = fix_source(text, settings, unsafe=unsafe, analysis=analysis)
        findings, fixed = result.remaining, result.fixed
        for e in _unapplied(result, as_read=diff):
            click.echo(render.file_error(path, e.message, e.line, e.column, level="warning"), err=True)
        if diff:
            click.echo(render.unified_diff(path, text, result.source) if result.source != text else "", nl=False)
        else:
            click.echo(result.source, nl=False)
    palette = render.Palette(_use_color(sys.stderr if fix or diff else sys.stdout))
    lines = [render.finding_line(path, f, palette) for f in findings]
    if output_format == "json" and not (fix or diff):
        click.echo(render.json_report([render.finding_json(path, f, None, None) for f in findings]))
    elif lines:
        click.echo("\n".join(lines), err=fix or diff)
    if not ending.quiet and output_format != "json":
        click.echo("\n".join(render.summary(findings, unsafe=unsafe, fixed=fixed, checked=1)), err=fix or diff)
    failing = ending.fails(findings) or (ending.on_fix and fixed)
    sys.exit(0 if ending.zero or not failing else EXIT_FINDINGS)


def _check(paths, output_format, overrides, fix, unsafe_fixes, diff, statistics, walk: Walk, jobs,
           ending: Exit) -> None:
    resolver = Resolver(overrides)
    framed = output_format == "text" and not diff and not statistics and sys.stdout.isatty()
    mode = "diff" if diff else "fix" if fix else "check"
    job = Job(mode=mode, unsafe=unsafe_fixes, want_source=framed)
    out = render.Palette(_use_color(sys.stdout))
    err = render.Palette(_use_color(sys.stderr))

    try:
        found = discover(paths or ["."], resolver, force_exclude=walk.force_exclude)
        store = cache.Cache(walk.cache_dir) if walk.cache_dir and found.files else None
        tasks = [(path, resolver.for_path(path).settings_for(path), store) for path in found.files]
    except ConfigError as e:
        _config_failed(e)
    if walk.verbose:
        for path, reason in found.skipped:
            click.echo(render.skipped(path, reason, err), err=True)
    for path, reason in found.errors:
        click.echo(render.file_error(path, reason, style=err), err=True)
    if not found.files:
        if output_format in ("json", "sarif") and not diff:
            click.echo(_empty_report(output_format, statistics))
        if not found.errors:
            click.echo(render.warning("No Python files found under the given paths.", err), err=True)
        sys.exit(EXIT_ERROR if found.errors else 0)

    progress = Progress(len(tasks)) if mode != "diff" else Progress(0, enabled=False)
    try:
        results = run_project(tasks, job, jobs, resolver) if walk.project else run_tasks(tasks, job, jobs)
        _report(found, tasks, results, job, output_format, statistics, out, err, progress, ending)
    except KeyboardInterrupt:
        progress.clear()
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    finally:
        if store is not None:
            store.save()


def _empty_report(output_format: str, statistics: bool) -> str:
    if output_format == "sarif":
        return sarif.report([])
    return render.statistics_json([]) if statistics else render.json_report([])


def _report(
    found: Discovered,
    tasks: list,
    results: Iterator[FileResult],
    job: Job,
    output_format: str,
    statistics: bool,
    out: render.Palette,
    err: render.Palette,
    progress: Progress,
    ending: Exit = Exit(),
) -> None:
    """Check the files, print as results arrive (in path order), then sum up and exit."""
    mode = job.mode
    findings: list[Finding] = []
    as_json: list[dict] = []
    as_sarif: list = []
    failed = fixed = diffs = unfixed = 0
    streaming = not statistics and output_format in ("text", "concise", "github")

    def echo(text: str, **kwargs) -> None:
        progress.clear()
        click.echo(text, **kwargs)

    said: set[str] = set()  # notes about the run (the type layer), each once however many workers say it
    for result in results:
        progress.advance()
        for note in result.notes:
            if note not in said:
                said.add(note)
                echo(render.warning(note, err), err=True)
        for message in result.internal_errors:
            echo(render.file_error(result.path, f"internal error: {message}", level="warning", style=err), err=True)
        if result.error is not None:
            failed += 1
            e = result.error
            echo(render.file_error(result.path, e.message, e.line, e.column, style=err), err=True)
        for message in result.skipped:  # a notebook cell that cannot be parsed: the others are checked
            echo(render.file_error(result.path, message, level="warning", style=err), err=True)
        for e in result.unfixed:  # a fix not applied: the others are
            echo(render.file_error(result.path, e.message, e.line, e.column, level="warning", style=err), err=True)
        unfixed += len(result.unfixed)
        fixed += result.fixed
        if mode == "diff":
            if result.diff:
                diffs += 1
                echo(result.diff, nl=False)
            continue
        findings.extend(result.findings)
        for finding in result.findings:
            cell, shown, where = None, finding, None
            if result.cells is not None:
                cell, shown, where = render.in_cells(finding, result.cells)
            if statistics:
                continue
            if output_format == "json":
                as_json.append(render.finding_json(result.path, shown, cell, where))
            elif output_format == "sarif":
                as_sarif.append((result.path, shown, cell))
            elif output_format == "github":
                echo(render.github_annotation(result.path, shown, cell))
            else:
                echo(render.finding_line(result.path, shown, out, cell))
                if job.want_source:
                    echo("\n".join(_frame(result, shown, cell, where, out)) + "\n")
        if streaming:
            progress.draw()
    progress.clear()

    outcome = EXIT_FINDINGS if ending.fails(findings) or (ending.on_fix and fixed) else 0
    if mode == "diff":
        refused = f" {unfixed} fix{'' if unfixed == 1 else 'es'} cannot be applied (see above)." if unfixed else ""
        if fixed:
            click.echo(f"Would fix {render.plural(fixed, 'finding')}.{refused}", err=True)
        else:
            click.echo(f"No fixes available:{refused}" if unfixed else "No fixes available.", err=True)
        outcome = EXIT_FINDINGS if diffs or unfixed else 0
    elif statistics:
        rows = render.statistics(findings, job.unsafe)
        if output_format in ("json", "sarif"):
            click.echo(render.statistics_json(rows))
        else:
            lines = render.statistics_lines(rows)
            summary = [] if ending.quiet else render.summary(findings, unsafe=job.unsafe, failed=failed, fixed=fixed,
                                                             checked=len(tasks))
            click.echo("\n".join([*lines, *summary]))
    elif output_format in ("json", "sarif", "github"):
        if output_format == "json":
            click.echo(render.json_report(as_json))
        elif output_format == "sarif":
            click.echo(sarif.report(as_sarif))
        if fixed and not ending.quiet:
            click.echo(f"Fixed {render.plural(fixed, 'finding')}.", err=True)
    elif not ending.quiet:
        click.echo("\n".join(render.summary(findings, unsafe=job.unsafe, failed=failed, fixed=fixed, checked=len(tasks))))
    if failed or found.errors:
        sys.exit(EXIT_ERROR)
    sys.exit(0 if ending.zero else outcome)


def _frame(result: FileResult, finding: Finding, cell: int | None, where: dict | None, style) -> list[str]:
    """The code frame; a notebook's shows the finding's cell, and names the cells of its notes."""
    if cell is None:
        return render.code_frame(result.source or "", finding, style)
    source = (result.cell_sources or {}).get(cell, "")
    return render.code_frame(source, finding, style, lambda rng: f"{rng.start.line} of cell {where[id(rng)]}")


@main.command(name="config")
@click.argument("path", required=False, default=".", type=click.Path())
@_selection_options
def show_config(
    path: str,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    copy_order: str | None,
    strict: bool | None,
    types: bool | None,
    python: str | None,
) -> None:
    """Print the configuration that applies to PATH (a file or directory; default: .)."""
    resolver = Resolver(_overrides(select, extend_select, ignore, copy_order, strict, types, python))
    try:
        config = resolver.for_path(path)
    except ConfigError as e:
        _config_failed(e)
    file = None if os.path.isdir(path) else os.path.normpath(path)
    source = "defaults (no gradguard.toml or [tool.gradguard] found)"
    if config.path is not None:
        source = _shown(config.path) + (" [tool.gradguard]" if config.path.endswith(PYPROJECT) else "")
    click.echo(f"# {source}")
    click.echo("\n".join(config.describe(file)))
    if file is not None:
        why = skipped_file(file, config, check_parents=True)
        if why is not None:
            unless = " unless --force-exclude" if why.startswith("matches") else ""
            click.echo(f"# a directory walk skips it: {why or 'not a Python file'}; "
                       f"named on the command line, it is checked{unless}")


@main.command()
@click.argument("code")
def rule(code: str) -> None:
    """Explain the rule CODE (or name): what it finds, why, and how to fix it."""
    found = rule_by_code(code)
    if found is None:
        click.echo(f"error: no rule {code!r} (see `gradguard rules`)", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(rule_markdown(found), nl=False)  # the same page as docs/rules/CODE.md


@main.command(name="rules")
def list_rules() -> None:
    """List every rule: code, name, default severity and summary."""
    rows = [(r.code, r.name, r.severity_text(), r.summary) for r in all_rules()]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(3)]
    for row in rows:
        click.echo("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[3]]).rstrip())


@main.command()
@click.option("--stdio", is_flag=True, help="Talk over stdin/stdout (the only transport; accepted for editor configurations).")
def lsp(stdio: bool) -> None:
    """Run the language server on stdin/stdout."""
    try:
        server = importlib.import_module("gradguard.lsp.server")  # optional: the CLI works without it
    except ModuleNotFoundError as e:
        if e.name not in ("gradguard.lsp", "gradguard.lsp.server"):
            raise
        click.echo("error: the language server is not installed (gradguard.lsp.server is missing)", err=True)
        sys.exit(EXIT_ERROR)
    server.main()
