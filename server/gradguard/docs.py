"""Rule documentation: one source (the rule's docstring) for every place it shows.

`gradguard rule`, docs/rules/*.md, the README's rule table, hovers and the LSP
`codeDescription` link all come from here.
"""

from __future__ import annotations

from pathlib import Path

from gradguard.rules import all_rules
from gradguard.rules.base import Rule

# Where the generated pages live in a checkout (and are linked from diagnostics).
REPO_DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules"


def rule_markdown(rule: type[Rule]) -> str:
    """The full page for one rule."""
    return (
        f"# {rule.code} {rule.name}\n\n"
        f"Default severity: **{rule.severity.value}**. {rule.summary}.\n\n"
        f"{rule.docs()}\n"
    )


def url_for(code: str) -> str | None:
    """A link to the rule's generated page, when this install has the pages (a checkout)."""
    page = REPO_DOCS / f"{code}.md"
    return page.as_uri() if page.exists() else None


def rules_table() -> str:
    """The Markdown table of all rules for the README."""
    rows = ["| Code | Name | Severity | What it finds |", "| --- | --- | --- | --- |"]
    for rule in all_rules():
        rows.append(f"| [{rule.code}](docs/rules/{rule.code}.md) | `{rule.name}` | {rule.severity.value} | {rule.summary} |")
    return "\n".join(rows) + "\n"
