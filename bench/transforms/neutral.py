"""neutral-op: a tensor op that changes nothing inserted between a model call and its use.

The model call is one of a callable the file holds (a parameter, a variable, `self.net`, `self`):
the innermost in the anchor statement, else the last one before it in its function whose result
is not unpacked. One variant per op:

- `mul-one`:  `model(x) * 1.0`
- `add-zero`: `model(x) + 0.0`
- `ellipsis`: `model(x)[...]`
- `slice`:    `model(x)[:]`
- `squeeze`:  `model(x).unsqueeze(-1).squeeze(-1)` (a squeeze that is always shape-safe)
- `view-as`:  `out = out.view_as(out)` after `out = model(x)` (only there)

Each variant is kept only if running it still proves the label: an op that does not fit the
model's result (a dict, a tuple, an integer tensor) makes `observe()` raise or lose the effect,
and the variant is discarded.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from transforms.edits import apply, model_calls, statement, template
from transforms.subject import Outcome, Subject

OPS = {
    "mul-one": "CALL * 1.0",
    "add-zero": "CALL + 0.0",
    "ellipsis": "CALL[...]",
    "slice": "CALL[:]",
    "squeeze": "CALL.unsqueeze(-1).squeeze(-1)",
}
BARE = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Return, cst.Arg)  # where a binary op needs no parentheses


def variants(subject: Subject) -> list[Outcome]:
    call = _model_call(subject)
    if call is None:
        return [Outcome("", reason="no model call before the statement")]
    out = []
    for kind, op in OPS.items():
        new = template(subject, op, CALL=call)
        if isinstance(new, cst.BinaryOperation) and not isinstance(subject.parents.get(call), BARE):
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        out.append(Outcome(kind, code=apply(subject, {call: new})))
    line = _assigned_line(subject, call)
    if line is None:
        out.append(Outcome("view-as", reason="the model call's result is not assigned to a name"))
    else:
        name = line.body[0].targets[0].target.value
        out.append(Outcome("view-as", code=apply(subject, after={line: [statement(
            subject, f"{name} = {name}.view_as({name})\n")]})))
    return out


def _model_call(subject: Subject) -> Optional[cst.Call]:
    s = subject.anchor
    function = subject.function_of(s)
    inside = [c for c in model_calls(subject, s) if not _unpacked(subject, c)]
    if inside:
        return inside[-1]  # in pre-order: the innermost
    if function is None:
        return None
    start = subject.positions[s].start
    before = [c for c in model_calls(subject, function.body) if not _unpacked(subject, c)
              and (subject.positions[c].start.line, subject.positions[c].start.column) < (start.line, start.column)]
    return before[-1] if before else None


def _unpacked(subject: Subject, call: cst.Call) -> bool:
    parent = subject.parents.get(call)
    return isinstance(parent, cst.Assign) and any(isinstance(t.target, (cst.Tuple, cst.List)) for t in parent.targets)


def _assigned_line(subject: Subject, call: cst.Call) -> Optional[cst.SimpleStatementLine]:
    """The statement `name = <call>`, when that is what holds the call."""
    parent = subject.parents.get(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        line = subject.parents.get(parent)
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            return line
    return None

