"""extract-before / extract-after: the anchor statement moved into a helper of the same file,
defined before (resp. after) its caller; the call replaces the statement.

The helper takes the names the statement reads from its function (parameters, locals, a closure's
cells) and returns what it binds there; a statement that returns returns the helper's result. It
is a method of the caller's class where the statement reads `self`, else a module function next
to the top-level definition that holds the caller. Not applicable where moving the statement
changes what it means: it breaks/continues a loop, yields, awaits, declares global/nonlocal
names, binds a name of another scope, deletes or imports a local, or calls `super()` from a
function that would no longer be a method.
"""

from __future__ import annotations

import libcst as cst

from transforms.edits import Helper, apply, call_marked, statement
from transforms.subject import NotApplicable, Outcome, Subject, walk

FORBIDDEN = {cst.Break: "break", cst.Continue: "continue", cst.Yield: "yield", cst.Await: "await",
             cst.Global: "global", cst.Nonlocal: "nonlocal", cst.Del: "del", cst.Import: "import",
             cst.ImportFrom: "import"}


def before(subject: Subject) -> list[Outcome]:
    return [_extract(subject, after=False)]


def after(subject: Subject) -> list[Outcome]:
    return [_extract(subject, after=True)]


def _extract(subject: Subject, after: bool) -> Outcome:
    try:
        return Outcome("", code=extracted(subject, after))
    except NotApplicable as e:
        return Outcome("", reason=str(e))


def extracted(subject: Subject, after: bool) -> str:
    s = subject.anchor
    if not isinstance(s, cst.SimpleStatementLine):
        raise NotApplicable("the statement is compound")
    function = subject.function_of(s)
    if function is None:
        raise NotApplicable("the statement is not in a function")
    for n in walk(s):
        if type(n) in FORBIDDEN:
            raise NotApplicable(f"the statement has {FORBIDDEN[type(n)]}")
        if isinstance(n, cst.Return) and len(s.body) > 1:
            raise NotApplicable("the statement returns among other statements")
    reads = subject.local_reads(s, function)
    binds = subject.local_binds(s, function)
    if _binds_elsewhere(subject, s, function):
        raise NotApplicable("the statement binds a name of another scope")
    helper = Helper(subject, function, reads, "extracted")
    if any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "super" and not n.args
           for n in walk(s)) and not helper.method:
        raise NotApplicable("the statement calls super()")
    returns = isinstance(s.body[0], cst.Return)
    body = [s.with_changes(leading_lines=())]
    if binds:
        body.append(statement(subject, f"return {', '.join(binds)}\n"))
    definition = statement(subject, f"{helper.signature()}\n    pass\n")
    definition = definition.with_changes(body=definition.body.with_changes(body=body))
    call = helper.call()
    if returns:
        line = f"return {call}"
    elif binds:
        line = f"{', '.join(binds)} = {call}"
    else:
        line = call
    replacement = call_marked(statement(subject, line + "\n")).with_changes(leading_lines=s.leading_lines)
    replace, before_, after_ = helper.placed(definition, after)
    replace[s] = replacement
    return apply(subject, replace, before_, after_)


def _binds_elsewhere(subject: Subject, s: cst.SimpleStatementLine, function: cst.FunctionDef) -> bool:
    """A target Name of the statement bound in a scope other than the function's own (declared
    global or nonlocal there)."""
    own = subject.scopes.get(function.body)
    for n in walk(s):
        targets = []
        if isinstance(n, cst.Assign):
            targets = [t.target for t in n.targets]
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, cst.NamedExpr):
            targets = [n.target]
        for t in targets:
            for name in walk(t):
                if isinstance(name, cst.Name) and _is_store(t, name):
                    mine = own.assignments[name.value] if name.value in own.assignments else ()
                    if not any(a.node is name for a in mine):
                        return True
    return False


def _is_store(target: cst.CSTNode, name: cst.Name) -> bool:
    """Whether `name` is itself bound by `target` (not `x` of `x.attr` or `x[i]`)."""
    if target is name:
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_is_store(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _is_store(target.value, name)
    return False

