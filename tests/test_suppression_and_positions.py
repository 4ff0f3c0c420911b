"""`# noqa`, `# gradguard: ignore[...]`, skip-file, and columns on non-ASCII lines."""

from __future__ import annotations

import pytest

from gradguard.engine import analyze
from gradguard.findings import utf8_column, utf16_column

LEAK = """import torch
from torch import nn
model = nn.Linear(2, 2)
kept = []
for x in [torch.ones(1, 2)]:
    kept.append(model(x)){comment}
"""


def codes(source: str) -> list[str]:
    return [f.code for f in analyze(source).findings]


@pytest.mark.parametrize(
    "comment,expected",
    [
        ("", ["GG101"]),
        ("  # noqa: GG101", []),
        ("  # noqa", []),
        ("  # NOQA:GG401, GG101", []),
        ("  # noqa: GG401", ["GG101"]),
        ("  # gradguard: ignore[GG101]", []),
        ("  # gradguard: ignore[GG402]", ["GG101"]),
        ("  # a plain comment", ["GG101"]),
    ],
)
def test_line_suppressions(comment, expected):
    assert codes(LEAK.format(comment=comment)) == expected


def test_noqa_inside_a_string_does_not_suppress():
    src = LEAK.format(comment="").replace("kept.append(model(x))", 'kept.append(model(x)); s = "# noqa"')
    assert codes(src) == ["GG101"]


def test_skip_file():
    assert codes("# gradguard: skip-file\n" + LEAK.format(comment="")) == []


def test_columns_on_a_line_with_chinese_and_emoji():
    src = LEAK.format(comment="").replace("    kept.append(model(x))", '    s = "训练😀"; kept.append(model(x))')
    (f,) = analyze(src).findings
    line = src.splitlines()[f.range.start.line - 1]
    assert line[f.range.start.column : f.range.end.column] == "model(x)"
    assert f.range.start.column == 27  # code points
    assert utf16_column(line, f.range.start.column) == 28  # the emoji is two UTF-16 units
    assert utf8_column(line, f.range.start.column) == 34  # 3 bytes per Chinese character, 4 for the emoji


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_fixes_keep_any_line_ending(newline):
    from gradguard.engine.fixes import fix_source

    src = LEAK.format(comment="").replace("\n", newline)
    result = fix_source(src)
    assert result.fixed == 1
    assert result.source == src.replace("kept.append(model(x))", "kept.append(model(x).detach())")
