"""module: definitions moved into another module of the program's package, imported back by name.

- model: every top-level class goes to `gg_models.py`, which gets the program's imports; the
  program imports the classes where the first of them stood.
- caller: the top-level function holding the anchor goes to `gg_steps.py`, with the top-level
  functions and classes it uses (and those they use); the program imports them where the first
  stood.

Not applicable where a moved definition reads a module-level variable of the program (it would
be another module's global), or, for `caller`, where the anchor is not in a top-level function.
The variant's modules lie beside the program (a package with a pyproject.toml when checked):
GradGuard sees them only through project-wide analysis.
"""

from __future__ import annotations

import libcst as cst

from transforms.subject import NotApplicable, Outcome, Subject

MODELS = "gg_models"
STEPS = "gg_steps"


def variants(subject: Subject) -> list[Outcome]:
    out = []
    for kind, chooser, module in (("model", _classes, MODELS), ("caller", _caller, STEPS)):
        try:
            moved = chooser(subject)
            out.append(_split(subject, kind, moved, module))
        except NotApplicable as e:
            out.append(Outcome(kind, reason=str(e)))
    return out


def _classes(subject: Subject) -> list[cst.BaseStatement]:
    moved = [s for s in subject.module.body if isinstance(s, cst.ClassDef)]
    if not moved:
        raise NotApplicable("no top-level class")
    return moved


def _caller(subject: Subject) -> list[cst.BaseStatement]:
    top = subject.top_level(subject.anchor)
    if not isinstance(top, cst.FunctionDef) or top.name.value == "observe":
        raise NotApplicable("the statement is not in a top-level function")
    definitions = {s.name.value: s for s in subject.module.body
                   if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value != "observe"}
    moved, todo = {top.name.value}, [top]
    while todo:
        for name in _globals_read(subject, todo.pop()):
            if name in definitions and name not in moved:
                moved.add(name)
                todo.append(definitions[name])
    return [s for s in subject.module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value in moved]


def _globals_read(subject: Subject, definition: cst.CSTNode) -> set[str]:
    """The program's top-level names a definition reads, at any depth (other than its imports)."""
    names = set()
    for assignment in subject.scopes[subject.module].assignments:
        node = getattr(assignment, "node", None)
        if node is None or isinstance(node, (cst.Import, cst.ImportFrom)):
            continue
        if any(any(a is definition for a in subject.ancestors(access.node)) for access in assignment.references):
            names.add(assignment.name)
    return names


def _split(subject: Subject, kind: str, moved: list, module: str) -> Outcome:
    body = list(subject.module.body)
    names = {s.name.value for s in moved}
    definitions = {s.name.value for s in body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    for s in moved:
        stray = sorted(n for n in _globals_read(subject, s) if n not in names and n not in definitions | {"observe"})
        if stray:
            raise NotApplicable(f"a moved definition reads the program's variable {stray[0]}")
        needed = sorted(n for n in _globals_read(subject, s) if n in definitions and n not in names)
        if needed:
            raise NotApplicable(f"a moved definition uses {needed[0]}, which stays")
    imports = [s for s in body if _is_import(s)]
    line = cst.parse_statement(f"from {module} import {', '.join(s.name.value for s in moved)}\n")
    kept = []
    for s in body:
        if s is moved[0]:
            kept.append(line)
        if not any(s is m for m in moved):
            kept.append(s)
    main = subject.module.with_changes(body=kept).code
    other = subject.module.with_changes(body=[*imports, *moved], header=[]).code
    return Outcome(kind, code=main, modules={module: other})


def _is_import(s: cst.BaseStatement) -> bool:
    return isinstance(s, cst.SimpleStatementLine) and all(isinstance(b, (cst.Import, cst.ImportFrom)) for b in s.body)
