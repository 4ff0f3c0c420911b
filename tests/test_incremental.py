"""Incremental re-analysis (engine/parsing.py, engine/positions.py): after any edit,
the spliced parse must print back the new text and give exactly the findings a
fresh analysis gives; an edit inside one function re-parses a few statements only;
and a dropped analysis leaves no cyclic garbage behind."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradguard.engine import Incremental, analyze
from gradguard.engine.parsing import Parsed, Parser, parse

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {p.name: p.read_text() for p in sorted((ROOT / "examples").glob("*.py"))}
LINES = [
    "",
    "    total = total + loss",
    "        kept.append(loss)",
    "# a comment between statements",
    "    # an indented comment",
    "x = (",
    "@torch.no_grad()",
    "def helper(t):",
    "    return t.detach()",
    "class Net(nn.Module):",
    "\tpass",
    "if True: y = 1; z = 2",
    '"""',
]


def edits(text: str):
    """Line-level edits of `text`: insert, delete, replace, indent, dedent, duplicate."""
    n = len(text.split("\n"))
    return st.lists(
        st.tuples(
            st.sampled_from(["insert", "delete", "replace", "indent", "dedent", "duplicate"]),
            st.integers(0, n),
            st.sampled_from(LINES),
        ),
        min_size=1,
        max_size=4,
    )


def apply(text: str, edit) -> str:
    lines = text.split("\n")
    op, i, new = edit
    i = min(i, len(lines) - 1)
    if op == "insert":
        lines.insert(i, new)
    elif op == "delete":
        del lines[i]
    elif op == "replace":
        lines[i] = new
    elif op == "indent":
        lines[i] = "    " + lines[i]
    elif op == "dedent":
        lines[i] = lines[i].lstrip()
    else:
        lines.insert(i, lines[i])
    return "\n".join(lines)


def signature(findings):
    return [(f.code, f.range, f.message, f.related, f.fixes) for f in findings]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_spliced_parse_equals_a_fresh_one(name, data):
    text = EXAMPLES[name]
    incremental = Incremental()
    analyze(text, incremental=incremental)
    for edit in data.draw(edits(text)):
        text = apply(text, edit)
        fresh = parse(text)
        spliced = incremental.parser.parse(text)
        assert isinstance(spliced, Parsed) == isinstance(fresh, Parsed)
        if isinstance(fresh, Parsed):
            assert spliced.module.code == text
            assert [spliced.first_line(s) for s in spliced.module.body] == [
                fresh.first_line(s) for s in fresh.module.body
            ]
            assert signature(analyze(text, incremental=incremental).findings) == signature(analyze(text).findings)


def test_an_edit_inside_a_function_reparses_its_neighbourhood_only():
    text = EXAMPLES["train_leaky.py"]
    incremental = Incremental()
    first = analyze(text, incremental=incremental)
    statements = len(parse(text).module.body)
    assert first.reparsed == statements > 10
    edited = text.replace("lr=0.05", "lr=0.01")
    assert edited != text
    again = analyze(edited, incremental=incremental)
    assert again.reparsed <= 3
    assert signature(again.findings) == signature(analyze(edited).findings)


def test_typing_a_line_at_the_end_of_a_block_continues_the_block():
    parser = Parser()
    parser.parse("import torch\n\ndef f(x):\n    y = x * 2\n\nz = 1\n")
    text = "import torch\n\ndef f(x):\n    y = x * 2\n    return y\n\nz = 1\n"
    parsed = parser.parse(text)
    assert parsed.module.code == text
    assert len(parsed.module.body) == 3 and len(parsed.module.body[1].body.body) == 2


def test_after_a_syntax_error_the_last_good_version_is_reused():
    parser = Parser()
    good = "import torch\n\n\ndef f(x):\n    return x\n\n\ndef g(x):\n    return x\n"
    parser.parse(good)
    broken = good.replace("return x\n\n\ndef g", "return (x\n\n\ndef g")
    assert not isinstance(parser.parse(broken), Parsed)
    fixed = good.replace("return x\n\n\ndef g", "return x + 1\n\n\ndef g")
    parsed = parser.parse(fixed)
    assert parsed.module.code == fixed and parsed.reparsed <= 3


def test_a_file_without_a_final_newline_and_with_crlf():
    parser = Parser()
    text = "import torch\r\n\r\ndef f(x):\r\n    return x.clone()\r\n\r\nx = 1"
    parser.parse(text)
    edited = text.replace("x = 1", "x = 2")
    parsed = parser.parse(edited)
    assert parsed.module.code == edited and parsed.reparsed <= 2


def test_a_dropped_analysis_leaves_no_cyclic_garbage():
    """Cycles in a kept model would wait for a full GC pass (0.3 s holding the GIL
    on a 10,000-line file) to give their memory back."""
    text = EXAMPLES["train_leaky.py"] + EXAMPLES["rnn_leaky.py"]
    incremental = Incremental()
    analyze(text, keep_flow=True, incremental=incremental).dispose()
    gc.collect()
    gc.disable()
    try:
        gc.set_debug(gc.DEBUG_SAVEALL)
        analysis = analyze(text.replace("lr=0.05", "lr=0.01"), keep_flow=True, incremental=incremental)
        assert analysis.findings and analysis.flow is not None
        analysis.dispose()
        analyze(text)  # not kept: disposed inside
        del analysis
        gc.collect()
        ours = [o for o in gc.garbage if type(o).__module__.startswith(("gradguard", "libcst"))]
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
