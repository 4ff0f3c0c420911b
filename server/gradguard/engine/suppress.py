"""`# noqa: GG101`, `# gradguard: ignore[GG101]` and `# gradguard: skip-file`."""

from __future__ import annotations

import io
import re
import tokenize

SKIP_FILE = re.compile(r"^[ \t]*#[ \t]*gradguard:[ \t]*skip-file\b", re.M)
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)
IGNORE = re.compile(r"#\s*gradguard:\s*ignore\[(?P<codes>[^\]]*)\]", re.I)
ALL = "*"
_ANY = re.compile(r"noqa|gradguard:", re.I)  # most files have neither: skip tokenizing them


def skips_file(source: str) -> bool:
    return SKIP_FILE.search(source) is not None


def suppressions(source: str) -> dict[int, set[str]]:
    """Line -> codes suppressed on it (ALL for a bare `# noqa`). Comments only, not strings."""
    found: dict[int, set[str]] = {}
    if _ANY.search(source) is None:
        return found
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            codes = found.setdefault(tok.start[0], set())
            for pattern in (NOQA, IGNORE):
                for m in pattern.finditer(tok.string):
                    listed = m.group("codes")
                    if listed is None:
                        codes.add(ALL)
                    else:
                        codes.update(c.upper() for c in re.split(r"[\s,]+", listed.strip()) if c)
            if not codes:
                del found[tok.start[0]]
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def is_suppressed(code: str, line: int, table: dict[int, set[str]]) -> bool:
    codes = table.get(line)
    return bool(codes) and (ALL in codes or code in codes)
