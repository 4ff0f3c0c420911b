"""Positions resolved per module-level statement (shifted to the line the parse
says each one starts on) must equal positions resolved for the whole module."""

from __future__ import annotations

from pathlib import Path

import pytest

import gradguard.engine as engine
from examples import INVALID
from gradguard.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p.values[1].code for p in INVALID] + [p.read_text() for p in sorted((ROOT / "examples").glob("*.py"))]


def whole_module(monkeypatch):
    monkeypatch.setattr(engine.parsing.Parsed, "first_line", lambda self, top: None)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_same_findings_as_whole_module_positions(monkeypatch, newline):
    sources = [s.replace("\n", newline) for s in SOURCES]
    fast = [engine.analyze(s, Settings()).findings for s in sources]
    whole_module(monkeypatch)
    slow = [engine.analyze(s, Settings()).findings for s in sources]
    assert fast == slow
    assert sum(map(len, fast)) > 40


def test_statements_after_comments_decorators_and_semicolons(monkeypatch):
    src = (
        "# a header comment\n\nimport torch\nfrom torch import nn; import numpy as np\n\n"
        "model = nn.Linear(2, 2)\n\n\n@torch.enable_grad()\n# between\ndef f():\n"
        "    kept = []\n    for x in [torch.ones(1, 2)]:\n        kept.append(model(x))  # 训练😀\n"
        "    return np.array(model(torch.ones(1, 2)))\n"
    )
    fast = engine.analyze(src).findings
    whole_module(monkeypatch)
    assert fast == engine.analyze(src).findings and len(fast) == 2



def test_statement_lines_known_from_a_module_shape_lay_out_the_file_as_its_own_parse(monkeypatch):
    # a project run reads every module with `ast` for its classes (project/neighbours.py); the file's
    # analysis takes its statements' lines from that instead of parsing it with CPython again, and a
    # file analysed with its neighbours' classes joined after it extends them by one line per class
    from gradguard.engine import parsing
    from gradguard.project import neighbours

    monkeypatch.setattr(parsing, "KNOWN_STARTS", parsing.KnownStarts())
    known = parsing.KNOWN_STARTS.texts
    src = SOURCES[0] + "\n\n@torch.no_grad()\n# between\nclass Net(torch.nn.Module):\n    pass\n"
    joined = engine._with_neighbours(src, src.count("\n"), (("models.py", 3, "class A:\n    x = 1"),
                                                            ("models.py", 9, "@dataclass\nclass B:\n    y: int")), None)[0]
    cpython = [parsing.parse(src).breaks, parsing.parse(joined).breaks]
    assert not known and all(cpython)
    neighbours.shape(src)
    engine._with_neighbours(src, src.count("\n"), (("models.py", 3, "class A:\n    x = 1"),
                                                    ("models.py", 9, "@dataclass\nclass B:\n    y: int")), None)
    assert set(known) == {src, joined} and known[joined][-2:] == (src.count("\n") + 1, src.count("\n") + 3)
    assert [parsing.parse(src).breaks, parsing.parse(joined).breaks] == cpython


def test_statement_lines_are_kept_for_a_bounded_amount_of_text():
    from gradguard.engine.parsing import KnownStarts

    known = KnownStarts(kept=10)
    known.put("a = 1\n", (1,))
    known.put("b = 2\n", (1,))  # 12 characters: the oldest goes
    known.put("x" * 11, (1,))  # more than is kept: not kept
    assert list(known.texts) == ["b = 2\n"] and known.size == 6 and known.get("a = 1\n") is None
