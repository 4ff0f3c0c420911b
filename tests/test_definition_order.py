"""Findings never depend on the order in which a file defines its functions and classes (issue 33):
every corpus program and every rule example, with its top-level definitions reversed, gets the
same findings (code, severity and message, on the line of the same statement) as written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from corpus import oracle
from examples import INVALID, VALID
from gradguard.engine import analyze

sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))  # after tests/: the transformations

import libcst as cst  # noqa: E402
from libcst.metadata import MetadataWrapper, PositionProvider  # noqa: E402
from transforms import reverse  # noqa: E402


class _Parsed:
    """What reverse.variants reads of a program: its module and the positions of its statements."""

    def __init__(self, source: str):
        wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        self.module = wrapper.module
        self.positions = wrapper.resolve(PositionProvider)


def _reversed(source: str):
    """The source with its definitions reversed, and the map of its lines to the original's; None
    where reversing does not apply (fewer than two definitions, a definition needed above)."""
    (outcome,) = reverse.variants(_Parsed(source))
    return (outcome.code, outcome.origin) if outcome.code else None


def _findings(source: str, origin=None) -> list:
    lines = source.splitlines()
    out = []
    for f in analyze(source).findings:
        line = f.range.start.line
        out.append((f.code, f.severity.value, (origin or {}).get(line, line), lines[line - 1].strip()))
    return sorted(out)


# Only the programs reversing applies to (two definitions at least, none needed above another).
CASES = [
    pytest.param(source, flipped, id=name)
    for name, source in [(p.name, oracle.stripped(p.source)) for p in oracle.programs()]
    + [(p.id, p.values[1].code) for p in VALID + INVALID]
    if (flipped := _reversed(source)) is not None
]


def test_reversing_applies_to_many_programs():
    assert len(CASES) > 150


@pytest.mark.parametrize("source,flipped", CASES)
def test_reversed_definitions_give_the_same_findings(source, flipped):
    code, origin = flipped
    assert _findings(code, origin) == _findings(source)
