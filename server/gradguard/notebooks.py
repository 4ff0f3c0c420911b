"""Jupyter notebooks on the command line: read with nbformat, fixed in place byte for byte.

The code cells are joined into one program (`gradguard.cells`), so a model built
in one cell and trained in another is analysed as one script. Fixes are made on
that program and carried back to the cells they touch; the notebook file is
then edited only inside those cells' `source` values, so outputs, metadata,
key order and indentation stay exactly as they were.
"""

from __future__ import annotations

import difflib
import json
import re
import warnings
from dataclasses import dataclass
from json.decoder import scanstring
from typing import Optional

from gradguard.cells import Cell, CellMap, Program, join

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

    @property
    def cell_map(self) -> CellMap:
        return CellMap(tuple(i + 1 for i in self.indices), self.program.starts)


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
    program = join([Cell(str(i), 0, s) for i, s in zip(indices, sources)])
    return Notebook(text, tuple(indices), tuple(sources), program)


# ---------------------------------------------------------------- fixes back into cells
def _cell_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


def split_fixed(nb: Notebook, fixed: str) -> Optional[dict[int, str]]:
    """The new source of each cell the fixed program changes (by notebook index), or None
    when a change cannot be put back into one cell (it straddles two, or rewrites a magic)."""
    old = nb.program.source.split("\n")[:-1]
    new = fixed.split("\n")
    if fixed.endswith("\n"):
        new = new[:-1]
    raw: list[str] = []  # the cells' own lines, magics included, aligned with `old`
    owner: list[int] = []
    for k, source in enumerate(nb.sources):
        lines = _cell_lines(source)
        raw += lines
        owner += [k] * len(lines)
    if len(raw) != len(old):
        return None
    out: list[list[str]] = [[] for _ in nb.sources]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            for i in range(i1, i2):
                out[owner[i]].append(raw[i])
            continue
        cells = {owner[i] for i in range(i1, i2)}
        if len(cells) > 1 or any(raw[i] != old[i] for i in range(i1, i2)):
            return None
        k = owner[i1] if i1 < len(owner) else len(nb.sources) - 1
        out[k].extend(new[j1:j2])
    changed = {}
    for k, lines in enumerate(out):
        text = "\n".join(lines) + ("\n" if nb.sources[k].endswith("\n") and lines else "")
        if text != nb.sources[k]:
            changed[nb.indices[k]] = text
    return changed


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
