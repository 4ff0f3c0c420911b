"""GG103 decides by structure, never by a user-defined name (rules.md, "Names are never the only
reason"; issue 29): every GG103 rule example, with each function and class the file defines renamed
to a neutral name of the same length, gives the same diagnostics - the same ranges, the same
messages and the same fixes, once the names are mapped back. A function named `evaluate` /
`validate` / `predict` / `select_action` / `act` / `*_step`, or a class named `Evaluator`, adds no
finding and silences none."""

from __future__ import annotations

import re

import pytest

from gradguard.engine import analyze
from gradguard.engine.fixes import apply_edits
from gradguard.rules.gg103_eval_without_no_grad import EvalWithoutNoGrad
from gradguard.settings import Settings

# Names that are not the user's to choose: torch's and the frameworks' API (nn.Module's `forward`,
# `train`, `eval`; Lightning's hooks; unittest's `setUp`; a framework's `fit`), Python's dunders.
API = frozenset("forward train eval validation_step test_step predict_step training_step setUp fit step".split())


def _defined(code: str) -> list[str]:
    names = dict.fromkeys(re.findall(r"^\s*(?:def|class)\s+(\w+)", code, re.M))
    return [n for n in names if n not in API and not n.startswith("__") and not n.startswith("test_") and len(n) > 1
            and not re.search(rf"\b(?:nn|torch)\.{n}\b", code)]  # (a class named `Module` beside `nn.Module`)


def _renamed(code: str) -> tuple[str, dict]:
    """Every function and class the example defines renamed to `z001`-like names of the same length
    (columns stay put), and the map back."""
    back = {}
    for k, name in enumerate(_defined(code), 1):
        new = f"z{k:0{len(name) - 1}d}"
        back[new] = name
        code = re.sub(rf"\b{re.escape(name)}\b", new, code)
    return code, back


def _diagnostics(code: str, back: dict) -> list:
    def restored(text: str) -> str:
        for new, old in back.items():
            text = re.sub(rf"\b{new}\b", old, text)
        return text

    found = [f for f in analyze(code, Settings(select=("GG103",))).findings if f.code == "GG103"]
    return [((f.range.start.line, f.range.start.column, f.range.end.line, f.range.end.column), restored(f.message),
             [(restored(x.title), restored(apply_edits(code, x.edits))) for x in f.fixes]) for f in found]


EXAMPLES = [pytest.param(ex, id=f"{kind}-{i}") for kind, examples in (("valid", EvalWithoutNoGrad.VALID),
                                                                     ("invalid", EvalWithoutNoGrad.INVALID))
            for i, ex in enumerate(examples) if _defined(ex.code)]


@pytest.mark.parametrize("ex", EXAMPLES)
def test_renaming_what_the_file_defines_changes_no_diagnostic(ex):
    code, back = _renamed(ex.code)
    assert _diagnostics(code, back) == _diagnostics(ex.code, {})


def test_the_names_once_decisive_are_among_those_renamed():
    """The names that used to decide alone (issue 29) are renamed by the test above."""
    renamed = {n for ex in EvalWithoutNoGrad.VALID + EvalWithoutNoGrad.INVALID for n in _defined(ex.code)}
    assert {"evaluate", "validate", "predict", "select_action", "act", "sample_action", "eval_step", "Evaluator",
            "decode", "run"} <= renamed
