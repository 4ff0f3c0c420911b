"""The type layer's questions are placed from the text (engine/locate.py): every name it
places must be where libcst's PositionProvider puts it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.engine.locate import name_starts
from gradguard.engine.parsing import parse

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "corpus").glob("GG*/*.py"))[:60]

TRICKY = '''\
import torch  # a comment naming model
"""model in a docstring"""


@decorate(model)
class Net(Base, metaclass=Meta):
    def forward(self, x: "model", *model, key=model, **kw) -> Out:
        y = model if x else f"{model}"  # f-string: the counts differ, Positions places these
        z = call(model=model, key=model)
        try:
            pass
        except Error as model:
            pass
        s = 'model' + r"model" + b'model'
        return lambda model: model(x) if model else model.m
\r
w = [model for model in range(3)]\r
'''


def places(source: str) -> tuple[dict, dict]:
    parsed = parse(source)
    wrapper = MetadataWrapper(parsed.module, unsafe_skip_copy=True)
    truth = {n: (p.start.line, p.start.column) for n, p in wrapper.resolve(PositionProvider).items() if isinstance(n, cst.Name)}
    top_of = {}  # every Name under each module-level statement
    for top in parsed.module.body:
        stack = [top]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Name):
                top_of[n] = top
            stack.extend(n.children)
    return name_starts(parsed, top_of, list(top_of)), truth


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_placed_name_is_where_libcst_puts_it(path):
    placed, truth = places(path.read_text(encoding="utf-8"))
    assert {n: truth[n] for n in placed} == placed
    assert len(placed) >= 0.8 * len(truth)  # most names are placed from the text (f-strings fall back)


def test_strings_comments_keywords_and_odd_line_breaks():
    placed, truth = places(TRICKY)
    assert {n: truth[n] for n in placed} == placed
    unplaced = {n.value for n in truth if n not in placed}
    assert unplaced == {"model"} or unplaced == set()  # the f-string's statement falls back
