"""SARIF 2.1.0 output (`--output-format sarif`), as GitHub code scanning reads it.

One run; every rule described in `tool.driver.rules` (its page as `help`); each
result with its region (columns in code points, as `columnKind` says), the
evidence as related locations and its fixes as replacements. Paths are
relative to the current directory (`%SRCROOT%`) when they are inside it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from gradguard import __version__
from gradguard.docs import rule_markdown, url_for
from gradguard.findings import Finding, Range, Severity
from gradguard.rules import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
ROOT_ID = "%SRCROOT%"


def _region(rng: Range) -> dict:
    return {
        "startLine": rng.start.line,
        "startColumn": rng.start.column + 1,
        "endLine": rng.end.line,
        "endColumn": rng.end.column + 1,
    }


def _artifact(path: str) -> dict:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute)
    if rel.startswith(".."):
        return {"uri": Path(absolute).as_uri()}
    return {"uri": Path(rel).as_posix(), "uriBaseId": ROOT_ID}


def _rule(rule) -> dict:
    out = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "help": {"text": rule_markdown(rule), "markdown": rule_markdown(rule)},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
    }
    url = url_for(rule.code)
    if url is not None:
        out["helpUri"] = url
    return out


def result(path: str, finding: Finding, rule_index: int, cell: Optional[int] = None) -> dict:
    artifact = _artifact(path)
    out = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": _region(finding.range)}}],
    }
    if finding.related:
        out["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": {"artifactLocation": _artifact(r.path) if r.path else artifact,
                                     "region": _region(r.range)},
                "message": {"text": r.message},
            }
            for i, r in enumerate(finding.related)
        ]
    fixes = [f for f in finding.fixes if f.edits]
    if fixes and cell is None:  # a notebook's regions are in its cells, not its JSON: no replacements
        out["fixes"] = [
            {
                "description": {"text": f"{fix.title} ({fix.safety.value})"},
                "artifactChanges": [
                    {
                        "artifactLocation": artifact,
                        "replacements": [
                            {"deletedRegion": _region(e.range), "insertedContent": {"text": e.new_text}} for e in fix.edits
                        ],
                    }
                ],
            }
            for fix in fixes
        ]
    if cell is not None:
        out["properties"] = {"cell": cell}
    return out


def report(items: list[tuple[str, Finding, Optional[int]]]) -> str:
    """The SARIF log for (path, finding, notebook cell or None) in output order."""
    rules = list(all_rules())
    index = {r.code: i for i, r in enumerate(rules)}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "gradguard", "version": __version__, "rules": [_rule(r) for r in rules]}},
                "originalUriBaseIds": {ROOT_ID: {"uri": Path(os.getcwd()).as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [result(path, f, index[f.code], cell) for path, f, cell in items],
            }
        ],
    }
    return json.dumps(log, indent=2)
