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
from dataclasses import dataclass, field
from itertools import repeat

import click

from gradguard import __version__, render
from gradguard.discovery import Discovered, discover
from gradguard.docs import rule_markdown
from gradguard.engine import analyze
from gradguard.engine.fixes import chosen_fix, fix_source
from gradguard.findings import Finding
from gradguard.rules import all_rules, rule_by_code
from gradguard.settings import COPY_ORDERS, Settings

BOM = b"\xef\xbb\xbf"
EXIT_FINDINGS = 1
EXIT_ERROR = 2


# ---------------------------------------------------------------- one file (runs in worker processes)
@dataclass(frozen=True)
class Job:
    """What to do with every file; sent to each worker once per chunk, so keep it small."""

    settings: Settings
    mode: str = "check"  # "check" | "fix" (write) | "diff" (print, never write)
    unsafe: bool = False
    want_source: bool = False  # code frames need the text the findings point into


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
    fixed: int = 0
    diff: str = ""


def check_file(path: str, job: Job) -> FileResult:
    """Read, analyse and maybe fix one file; never raises, so one bad file cannot stop the run."""
    try:
        return _check_file(path, job)
    except Exception as e:  # an engine bug must not hide the other files' results
        return FileResult(path, error=FileError(f"internal error: {type(e).__name__}: {e}"))


def _check_file(path: str, job: Job) -> FileResult:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return FileResult(path, error=FileError(e.strerror or str(e)))
    bom = data.startswith(BOM)
    if bom:
        data = data[len(BOM) :]
    try:
        text = data.decode("utf-8")  # bytes.decode keeps "\r\n" and "\r" as they are
    except UnicodeDecodeError as e:
        return FileResult(path, error=FileError(_decode_problem(data, e)))

    analysis = analyze(text, job.settings)
    if analysis.error is not None:
        err = analysis.error
        return FileResult(path, error=FileError(f"SyntaxError: {err.message}", err.line, err.column))
    result = FileResult(
        path, analysis.findings, text if job.want_source else None, internal_errors=list(analysis.internal_errors)
    )
    if job.mode == "check" or not any(chosen_fix(f, job.unsafe) for f in analysis.findings):
        return result

    try:
        fixed = fix_source(text, job.settings, unsafe=job.unsafe, analysis=analysis)
    except Exception as e:  # report the findings unfixed rather than lose them
        result.internal_errors.append(f"fixing failed: {type(e).__name__}: {e}")
        return result
    if fixed.source == text:
        return result
    if job.mode == "diff":
        result.diff = render.unified_diff(path, text, fixed.source)
        result.fixed = fixed.fixed
        return result
    try:
        write_atomic(path, (BOM if bom else b"") + fixed.source.encode("utf-8"))
    except OSError as e:
        result.error = FileError(f"cannot write fixes: {e.strerror or e}")
        return result
    result.findings = fixed.remaining
    result.source = fixed.source if job.want_source else None
    result.fixed = fixed.fixed
    return result


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


def check_files(paths: list[str], job: Job, jobs: int) -> Iterator[FileResult]:
    """Results in the order of `paths`, however many processes do the work."""
    workers = min(jobs, len(paths))
    if workers <= 1:
        yield from (check_file(p, job) for p in paths)
        return
    chunksize = max(1, len(paths) // (workers * 4))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    try:
        yield from pool.map(check_file, paths, repeat(job), chunksize=chunksize)
    finally:
        pool.shutdown(cancel_futures=True)


def _ignore_interrupts() -> None:
    # Ctrl-C is the parent's to handle: one message, not a traceback per worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gradguard", message="%(prog)s %(version)s")
def main() -> None:
    """GradGuard: catches PyTorch's quiet autograd and storage mistakes."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--select",
    multiple=True,
    callback=_codes,
    metavar="CODES",
    help="Only these rule codes or prefixes (comma-separated; repeatable). Default: all.",
)
@click.option(
    "--ignore",
    multiple=True,
    callback=_codes,
    metavar="CODES",
    help="Skip these rule codes or prefixes; the longest matching prefix wins.",
)
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (or count) unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them.")
@click.option(
    "--copy-order",
    type=click.Choice(COPY_ORDERS),
    default=None,
    help="Method order of the copies fixes make. [default: clone-detach]",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=_jobs_default,
    show_default="all cores",
    help="Files checked in parallel.",
)
def check(
    paths: tuple[str, ...],
    output_format: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    copy_order: str | None,
    jobs: int,
) -> None:
    """Check PATHS (files, or directories searched for *.py; default: .)."""
    options = {"select": select} if select else {}
    if copy_order:
        options["copy_order"] = copy_order
    settings = Settings(ignore=ignore, **options)
    terminal = output_format == "text" and not diff and sys.stdout.isatty()
    mode = "diff" if diff else "fix" if fix else "check"
    job = Job(settings, mode, unsafe_fixes, want_source=terminal)
    out = render.Palette(_use_color(sys.stdout))
    err = render.Palette(_use_color(sys.stderr))

    found = discover(paths or ["."])
    for path, reason in found.errors:
        click.echo(render.file_error(path, reason, style=err), err=True)
    if not found.files:
        if output_format == "json" and not diff:
            click.echo(render.json_report([]))
        if not found.errors:
            click.echo(render.warning("No Python files found under the given paths.", err), err=True)
        sys.exit(EXIT_ERROR if found.errors else 0)

    try:
        _report(found, job, jobs, output_format, out, err)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)


def _report(
    found: Discovered, job: Job, jobs: int, output_format: str, out: render.Palette, err: render.Palette
) -> None:
    """Check the files, print as results arrive (in path order), then sum up and exit."""
    mode = job.mode
    terminal = job.want_source
    findings: list[Finding] = []
    as_json: list[dict] = []
    failed = fixed = diffs = 0
    for result in check_files(found.files, job, jobs):
        for message in result.internal_errors:
            click.echo(
                render.file_error(result.path, f"internal error: {message}", level="warning", style=err), err=True
            )
        if result.error is not None:
            failed += 1
            e = result.error
            click.echo(render.file_error(result.path, e.message, e.line, e.column, style=err), err=True)
        fixed += result.fixed
        if mode == "diff":
            if result.diff:
                diffs += 1
                click.echo(result.diff, nl=False)
            continue
        findings.extend(result.findings)
        if output_format == "json":
            as_json.extend(render.finding_json(result.path, f) for f in result.findings)
            continue
        for finding in result.findings:
            click.echo(render.finding_line(result.path, finding, out))
            if terminal and result.source is not None:
                click.echo("\n".join(render.code_frame(result.source, finding, out)) + "\n")

    if mode == "diff":
        click.echo(f"Would fix {render.plural(fixed, 'finding')}." if fixed else "No fixes available.", err=True)
        outcome = EXIT_FINDINGS if diffs else 0
    else:
        if output_format == "json":
            click.echo(render.json_report(as_json))
            if fixed:
                click.echo(f"Fixed {render.plural(fixed, 'finding')}.", err=True)
        else:
            click.echo("\n".join(render.summary(findings, unsafe=job.unsafe, failed=failed, fixed=fixed)))
        outcome = EXIT_FINDINGS if findings else 0
    sys.exit(EXIT_ERROR if failed or found.errors else outcome)


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
    rows = [(r.code, r.name, r.severity.value, r.summary) for r in all_rules()]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(3)]
    for row in rows:
        click.echo("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[3]]).rstrip())


@main.command()
def lsp() -> None:
    """Run the language server on stdin/stdout."""
    try:
        server = importlib.import_module("gradguard.lsp.server")  # optional: the CLI works without it
    except ModuleNotFoundError as e:
        if e.name not in ("gradguard.lsp", "gradguard.lsp.server"):
            raise
        click.echo("error: the language server is not installed (gradguard.lsp.server is missing)", err=True)
        sys.exit(EXIT_ERROR)
    server.main()
