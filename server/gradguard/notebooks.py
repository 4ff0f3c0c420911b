"""Jupyter notebooks on the command line: read with nbformat, fixed in place byte for byte.

The code cells are joined into one program (`gradguard.cells`), so a model built
in one cell and trained in another is analysed as one script. Fixes are made on
that program and carried back to the cells they touch; the notebook file is
then edited only inside those cells' `source` values, so outputs, metadata,
key order and indentation stay exactly as they were.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, replace
from json.decoder import scanstring
from typing import Optional

from gradguard.cells import Cell, CellMap, Program, join, why_not_in_cell

SUFFIX = ".ipynb"
PYTHON_LANGUAGES = {"python", "python3", "ipython", "ipython3"}


class NotebookError(ValueError):
    pass


@dataclass(frozen=True)
class Notebook:
    text: str  # the file as read
    indices: tuple[int, ...]  # 0-based index in `cells` of each code cell joined
    sources: tuple[str, ...]  # each such cell's source
    program: Program
    forced: tuple[tuple[int, str], ...] = ()  # cells left out because the engine could not parse them (see `without`)

    def without(self, line: int, why: str) -> Optional["Notebook"]:
        """The notebook with the cell holding program `line` left out, or None if it is out already."""
        k, _ = _locate(self.program, line)
        if any(k == skipped for skipped, _ in self.program.skipped):
            return None
        forced = (*self.forced, (k, why))
        return replace(self, forced=forced, program=join(_cells(self.indices, self.sources), forced))

    @property
    def cell_map(self) -> CellMap:
        return CellMap(tuple(i + 1 for i in self.indices), self.program.starts, self.program.indents)

    def skipped(self) -> list[str]:
        """What to say of the cells left out of the analysis: Python cannot parse them."""
        return [f"cell {self.indices[k] + 1} skipped: {why}" for k, why in self.program.skipped]


def read(text: str) -> Notebook:
    """The notebook's Python code cells; a notebook of another language has none."""
    import nbformat  # here: a run without notebooks does not pay for importing it

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat warns about schema details that do not matter here
            nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    except Exception as e:  # nbformat raises several kinds for a bad file
        raise NotebookError(f"not a readable notebook: {e}") from None
    if nb.get("nbformat", 0) < 4:
        raise NotebookError(f"nbformat {nb.get('nbformat')} notebooks are not supported (only version 4)")
    metadata = nb.get("metadata", {})
    language = (metadata.get("kernelspec", {}).get("language") or metadata.get("language_info", {}).get("name") or "python")
    indices, sources = [], []
    if str(language).lower() in PYTHON_LANGUAGES:
        for i, cell in enumerate(nb.cells):
            if cell.get("cell_type") == "code":
                indices.append(i)
                sources.append(cell.get("source", ""))
    return Notebook(text, tuple(indices), tuple(sources), join(_cells(indices, sources)))


# ---------------------------------------------------------------- fixes, cell by cell
@dataclass(frozen=True)
class Refused:
    """A fix that cannot be put into the notebook: where (as Jupyter numbers cells) and why."""

    cell: int
    line: int  # in the cell once the other fixes are made
    code: str
    reason: str
    line_before: int = 0  # in the cell as read (--diff writes nothing); 0: the same as `line`
    blocker: Optional[tuple[str, int, int, int]] = None  # the fix it overlapped: (code, cell, line, line before)

    def message(self, *, as_read: bool = False) -> str:
        line = (self.line_before or self.line) if as_read else self.line
        reason = self.reason
        if self.blocker is not None:
            code, cell, after, before = self.blocker
            reason = (f"it overlaps the fix of the {code} finding on line {before if as_read else after} of cell "
                      f"{cell}, applied first, and {reason}")
        return f"cell {self.cell}, line {line}: {self.code} fix not applied: {reason}"

    def __str__(self) -> str:
        return self.message()


@dataclass
class CellFixes:
    sources: tuple[str, ...]  # every joined cell's source after the fixes
    fixed: int
    refused: list[Refused]

    def changes(self, nb: Notebook) -> dict[int, str]:
        """New source by notebook index, for the cells whose source changed."""
        return {i: new for i, old, new in zip(nb.indices, nb.sources, self.sources) if new != old}


def fix_cells(nb: Notebook, settings=None, *, unsafe: bool = False, analysis=None) -> CellFixes:
    """Apply the fixes --fix would apply, each edit inside the cell it falls in: a magic
    elsewhere never blocks a fix, and a fix that would straddle two cells or touch an
    IPython line is refused (and reported), not the whole notebook. Rounds as fix_source
    (engine/fixes.py), and as there, a fix that waited for an overlapping one and is not
    offered after it is reported. The refusals of cells are those of the last analysis,
    so each is reported once, at the line the findings printed after the fixes point to."""
    from gradguard.engine import analyze
    from gradguard.engine.fixes import LIMIT, MAX_ROUNDS, apply_edits, key, still_offered

    history = [list(nb.sources)]  # the cells' sources before each round, and after the last
    rounds: list[dict[int, list]] = []  # each applied round's edits, per joined cell
    program = nb.program
    result = analysis if analysis is not None else analyze(program.source, settings)
    fixed, refused, waiting = 0, [], []
    dropped = []  # (round, cell index, line, code, why, blocker: (code, cell index, line) or None)
    while result.error is None:
        sources = history[-1]
        if waiting:  # the fixes that waited last round: offered again, or not and why
            before = _joined(nb, history[-2]).source
            keys = [key(f, before) for f, _ in waiting]
            for (f, blocker), why in zip(waiting, still_offered(keys, result.findings, program.source, unsafe)):
                if why is not None:
                    k, line = _locate(_joined(nb, history[-2]), f.range.start.line)
                    kb, line_b = _locate(_joined(nb, history[-2]), blocker.range.start.line)
                    dropped.append((len(rounds) - 1, k, line, f.code, why, (blocker.code, kb, line_b)))
        per_cell, chosen, refused, waiting = _plan(nb, program, sources, result.findings, unsafe)
        if chosen and len(rounds) == MAX_ROUNDS:
            for f in [*chosen, *(f for f, _ in waiting)]:
                k, line = _locate(program, f.range.start.line)
                dropped.append((len(rounds), k, line, f.code, LIMIT, None))
            break
        if not chosen:
            break
        new_sources = list(sources)
        for k, edits in per_cell.items():
            new_sources[k] = apply_edits(sources[k], edits)
        new_program = _joined(nb, new_sources)
        check = analyze(new_program.source, settings)
        if check.error is not None:  # a fix that breaks the program is a bug: keep what we had
            break
        history.append(new_sources)
        rounds.append(per_cell)
        program, result = new_program, check
        fixed += len(chosen)
    numbers = [i + 1 for i in nb.indices]
    refused = [replace(r, line_before=_line_in(history, rounds, nb.indices.index(r.cell - 1), r.line, len(rounds), 0))
               for r in refused]
    for round_, k, line, code, why, blocker in dropped:
        after, before = (_line_in(history, rounds, k, line, round_, target) for target in (len(rounds), 0))
        placed = None
        if blocker is not None:
            b_code, kb, line_b = blocker
            placed = (b_code, numbers[kb], *(_line_in(history, rounds, kb, line_b, round_, t) for t in (len(rounds), 0)))
        refused.append(Refused(numbers[k], after, code, why, before, placed))
    return CellFixes(tuple(history[-1]), fixed, refused)


def _joined(nb: Notebook, sources) -> Program:
    return join(_cells(nb.indices, sources), nb.forced)


def _cells(indices, sources) -> list[Cell]:
    return [Cell(str(i), 0, t) for i, t in zip(indices, sources)]


def _line_in(history: list, rounds: list, k: int, line: int, source: int, target: int) -> int:
    """A line of joined cell `k` in the cell's text of round `source`, as it is in that of
    round `target` (a line an edit rewrote is where the edit kept it, else its first line)."""
    from gradguard.engine.fixes import carry
    from gradguard.findings import Position

    texts = [sources[k] for sources in history]
    edits = [per_cell.get(k, []) for per_cell in rounds]
    return carry(Position(line, 0), texts, edits, source, target).line


def _plan(nb: Notebook, program: Program, sources: list, findings, unsafe: bool):
    """One round: the edits per joined cell (fixes overlapping an earlier one wait for the
    next round), the findings they fix, the fixes that cannot be made at all, and the
    (finding, the finding whose fix it overlaps) that wait."""
    from gradguard.engine.fixes import chosen_fix, overlaps

    per_cell: dict[int, list] = {}
    taken: list[tuple[int, tuple, tuple, object]] = []
    refused: dict[tuple[int, int, str], str] = {}
    program_lines = program.source.split("\n")
    chosen, waiting = [], []
    for finding in findings:
        fix = chosen_fix(finding, unsafe)
        if fix is None:
            continue
        mapped = [_in_cell(program, program_lines, sources, e) for e in fix.edits]
        problem = next((m for m in mapped if isinstance(m, str)), None)
        if problem is not None:
            k, line = _locate(program, finding.range.start.line)
            refused.setdefault((nb.indices[k] + 1, line, finding.code), problem)
            continue
        spans = [(k, (e.range.start.line, e.range.start.column), (e.range.end.line, e.range.end.column)) for k, e in mapped]
        blocker = next((f for k, s, e in spans for tk, ts, te, f in taken if k == tk and overlaps([(s, e)], [(ts, te)])), None)
        if blocker is not None:
            waiting.append((finding, blocker))  # overlaps a fix of this round (or inserts where one inserts): the next round
            continue
        taken.extend((k, s, e, finding) for k, s, e in spans)
        for k, e in mapped:
            per_cell.setdefault(k, []).append(e)
        chosen.append(finding)
    return per_cell, chosen, [Refused(cell, line, code, why) for (cell, line, code), why in refused.items()], waiting


def offered(nb: Notebook, findings: list) -> list:
    """The findings with only the fixes that can be made inside the cells (what the
    language server offers too): a fix that would straddle cells or rewrite a magic is
    neither shown nor counted as fixable; `fix_cells` reports it. An edit's text is the
    cell's (re-indented where IPython dedents the cell); its range stays the program's."""
    lines = nb.program.source.split("\n")
    out = []
    for f in findings:
        fixes = []
        for fix in f.fixes:
            mapped = [_in_cell(nb.program, lines, nb.sources, e) for e in fix.edits]
            if not any(isinstance(m, str) for m in mapped):
                edits = tuple(replace(e, new_text=m[1].new_text) for e, m in zip(fix.edits, mapped))
                fixes.append(fix if edits == fix.edits else replace(fix, edits=edits))
        out.append(f if fixes == list(f.fixes) else replace(f, fixes=tuple(fixes)))
    return out


def _locate(program: Program, line: int) -> tuple[int, int]:
    """(index among the joined cells, 1-based line in that cell) of a program line."""
    k = max((i for i, start in enumerate(program.starts) if start <= line), default=0)
    return k, line - program.starts[k] + 1


def _in_cell(program: Program, program_lines: list[str], sources: list, edit):
    """The edit in its cell's own coordinates, as (cell index, Edit) - or why it cannot be."""
    from gradguard.findings import Edit, Position, Range

    k, l1 = _locate(program, edit.range.start.line)
    k2, l2 = _locate(program, edit.range.end.line)
    if k2 != k:
        return "it spans two cells"
    cell_lines = sources[k].split("\n")
    indent = program.indents[k]
    why = why_not_in_cell(cell_lines, program_lines, program.starts[k], l1, l2, indent)
    if why is not None:
        return why
    start, end, text = indent.edit(cell_lines, (l1, edit.range.start.column), (l2, edit.range.end.column), edit.new_text)
    return k, Edit(Range(Position(*start), Position(*end)), text)


# ---------------------------------------------------------------- editing the JSON in place
_WS = re.compile(r"[ \t\n\r]*")


def _skip(s: str, i: int) -> int:
    return _WS.match(s, i).end()


def _value_end(s: str, i: int) -> int:
    c = s[i]
    if c == '"':
        return scanstring(s, i + 1)[1]
    if c == "{":
        end = i + 1
        for _, _, end in _members(s, i):
            pass
        return _skip(s, end) + 1
    if c == "[":
        end = i + 1
        for _, end in _items(s, i):
            pass
        return _skip(s, end) + 1
    return json.JSONDecoder().raw_decode(s, i)[1]


def _members(s: str, i: int):
    """(key, value start, value end) of the object starting at s[i] == "{"."""
    i = _skip(s, i + 1)
    if s[i] == "}":
        return
    while True:
        key, i = scanstring(s, i + 1)
        i = _skip(s, _skip(s, i) + 1)  # past ":"
        end = _value_end(s, i)
        yield key, i, end
        i = _skip(s, end)
        if s[i] == "}":
            return
        i = _skip(s, i + 1)  # past ","


def _items(s: str, i: int):
    """(start, end) of each item of the array starting at s[i] == "["."""
    i = _skip(s, i + 1)
    if s[i] == "]":
        return
    while True:
        end = _value_end(s, i)
        yield i, end
        i = _skip(s, end)
        if s[i] == "]":
            return
        i = _skip(s, i + 1)


def _source_spans(text: str) -> dict[int, tuple[int, int]]:
    """Cell index -> where its `source` value is in the file's text."""
    top = _skip(text, 0)
    cells = next((start for key, start, _ in _members(text, top) if key == "cells"), None)
    spans = {}
    if cells is None:
        return spans
    for index, (start, _) in enumerate(_items(text, cells)):
        for key, v_start, v_end in _members(text, start):
            if key == "source":
                spans[index] = (v_start, v_end)
    return spans


def _encode(source: str, old: str, ascii_only: bool) -> str:
    """`source` as JSON written the way the old value was: a string, or a list of lines in its layout."""
    if not old.startswith("["):
        return json.dumps(source, ensure_ascii=ascii_only)
    lines = re.findall(r"[^\n]*\n|[^\n]+$", source)
    if not lines:
        return "[]"
    inner = old[1:-1]
    if inner.strip():
        lead = inner[: len(inner) - len(inner.lstrip())]  # e.g. "\n    " before the first line
        tail = inner[len(inner.rstrip()) :]  # before the closing bracket
        after_comma = re.search(r",([ \t\r\n]*)\"", inner)
        sep = "," + (after_comma.group(1) if after_comma else lead)
    else:
        lead, tail, sep = "\n", "\n", ",\n"
    return "[" + lead + sep.join(json.dumps(line, ensure_ascii=ascii_only) for line in lines) + tail + "]"


def rewrite(text: str, changes: dict[int, str]) -> str:
    """The notebook's text with the given cells' sources replaced and nothing else touched."""
    spans = _source_spans(text)
    ascii_only = text.isascii() and "\\u" in text  # keep a file that escapes non-ASCII escaping it
    out, last = [], 0
    for index in sorted(changes):
        start, end = spans[index]
        out += [text[last:start], _encode(changes[index], text[start:end], ascii_only)]
        last = end
    out.append(text[last:])
    return "".join(out)
