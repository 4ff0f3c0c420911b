"""Code actions: a diagnostic's quick fixes, "Ignore GG101 on this line", and
`source.fixAll.gradguard`.

Quick fixes are built from `Diagnostic.data` (filled when the diagnostics were
published), so a code-action request never re-analyses. The edits there carry
the URI and version of the document they were computed for; edits for a
document that has changed since are not offered.
"""

from __future__ import annotations

import io
import tokenize
from typing import Callable, Iterable, Optional

from lsprotocol import types

from gradguard.engine.suppress import NOQA
from gradguard.findings import Position, Range

SOURCE = "gradguard"
FIX_ALL = "source.fixAll.gradguard"
UNSAFE = "(unsafe)"  # ends the title of a fix that can change what the program computes; fix-all never applies one

# Edit as it travels in Diagnostic.data: {"uri", "version", "range", "newText"}
DataEdit = dict


def wanted(kind: str, only: Optional[Iterable[str]]) -> bool:
    """Did the client ask for this kind? (`source.fixAll` asks for `source.fixAll.gradguard`.)"""
    return only is None or any(kind == k or kind.startswith(k + ".") for k in only)


# ------------------------------------------------------------------ ignore comments
def ignore_edit(line: str, code: str) -> Optional[tuple[int, int, str]]:
    """The edit that adds `code` to this line's `# noqa` (or adds one): (start, end, text)
    in code-point columns, or None where a comment cannot go (a backslash continuation)."""
    body = line.rstrip()
    if body.endswith("\\"):
        return None
    comment = _comment(line)
    if comment is not None:
        start, text = comment
        for m in NOQA.finditer(text):
            if m.group("codes"):  # extend `# noqa: GG201` -> `# noqa: GG201, GG101`
                end = start + m.end("codes")
                return end, end, f", {code}"
    return len(body), len(line), f"  # noqa: {code}"


def _comment(line: str) -> Optional[tuple[int, str]]:
    """(column, text) of the line's comment, if the tokenizer sees one."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1], tok.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # a line cut out of a bracketed expression: the comment was seen before the error
    return None


# ------------------------------------------------------------------ building edits
def lsp_range(data: dict) -> types.Range:
    s, e = data["start"], data["end"]
    return types.Range(types.Position(s["line"], s["character"]), types.Position(e["line"], e["character"]))


def range_data(rng: types.Range) -> dict:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def workspace_edit(edits: list[DataEdit], document_changes: bool) -> types.WorkspaceEdit:
    """One workspace edit; versioned per document when the client supports documentChanges."""
    by_uri: dict[str, list] = {}
    versions: dict[str, Optional[int]] = {}
    for e in edits:
        by_uri.setdefault(e["uri"], []).append(types.TextEdit(lsp_range(e["range"]), e["newText"]))
        versions[e["uri"]] = e.get("version")
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=versions[uri]), edits=items)
                for uri, items in by_uri.items()
            ]
        )
    return types.WorkspaceEdit(changes=by_uri)


def _current(edits: list[DataEdit], version_of: Callable[[str], Optional[int]]) -> bool:
    return all(version_of(e["uri"]) == e.get("version") for e in edits)


# ------------------------------------------------------------------ actions
def quick_fixes(
    diagnostic: types.Diagnostic, version_of: Callable[[str], Optional[int]], document_changes: bool
) -> list[types.CodeAction]:
    """The diagnostic's fixes (the first safe one preferred; an unsafe one says so in its
    title), then its ignore comment."""
    data = diagnostic.data if isinstance(diagnostic.data, dict) else None
    if diagnostic.source != SOURCE or data is None:
        return []
    actions = []
    preferred_given = False
    for fix in data.get("fixes", ()):
        if not fix["edits"] or not _current(fix["edits"], version_of):
            continue
        preferred = fix["safe"] and not preferred_given
        preferred_given |= preferred
        actions.append(
            types.CodeAction(
                title=_title(fix),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=preferred or None,
                edit=workspace_edit(fix["edits"], document_changes),
            )
        )
    ignore = data.get("ignore")
    if ignore is not None and _current([ignore], version_of):
        code = diagnostic.code
        actions.append(
            types.CodeAction(
                title=f"Ignore {code} on this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                edit=workspace_edit([ignore], document_changes),
            )
        )
    return actions


def _title(fix: dict) -> str:
    return fix["title"] if fix["safe"] else f"{fix['title']} {UNSAFE}"


def fix_titles(diagnostic: types.Diagnostic) -> list[str]:
    """The titles of a diagnostic's fixes as its quick fixes show them (for its hover)."""
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    return [_title(fix) for fix in data.get("fixes", ()) if fix["edits"]]


def fix_all(edits: list[DataEdit], document_changes: bool) -> Optional[types.CodeAction]:
    if not edits:
        return None
    return types.CodeAction(
        title="GradGuard: fix all safe problems",
        kind=FIX_ALL,
        edit=workspace_edit(edits, document_changes),
    )


def safe_edits(diagnostics: Iterable[types.Diagnostic]) -> list[DataEdit]:
    """Each diagnostic's first safe fix, skipping fixes that overlap one already taken
    (one round: what a notebook's fix-all applies)."""
    taken: list[tuple[str, tuple, tuple]] = []
    edits: list[DataEdit] = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else {}
        fix = next((f for f in data.get("fixes", ()) if f["safe"] and f["edits"]), None)
        if fix is None:
            continue
        spans = [(e["uri"], _key(e["range"]["start"]), _key(e["range"]["end"])) for e in fix["edits"]]
        if any(u == tu and (s < te and ts < e or s == e == ts == te) for u, s, e in spans for tu, ts, te in taken):
            continue
        taken.extend(spans)
        edits.extend(fix["edits"])
    return edits


def _key(pos: dict) -> tuple[int, int]:
    return pos["line"], pos["character"]


def text_change(old: str, new: str) -> Optional[tuple[Range, str]]:
    """The one edit turning `old` into `new`: their differing lines, in code points."""
    if old == new:
        return None
    a, b = old.split("\n"), new.split("\n")
    n = min(len(a), len(b))
    i = 0
    while i < n - 1 and a[i] == b[i]:
        i += 1
    j = 0  # common trailing lines, leaving at least one line on each side
    while j < n - 1 - i and a[-1 - j] == b[-1 - j]:
        j += 1
    if j:
        return Range(Position(i + 1, 0), Position(len(a) - j + 1, 0)), "\n".join(b[i : len(b) - j]) + "\n"
    return Range(Position(i + 1, 0), Position(len(a), len(a[-1]))), "\n".join(b[i:])
