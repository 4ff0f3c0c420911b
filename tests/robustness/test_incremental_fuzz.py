"""Re-analysing a document edit after edit (re-using the statements an edit left
alone, as the language server does) finds exactly what a fresh analysis of each
version finds: same findings, ranges, messages, fixes, and the same parse errors."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gradguard.engine import Incremental, analyze
from programs import SEEDS, lines_of


def view(result):
    return (result.error, result.findings)


@st.composite
def edit_sequence(draw):
    """A corpus program and up to 8 versions of it, each a small edit of the one before
    (a character typed or deleted, a line deleted, duplicated, indented)."""
    name, source = draw(st.sampled_from(SEEDS))
    versions = [source]
    for _ in range(draw(st.integers(1, 8))):
        text = versions[-1]
        op = draw(st.sampled_from(("type", "delete", "line-delete", "line-duplicate", "indent", "undo")))
        if op in ("type", "delete") and text:
            at = draw(st.integers(0, len(text) - 1))
            text = text[:at] + draw(st.sampled_from("x(.)\n :#")) + text[at:] if op == "type" else text[:at] + text[at + 1 :]
        elif op == "undo" and len(versions) > 1:
            text = versions[-2]
        elif text:
            lines = lines_of(text)
            i = draw(st.integers(0, len(lines) - 1))
            if op == "line-delete":
                del lines[i]
            elif op == "line-duplicate":
                lines.insert(i, lines[i])
            else:
                lines[i] = "    " + lines[i]
            text = "".join(lines)
        versions.append(text)
    return name, versions


@settings(max_examples=150)
@given(edit_sequence())
def test_incremental_analysis_matches_a_fresh_one(case):
    _, versions = case
    state = Incremental()
    for n, text in enumerate(versions):
        assert view(analyze(text, incremental=state)) == view(analyze(text)), f"version {n}"
