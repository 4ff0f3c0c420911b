"""method: the function holding the anchor becomes a method of a class of the file, and the state
the anchor writes (the container or accumulator, `history`, `total_loss`) lives on `self`.

The state is what the anchor statement writes: the names it assigns, the container it stores
into (`history.append(...)`, `stats[k] += ...`), the receiver of its method call. A top-level
function `f` becomes the method `f` of a new class `Holder` defined where `f` was, and every use
of `f` in the file becomes `Holder().f` (a fresh object per call, as a call's locals were fresh).
A method already keeps its object on its first parameter: only the state moves there. A state
that is a parameter is stored on `self` first (`self.history = history`). Not applicable where a
binding cannot become an attribute (`except ... as x`, a walrus, `global`/`nonlocal`, an import)
or the class already has an attribute of that name (its own, or where it has a base class, a
library's: `nn.Module.training`).
"""

from __future__ import annotations

import libcst as cst

from transforms.edits import apply, statement
from transforms.libnames import library_attributes
from transforms.subject import NotApplicable, Outcome, Subject, walk


def variants(subject: Subject) -> list[Outcome]:
    try:
        return [Outcome("", code=moved(subject))]
    except NotApplicable as e:
        return [Outcome("", reason=str(e))]


def moved(subject: Subject) -> str:
    s = subject.anchor
    if not isinstance(s, cst.SimpleStatementLine):
        raise NotApplicable("the statement is compound")
    functions = [a for a in subject.ancestors(s) if isinstance(a, cst.FunctionDef)]
    if not functions:
        raise NotApplicable("the statement is not in a function")
    outer = next((f for f in functions if subject.class_of(f) is not None), functions[-1])
    owner = subject.class_of(outer)
    if owner is None and subject.parents.get(outer) is not subject.module:
        raise NotApplicable("the function is nested in a block")
    if owner is not None and (not outer.params.params or any(
            isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
            for d in outer.decorators)):
        raise NotApplicable("the method has no self")
    me = outer.params.params[0].name.value if owner is not None else "self"
    scope = subject.scopes.get(outer.body)
    state = [n for n in written(s) if n in scope.assignments and n != me]
    if not state:
        raise NotApplicable("the statement writes no state of its function")
    if owner is not None and set(state) & (_attributes_of(owner) | (library_attributes() if owner.bases else set())):
        raise NotApplicable("the state's name is an attribute of the class already")
    if owner is None and "self" in _names_in(outer):
        raise NotApplicable("the function already uses the name self")

    replace: dict = {}
    first = []
    for name in state:
        for a in scope.assignments[name]:
            node = a.node
            if isinstance(node, cst.Param):
                first.append(statement(subject, f"{me}.{name} = {name}\n"))
            elif isinstance(node, cst.Name) and _assignable(subject, node):
                replace[node] = _attribute(me, name)
            else:
                raise NotApplicable(f"`{name}` is bound where an attribute cannot be")
            for r in a.references:
                if not isinstance(r.node, cst.Name):
                    raise NotApplicable(f"`{name}` is used where an attribute cannot be")
                replace[r.node] = _attribute(me, name)
    for n in walk(outer):
        if isinstance(n, (cst.Global, cst.Nonlocal)) and any(i.name.value in state for i in n.names):
            raise NotApplicable("the state is declared global or nonlocal")
    body = outer.body.body
    start = 1 if body and _is_docstring(body[0]) else 0
    after = {body[start - 1]: first} if first and start else {}
    before = {body[0]: first} if first and not start else {}
    if owner is not None:
        return apply(subject, replace, before, after)

    holder = subject.fresh("Holder")
    for a in subject.scopes.get(outer).assignments[outer.name.value]:
        for r in a.references:
            replace[r.node] = cst.Attribute(value=cst.Call(func=cst.Name(holder)), attr=cst.Name(outer.name.value))
    definition = statement(subject, f"class {holder}:\n    pass\n")

    def into_class(function: cst.FunctionDef) -> cst.ClassDef:
        params, me_ = function.params, cst.Param(cst.Name("self"))
        if params.posonly_params:
            params = params.with_changes(posonly_params=[me_, *params.posonly_params])
        else:
            params = params.with_changes(params=[me_, *params.params])
        method = function.with_changes(params=params, leading_lines=())
        return definition.with_changes(leading_lines=function.leading_lines,
                                       body=definition.body.with_changes(body=[method]))

    replace[outer] = into_class
    return apply(subject, replace, before, after)


def written(s: cst.SimpleStatementLine) -> list[str]:
    """The names a statement writes: assigned, or stored into (`h.append(x)`, `d[k] += x`), or the
    receiver of a method call (`loss.backward()`)."""
    names = []
    for small in s.body:
        targets = []
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            targets = [small.target]
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
                isinstance(small.value.func, cst.Attribute):
            targets = [small.value.func.value]
        for t in targets:
            names += [n.value for n in _roots(t)]
    return list(dict.fromkeys(names))


def _roots(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            yield from _roots(e.value)
    elif isinstance(target, cst.StarredElement):
        yield from _roots(target.value)
    else:
        while isinstance(target, (cst.Attribute, cst.Subscript)):
            target = target.value
        if isinstance(target, cst.Name):
            yield target


def _assignable(subject: Subject, name: cst.Name) -> bool:
    """Whether the binding Name `name` may be an attribute instead (`for self.x in`, `self.x = `)."""
    parent = subject.parents.get(name)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        parent = subject.parents.get(parent)
    if isinstance(parent, cst.AsName):
        return isinstance(subject.parents.get(parent), cst.WithItem)
    return isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For))


def _attributes_of(owner: cst.ClassDef) -> set[str]:
    """Names the class's objects may have: its methods and class attributes, any `x.name` it uses."""
    names = {n.attr.value for n in walk(owner) if isinstance(n, cst.Attribute)}
    for statement_ in owner.body.body:
        if isinstance(statement_, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement_.name.value)
        elif isinstance(statement_, cst.SimpleStatementLine):
            names |= {t.target.value for small in statement_.body if isinstance(small, cst.Assign)
                      for t in small.targets if isinstance(t.target, cst.Name)}
    return names


def _attribute(me: str, name: str) -> cst.Attribute:
    return cst.Attribute(value=cst.Name(me), attr=cst.Name(name))


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


def _is_docstring(statement_: cst.BaseStatement) -> bool:
    return (isinstance(statement_, cst.SimpleStatementLine) and isinstance(statement_.body[0], cst.Expr)
            and isinstance(statement_.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))

