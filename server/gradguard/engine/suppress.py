"""`# noqa: GG101`, `# gradguard: ignore[GG101]` and `# gradguard: skip-file`."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

SKIP_FILE = re.compile(r"^[ \t]*#[ \t]*gradguard:[ \t]*skip-file\b", re.M)
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)
IGNORE = re.compile(r"#\s*gradguard:\s*ignore\[(?P<codes>[^\]]*)\]", re.I)
ALL = "*"
_ANY = re.compile(r"noqa|gradguard:", re.I)  # most files have neither: skip tokenizing them


def skips_file(source: str) -> bool:
    return SKIP_FILE.search(source) is not None


@dataclass(frozen=True)
class Directive:
    """One `# noqa[: codes]` or `# gradguard: ignore[codes]` in a comment."""

    line: int  # 1-based
    comment_column: int  # where its comment starts on the line (code points)
    comment: str  # the whole comment token, from `#` to the end of the line
    match: re.Match  # the directive within `comment`
    codes: tuple[str, ...]  # as written (upper-cased); () for a bare `# noqa`
    before: str  # the line's text before the comment

    @property
    def kind(self) -> str:
        return "# noqa" if self.match.re is NOQA else "# gradguard: ignore"


def directives(source: str) -> list[Directive]:
    """Every suppression directive in comments (not strings), in order."""
    found: list[Directive] = []
    if _ANY.search(source) is None:
        return found
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            for pattern in (NOQA, IGNORE):
                for m in pattern.finditer(tok.string):
                    listed = m.group("codes")
                    codes = () if listed is None else tuple(c.upper() for c in re.split(r"[\s,]+", listed.strip()) if c)
                    found.append(Directive(tok.start[0], tok.start[1], tok.string, m, codes, tok.line[: tok.start[1]]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def suppressions(source: str, found: list[Directive] | None = None) -> dict[int, set[str]]:
    """Line -> codes suppressed on it (ALL for a bare `# noqa`)."""
    table: dict[int, set[str]] = {}
    for d in directives(source) if found is None else found:
        if d.match.re is NOQA and d.match.group("codes") is None:
            table.setdefault(d.line, set()).add(ALL)
        elif d.codes:
            table.setdefault(d.line, set()).update(d.codes)
    return table


def is_suppressed(code: str, line: int, table: dict[int, set[str]]) -> bool:
    codes = table.get(line)
    return bool(codes) and (ALL in codes or code in codes)
