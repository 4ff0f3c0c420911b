"""Parsing a module whole, or again after an edit re-using what the edit left alone.

An editor re-sends the whole file on every keystroke; libcst parses about
15,000 lines a second, so a 2,000-line file costs a tenth of a second each time.
Module-level statements that lie wholly before or after the edited text cannot
parse differently (each one is complete: nothing after it can reopen it), so
`Parser` re-parses only the stretch between them, from the statement before the
edit to the statement after it, and splices the new statements in. Anything it
cannot splice with certainty (the stretch fails to parse alone, its indentation
or newline style differs from the file's) falls back to a whole parse.

Every parse also records where each module-level statement's text begins (its
leading comments and blank lines included): positions are then resolved one
statement at a time (positions.py).
"""

from __future__ import annotations

import ast
import re
import sys
import threading
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import partial
from itertools import accumulate
from typing import Optional, Union

import libcst as cst

# libcst's own line-break rule (libcst.metadata.position_provider.NEWLINE_RE)
NEWLINE = re.compile(r"\r\n?|\n")
_INDENTED = re.compile(r"^[ \t]+\S", re.MULTILINE)


@dataclass(frozen=True)
class ParseError:
    message: str
    line: int
    column: int  # 0-based
    syntax: bool = True  # False: valid perhaps, but beyond what is analysed (too deep, too large)


@dataclass(frozen=True)
class Parsed:
    """A module and where each of its module-level statements starts."""

    module: cst.Module
    source: str
    header: Optional[int]  # characters before the first statement (the module's header lines); None: not measured yet
    _sizes: Optional[tuple[int, ...]]  # characters of each statement, leading lines included; None: not measured yet
    _breaks: Optional[tuple[int, ...]]  # line breaks in each statement; None: not measured yet
    header_breaks: int
    reparsed: int = 0  # statements parsed this time (all of them for a whole parse)
    _first_lines: dict = field(default_factory=dict, compare=False, repr=False)
    # What the walk reads of the tree alone (engine._walk): kept for the next analysis of this very
    # parse - an editor's document analysed again, unchanged, for what other files now say of it
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def breaks(self) -> tuple[int, ...]:
        """Line breaks in each statement. A whole parse measures them the first time they are asked
        for - where a finding, a hover or a re-parse needs a position: most files checked have no
        finding, and CPython's parse of the file costs a twentieth of the analysis."""
        if self._breaks is None:
            found = _lines(self.module, self.source)
            if found is None:  # CPython and libcst disagree: print each statement back
                found = with_room(partial(_layout, self.module, self.source, None, 0, 0, 0), None)
            object.__setattr__(self, "_breaks", found._breaks if found is not None else ())
        return self._breaks

    @property
    def laid_out(self) -> bool:
        """Is each statement's first line known (positions can be resolved statement by statement)?"""
        return bool(self.breaks)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Characters of each statement. A whole parse knows only lines (from CPython's parser, a
        tenth of the cost of printing every statement); re-parsing after an edit needs characters,
        measured here the first time they are asked for."""
        if self._sizes is None:
            measured = with_room(partial(_layout, self.module, self.source, None, 0, 0, 0), None)
            ok = measured is not None and measured.breaks == self.breaks
            object.__setattr__(self, "_sizes", measured._sizes if ok else ())
            object.__setattr__(self, "header", measured.header if ok else 0)
        return self._sizes

    @property
    def starts(self) -> list[int]:
        """Offset of each statement's text."""
        sizes = self.sizes  # measures `header` too
        return [self.header + s for s in accumulate(sizes, initial=0)][:-1]

    def first_line(self, top: cst.CSTNode) -> Optional[int]:
        """The 1-based line a module-level statement's text (leading lines included) starts on."""
        if not self._first_lines:
            line = 1 + self.header_breaks
            for stmt, n in zip(self.module.body, self.breaks):
                self._first_lines[stmt] = line
                line += n
        return self._first_lines.get(top)

    def statement_at(self, line: int) -> Optional[cst.CSTNode]:
        """The module-level statement whose text holds a 1-based line."""
        body = self.module.body
        firsts = [1 + self.header_breaks + b for b in accumulate(self.breaks, initial=0)]
        i = bisect_right(firsts, line) - 1
        return body[i] if 0 <= i < len(body) else None


# libcst's native parser recurses on the C stack and overflows an 8 MB one, killing
# the process (SIGSEGV; measured with libcst 1.9): ~1,100 nested brackets, a
# 7,000-term chain in one logical line (`a + a + ...` split over lines inside
# brackets, `- - - x`, `a.b.b.b`), a 10,000-branch `elif` chain. Where a source
# could be one of those, CPython's parser is asked first (it allows 200 nested
# brackets, ~3,000 levels of anything, and fails cleanly beyond), then libcst is
# run on a thread with a large stack. Brackets and `elif` in strings and comments
# count too: the scan errs towards the safe path, which only costs time.
_SCAN = re.compile(r"[()\[\]{}]|\\\r?\n|\r\n?|\n|\belif\b")
MAX_BRACKETS = 200
MAX_LOGICAL_LINE = 4_000  # characters; a line this long holds at most ~2,000 terms
MAX_ELIFS = 1_000
BIG_STACK = 512 * 1024 * 1024


def _could_overflow(source: str) -> bool:
    """Whether libcst's native parser might overflow the stack on `source`: deep
    brackets, a long logical line (brackets and backslashes join physical ones), many `elif`."""
    depth = start = elifs = 0
    for m in _SCAN.finditer(source):
        c = source[m.start()]
        if c in "([{":
            depth += 1
            if depth > MAX_BRACKETS:
                return True
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c == "e":
            elifs += 1
            if elifs > MAX_ELIFS:
                return True
        elif c != "\\" and depth == 0:  # a line break that ends a logical line
            if m.start() - start > MAX_LOGICAL_LINE:
                return True
            start = m.end()
    return len(source) - start > MAX_LOGICAL_LINE


def _libcst(source: str) -> cst.Module:
    if not _could_overflow(source):
        return cst.parse_module(source)
    return _on_big_stack(_vetted_parse, source)


def _vetted_parse(source: str) -> cst.Module:
    # CPython's parser fails cleanly where libcst's would crash. On a fresh thread
    # its verdict depends on the source alone: how deep it lets a tree go depends
    # on how deep the calling stack already is (a CLI worker process is deeper).
    error = _cpython_error(source)
    if error is not None:
        raise _Rejected(error)
    return cst.parse_module(source)


class _Rejected(Exception):
    """CPython's verdict on a source libcst must not be given."""

    def __init__(self, error: ParseError):
        self.error = error


def _on_big_stack(fn, *args):
    result: list = []

    def run():
        try:
            result.append((True, fn(*args)))
        except BaseException as e:  # noqa: BLE001 - handed back to the caller's thread
            result.append((False, e))

    with _stack_lock:
        old = threading.stack_size(BIG_STACK)
        try:
            thread = threading.Thread(target=run, name="gradguard-deep-parse")
            thread.start()
        finally:
            threading.stack_size(old)
    thread.join()
    ok, value = result[0]
    if not ok:
        raise value
    return value


_stack_lock = threading.Lock()

# Valid Python nests up to ~3,000 levels (CPython's parser refuses more); walking
# or printing such a tree recurses in Python several frames a level, past the
# default limit of 1,000.
TOO_DEEP = ParseError("too deeply nested to analyse", 1, 0, syntax=False)
DEEP_RECURSION_LIMIT = 100_000
_deep_lock = threading.RLock()


def with_room(fn, refused):
    """`fn()`; if it runs out of recursion, again on a big stack with a high
    recursion limit (process-wide while it runs, so one such run at a time);
    `refused` if even that is not enough."""
    try:
        return fn()
    except RecursionError:
        pass
    with _deep_lock:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(DEEP_RECURSION_LIMIT)
        try:
            return _on_big_stack(fn)
        except RecursionError:
            return refused
        finally:
            sys.setrecursionlimit(old)


def parse_module(source: str) -> Union[cst.Module, ParseError]:
    try:
        return _libcst(source)
    except _Rejected as e:
        return e.error
    except cst.ParserSyntaxError as e:
        # CPython accepting it means libcst's own limits (~3,000 strings concatenated)
        return _cpython_error(source) or ParseError(
            f"valid Python that libcst cannot parse ({e.message})", 1, 0, syntax=False
        )
    except (RecursionError, MemoryError):
        return ParseError("too deeply nested to parse", 1, 0, syntax=False)
    except Exception as e:  # libcst raises a few other errors on odd input
        return ParseError(f"cannot parse: {e}", 1, 0)


def _cpython_error(source: str) -> Optional[ParseError]:
    """CPython's verdict (None: it accepts the code), asked before libcst sees a
    source that could crash it, and for the words and place of a syntax error
    libcst found: libcst puts its tokenizer's errors at line 1 and lists the
    tokens it expected; CPython says "'(' was never closed" where it was opened.
    A tenth of libcst's parse time."""
    nul = source.find("\0")
    if nul >= 0:  # CPython names no position for it
        line_start = source.rfind("\n", 0, nul) + 1
        return ParseError("source code cannot contain a NUL byte", source.count("\n", 0, nul) + 1, nul - line_start)
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        if "too many nested" in str(e.msg):
            return ParseError("too deeply nested to parse", 1, 0, syntax=False)
        return ParseError(e.msg, e.lineno or 1, max(0, (e.offset or 1) - 1))
    except (RecursionError, MemoryError):
        return ParseError("too deeply nested to parse", 1, 0, syntax=False)
    except ValueError as e:
        return ParseError(f"cannot parse: {e}", 1, 0)
    KNOWN_STARTS.put(source, statement_starts(tree.body))  # (where a finding needs its statements' lines)
    return None


def parse(source: str) -> Union[Parsed, ParseError]:
    """A whole parse."""
    module = parse_module(source)
    if isinstance(module, ParseError):
        return module
    if _may_use_lines(module, source):
        return Parsed(module, source, None, None, None, len(module.header), len(module.body))
    # printing it back recurses in Python
    return with_room(partial(_layout, module, source, None, 0, 0, len(module.body)), TOO_DEEP)


def _may_use_lines(module: cst.Module, source: str) -> bool:
    """No line breaks CPython and libcst may count differently, and statements to count."""
    return not ("\r" in source or "\f" in source or "\x0b" in source or not module.body)


class KnownStarts:
    """The first line of each module-level statement CPython's parser finds in a text (decorators
    included), kept for texts something else parsed with `ast` already (a project's module shapes,
    read before its files are analysed; the vetting of a deep file): `_lines` need not parse them a
    second time. At most `kept` characters of text are kept, the oldest forgotten first: an editor's
    buffer is shaped again on every edit."""

    def __init__(self, kept: int = 8_000_000):
        self.kept, self.size, self.texts = kept, 0, {}

    def get(self, source: str) -> Optional[tuple[int, ...]]:
        return self.texts.get(source)

    def put(self, source: str, starts: tuple[int, ...]) -> None:
        if source in self.texts or len(source) > self.kept:
            return
        while self.texts and self.size + len(source) > self.kept:
            oldest = next(iter(self.texts))
            del self.texts[oldest]
            self.size -= len(oldest)
        self.texts[source] = starts
        self.size += len(source)


KNOWN_STARTS = KnownStarts()


def statement_starts(body: list) -> tuple[int, ...]:
    """The first line of each of CPython's module-level statements `body`, decorators included."""
    return tuple(min([a.lineno, *(d.lineno for d in getattr(a, "decorator_list", ()))]) for a in body)


def _lines(module: cst.Module, source: str) -> Optional[Parsed]:
    """The lines of each module-level statement from CPython's parser (its statements' first
    lines, less libcst's leading lines), without printing the tree; None where unsure."""
    if not _may_use_lines(module, source):
        return None
    theirs = KNOWN_STARTS.get(source)
    if theirs is None:
        try:
            theirs = statement_starts(ast.parse(source).body)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    firsts, k = [], 0
    for stmt in module.body:
        if k >= len(theirs):
            return None
        firsts.append(theirs[k] - len(stmt.leading_lines))
        k += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    if k != len(theirs) or firsts[0] != len(module.header) + 1:
        return None
    lines = source.count("\n") + (0 if source.endswith("\n") else 1)
    ends = [*firsts[1:], lines - len(module.footer) + 1]
    breaks = tuple(b - a for a, b in zip(firsts, ends))
    if min(breaks) < 1:
        return None
    return Parsed(module, source, None, None, breaks, len(module.header), len(module.body))


def _text(module: cst.Module, nodes) -> str:
    return "".join(module.code_for_node(n) for n in nodes)


def _layout(module: cst.Module, source: str, old: Optional[Parsed], front: int, back: int, reparsed: int):
    """Sizes and line breaks of `module`'s parts. With `old`, the first `front` and
    the last `back` statements are old ones, measured already."""
    body = module.body
    if old is None or front == 0:
        header = _text(module, module.header)
        header_size, header_breaks = len(header), len(NEWLINE.findall(header))
    else:
        header_size, header_breaks = old.header, old.header_breaks
    sizes, breaks = [], []
    for i, stmt in enumerate(body):
        j = i if i < front else len(old.sizes) - (len(body) - i) if i >= len(body) - back else None
        if old is not None and j is not None:
            sizes.append(old.sizes[j])
            breaks.append(old.breaks[j])
        else:
            code = module.code_for_node(stmt)
            sizes.append(len(code))
            breaks.append(len(NEWLINE.findall(code)))
    footer = _text(module, module.footer)
    total = header_size + sum(sizes) + len(footer)
    if not module.has_trailing_newline:
        total -= len(module.default_newline)  # libcst drops the newline it added
    if total != len(source):  # never seen; positions then come from a whole-module pass
        return None if old is not None else Parsed(module, source, header_size, (), (), 0, reparsed)
    return Parsed(module, source, header_size, tuple(sizes), tuple(breaks), header_breaks, reparsed)


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # invariant: a[:lo] == b[:lo]; compare only the unknown stretch
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit
    la, lb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class Parser:
    """Parses one document again and again, re-parsing only what each edit touched.

    Statements are re-used relative to the last version that parsed, so the
    first good version after a syntax error is cheap too."""

    def __init__(self):
        self.last: Optional[Parsed] = None

    def parse(self, source: str) -> Union[Parsed, ParseError]:
        last = self.last
        if last is not None and last.sizes:
            if source == last.source:
                return last
            parsed = _splice(last, source)
            if parsed is not None:
                self.last = parsed
                return parsed
        parsed = parse(source)
        if isinstance(parsed, Parsed):
            self.last = parsed
        return parsed


def _splice(old: Parsed, new: str) -> Optional[Parsed]:
    """`new` parsed by re-using `old`'s statements outside the edited stretch; None if unsure."""
    src, body = old.source, old.module.body
    n = len(body)
    p = _common_prefix(src, new)
    q = _common_suffix(src, new, min(len(src), len(new)) - p)
    starts = old.starts
    ends = [s + z for s, z in zip(starts, old.sizes)]
    # Kept in front: statements ending before the edit, less the last one (an
    # edit right after a block may be an indented line that continues it).
    a = max(0, bisect_right(ends, p) - 1)
    # Kept at the back: statements starting after the edit, less the first one
    # (text typed just before a statement may be a decorator of it); never the
    # footer's statement if the edit reaches the footer.
    end_of_body = ends[-1] if ends else old.header
    if len(src) - q > end_of_body:
        b = n
    else:
        b = min(n, bisect_left(starts, len(src) - q) + 1)
    b = max(a, b)
    lo = starts[a] if a > 0 else 0
    hi = (starts[b] if b < n else len(src)) + len(new) - len(src)
    stretch = new[lo:hi]
    module = old.module
    try:
        chunk = _libcst(stretch)
    except Exception:  # a syntax error, or one the whole parse will report better
        return None
    if not chunk.body:
        return None
    # Blocks and newlines equal to the detected defaults are stored as None and
    # rendered with the module's: the stretch must have the file's.
    if chunk.default_newline != module.default_newline:
        return None
    if chunk.default_indent != module.default_indent and _INDENTED.search(stretch):
        return None
    middle = list(chunk.body)
    if a > 0 and chunk.header:  # comment lines opening the stretch lead its first statement
        middle[0] = middle[0].with_changes(leading_lines=[*chunk.header, *middle[0].leading_lines])
    back = list(body[b:])
    if back and chunk.footer:  # comment lines closing it lead the next statement
        back[0] = back[0].with_changes(leading_lines=[*chunk.footer, *back[0].leading_lines])
    spliced = module.with_changes(
        body=[*body[:a], *middle, *back],
        header=module.header if a > 0 else chunk.header,
        footer=module.footer if back else chunk.footer,
        has_trailing_newline=module.has_trailing_newline if back else chunk.has_trailing_newline,
    )
    keep_back = len(back) - (1 if back and chunk.footer else 0)
    return with_room(partial(_layout, spliced, new, old, a, keep_back, len(middle)), None)
