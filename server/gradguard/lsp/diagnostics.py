"""Engine findings as LSP diagnostics, each placed in its client document.

A diagnostic carries everything its code actions need in `data` (the fixes'
edits and the ignore comment, already in client positions), so answering a
code-action request needs neither the text nor another analysis.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from lsprotocol import types
from pygls.uris import from_fs_path

from gradguard import docs
from gradguard.findings import Finding, Position, Range, Related, Safety, Severity
from gradguard.lsp.actions import SOURCE, ignore_edit, range_data
from gradguard.lsp.documents import Snapshot

SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


@lru_cache(maxsize=None)
def _href(code: str) -> Optional[str]:
    return docs.url_for(code)  # a file check: once per code


def diagnostics(snapshot: Snapshot, findings: list[Finding]) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics per client URI; every part of the snapshot gets a list (maybe empty)."""
    out: dict[str, list[types.Diagnostic]] = {p.uri: [] for p in snapshot.parts}
    for finding in findings:
        placed = snapshot.place(finding.range)
        if placed is None:
            continue
        part, rng = placed
        out[part.uri].append(
            types.Diagnostic(
                range=rng,
                message=finding.message,
                severity=SEVERITY[finding.severity],
                code=finding.code,
                code_description=types.CodeDescription(href) if (href := _href(finding.code)) else None,
                source=SOURCE,
                tags=[types.DiagnosticTag.Unnecessary] if "unnecessary" in finding.tags else None,
                related_information=[_related(snapshot, r) for r in finding.related] or None,
                data=_data(snapshot, finding),
            )
        )
    return out


def _related(snapshot: Snapshot, related: Related) -> types.DiagnosticRelatedInformation:
    if related.path:  # a call in another file of the project: its column's line prefix is ASCII (any encoding)
        at = types.Position(related.range.start.line - 1, related.range.start.column)
        return types.DiagnosticRelatedInformation(types.Location(from_fs_path(related.path), types.Range(at, at)),
                                                  related.message)
    part, placed = snapshot.place(related.range)
    return types.DiagnosticRelatedInformation(types.Location(part.uri, placed), related.message)


def _data(snapshot: Snapshot, finding: Finding) -> dict:
    fixes = []
    for fix in finding.fixes:
        edits = [_edit(snapshot, e.range, e.new_text) for e in fix.edits]
        if all(edits):  # a fix straddling two notebook cells or rewriting a magic is not offered
            fixes.append({"title": fix.title, "safe": fix.safety is Safety.SAFE, "edits": edits})
    data: dict = {"fixes": fixes}
    line = finding.range.start.line
    ignore = ignore_edit(snapshot.program_line(line), finding.code)
    if ignore is not None:
        start, end, text = ignore
        data["ignore"] = _edit(snapshot, Range(Position(line, start), Position(line, end)), text)
    return data


def _edit(snapshot: Snapshot, rng: Range, text: str) -> Optional[dict]:
    placed = snapshot.edit(rng, text)
    if placed is None:  # it would straddle two cells or rewrite an IPython magic
        return None
    part, lsp_range, text = placed
    return {"uri": part.uri, "version": part.version, "range": range_data(lsp_range), "newText": text}
