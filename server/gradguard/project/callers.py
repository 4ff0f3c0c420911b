"""How the other files of a project call each file's functions: the grad mode they agree on.

Every file's analysis lists the calls it makes of what another file may define (engine/outside.py);
here they are resolved through the project index and gathered per callee. A function whose calls
in the other files all run with grad off runs with grad off (a model's `generate()` that only
`@torch.no_grad() def test()` in main.py calls); one whose calls all run with grad on for certain
runs with grad on for certain. Where they disagree, or nothing calls it, the file is analysed
as it is alone. A call of an object nothing tells (`agent.act(s)`) counts only for the one method
of the project with that name, and only with grad off: it can take findings away, never add one.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import replace
from typing import Optional

from gradguard.engine.model import GradMode
from gradguard.engine.outside import At, Builds, Call, Gives, Keeps, Outside, Returns, shape_at
from gradguard.project.index import ProjectIndex


def outside_by_file(index: ProjectIndex, calls: dict[str, list[Call]], unread: frozenset = frozenset(),
                    summaries: Optional[dict] = None) -> dict[str, dict[str, Outside]]:
    """path -> {symbol ("f", "C.m") -> Outside}, for the callees the other files agree on.
    `unread`: names called in files the engine does not analyse (they never mention torch): a
    function or method of such a name may be called there in any grad mode. `summaries`: absolute
    path -> {symbol: summary}, for what a caller passes back of another function's result (Gives)."""
    uses: dict = defaultdict(list)  # (path, symbol) -> [(caller path, Call)]
    for caller, made in calls.items():
        caller = os.path.abspath(caller)
        for call in made:
            if call.by_name:
                targets = index.methods_named(call.target)
                if len(targets) != 1:
                    continue  # several methods of that name: the call says nothing about any one of them
            else:
                found = index.resolve(caller, call.target)
                targets = [found] if found is not None else []
            for path, symbol in targets:
                if path != caller:  # the engine sees the calls of a file's own functions
                    uses[(path, symbol)].append((caller, call))
    out: dict = defaultdict(dict)
    for (path, symbol), found in uses.items():
        if symbol.rsplit(".", 1)[-1] in unread:
            continue
        agreed = _agreed(index, found)
        params = _params(index, path, found, summaries or {})
        if params:
            told = Outside(None, False, "", params=params, where=_where(index, found), at=_at(found))
            if "." not in symbol:  # a class's call passes its constructor's arguments; a function's, its own
                out[path].setdefault(f"{symbol}.__init__", told)
            agreed = replace(agreed, params=params) if agreed is not None else told
        if agreed is not None:
            out[path][symbol] = agreed
    return {p: found for p, found in out.items() if found}


def _params(index: ProjectIndex, path: str, found: list, summaries: dict) -> tuple:
    """((position or keyword, what is passed), ...) where every call of the callee passes the same
    there: a kind of value (engine.outside.describe), or ("instance", a class of the callee's own
    file) for an object a caller built (`InMemoryLogger()`), or what a function of the project
    returned there, as its summary says (`losses` of `grads, losses = sweep(x, y)`: Gives)."""
    if any(call.by_name for _, call in found):
        return ()
    agreed = None
    for caller, call in found:
        passed = {}
        for key, what in call.args:
            if what[0] == "built":
                made = index.resolve(os.path.abspath(caller), what[1])
                if made is None:
                    continue
                summary = summaries.get(made[0], {}).get(made[1])
                if isinstance(summary, Gives):  # `results = train(...)`: what the function returned, whole
                    what = _returned(index, caller, ("result", what[1], ()), summaries)
                    if what is None:
                        continue
                elif made[0] != path:
                    continue
                else:
                    what = ("instance", made[1])
            elif what[0] == "result":
                what = _returned(index, caller, what, summaries)
                if what is None:
                    continue
            passed[key] = what
        agreed = passed if agreed is None else {k: v for k, v in agreed.items() if passed.get(k) == v}
    return tuple(sorted(agreed.items(), key=lambda kv: str(kv[0]))) if agreed else ()


def _returned(index: ProjectIndex, caller: str, what: tuple, summaries: dict) -> Optional[tuple]:
    """What ("result", target, path) is: the item at `path` of what the project's function `target`
    returns, as its file's summary (Gives) describes it; None where nothing says."""
    made = index.resolve(os.path.abspath(caller), what[1])
    summary = summaries.get(made[0], {}).get(made[1]) if made is not None else None
    if not isinstance(summary, Gives):
        return None
    found = shape_at(summary.shape, tuple(what[2]))
    return found if found is not None and found[0] != "tuple" else None


def _agreed(index: ProjectIndex, found: list) -> Outside | None:
    modes = {call.mode for _, call in found}
    steps = {call.per_batch for _, call in found}
    per_batch = steps.pop() if len(steps) == 1 else None
    where, at = _where(index, found), _at(found)
    if modes == {GradMode.OFF.value}:
        guessed = all(call.by_name for _, call in found)
        return Outside(GradMode.OFF, False, "called only with grad off: " + where, guessed, per_batch, where, at=at)
    if modes == {GradMode.ON.value} and all(call.proved and not call.by_name for _, call in found):
        return Outside(GradMode.ON, True, "called with grad on: " + where, per_batch=per_batch, where=where, at=at)
    if per_batch is not None:  # (GG104: a reset every training step runs, or one none does)
        return Outside(None, False, "called " + ("once per training step" if per_batch else "outside the training steps")
                       + ": " + where, per_batch=per_batch, where=where, at=at)
    return None


def _first(found: list) -> tuple:
    return min(found, key=lambda f: (f[0], f[1].how, f[1].line))


def _at(found: list) -> Optional[At]:
    """The call `_where` names first, as a place (not in a notebook: its lines are the cells' joined)."""
    caller, call = _first(found)
    return At(caller, call.line, call.column) if call.line and caller.endswith(".py") else None


def _where(index: ProjectIndex, found: list) -> str:
    caller, call = _first(found)
    shown = os.path.relpath(caller, index.root)
    more = len(found) - 1
    line = f" line {call.line}" if call.line else ""
    return f"{shown}{line}, {call.how}" + (f" (and {more} more call{'s' if more > 1 else ''})" if more else "")


def summaries_wanted(index: ProjectIndex, calls: dict[str, list[Call]]) -> set[str]:
    """The files whose summaries a call in a loop, with a graph, may need."""
    wanted = set()
    for caller, made in calls.items():
        for call in made:
            if call.in_loop or call.unknown:
                found = _callee(index, caller, call)
                if found is not None:
                    wanted.add(found[0])
    return wanted


def _callee(index: ProjectIndex, caller: str, call: Call):
    """(path, symbol) of the one definition of the project a call may run, or None."""
    if call.by_name:
        targets = index.methods_named(call.target)
        return targets[0] if len(targets) == 1 else None
    return index.resolve(os.path.abspath(caller), call.target)


def callees_by_file(index: ProjectIndex, calls: dict[str, list[Call]], summaries: dict[str, dict]) -> dict[str, dict]:
    """path -> {target -> Keeps | Builds | Returns}: what the functions a file calls of other files do that
    its own analysis needs. A call in a loop, with a graph, of a method that keeps its argument
    (`loss_meter.update(loss)`, the meter's class in utils.py): through the imports, or, for an
    object nothing tells, the one method of the project with that name (as the engine does for
    the one class of a file with it). A call whose result the file binds to a name and knows
    nothing of, of a class that is an nn.Module or a function that returns one (`model =
    create_model(cfg)`): through the imports only."""
    out: dict = defaultdict(dict)
    for caller, made in calls.items():
        for call in made:
            if not (call.in_loop or call.unknown or call.result):
                continue
            found = _callee(index, caller, call)
            if found is None or found[0] == os.path.abspath(caller):
                continue
            summary = summaries.get(found[0], {}).get(found[1])
            if isinstance(summary, Keeps) and call.in_loop:
                out[caller][call.target] = summary
            elif isinstance(summary, Builds) and call.unknown:
                out[caller][call.target] = replace(summary, where=f"{summary.where} ({os.path.relpath(found[0], index.root)})")
            elif isinstance(summary, Returns) and call.result:
                out[caller][call.target] = replace(summary, path=os.path.relpath(found[0], index.root))
    return dict(out)
