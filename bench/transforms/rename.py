"""rename: every identifier the program defines, renamed consistently to a neutral name.

Names bound by the file (functions `f1`, classes `C1`, parameters `p1`, other variables `v1`) are
renamed where scope analysis resolves a use to them, across the whole file, `observe()` included;
one identifier gets one new name wherever the file binds it. Attributes the file defines (set on
an object, `x.attr = ...`, or in a class body: methods, class attributes) become `a1`, ... at every
`.attr`. Keyword arguments follow the parameter they
bind: to a function or class of the file, to a method of the file, and for a callable whose
definition is unknown (`model(x, state=s)`), to the parameters of the file's `forward`/`__call__`
and `__init__` (it may hold a class of the file). Attributes a call names by a string
(`register_buffer("running_mean", ...)`, `getattr`) are renamed in the string too.

Never renamed: imported names and builtins, `self`/`cls`, `observe` (the oracle calls it), dunder
names, `forward`, and attribute names a library object also has (libnames.py): Lightning's hooks,
`.weight`, `.update`, `.step`. An identifier bound both by an import and by the file, or used
where scope analysis cannot tell, is left alone everywhere.
"""

from __future__ import annotations

import keyword
from typing import Iterator, Optional

import libcst as cst
from libcst.metadata import Assignment, ClassScope

from transforms.libnames import library_attributes
from transforms.subject import Outcome, Subject

KEPT = {"self", "cls", "observe", "forward", "_", "super"}
PREFIX = {cst.FunctionDef: "f", cst.ClassDef: "C", cst.Param: "p"}
REGISTERS = ("register_buffer", "register_parameter", "register_module", "add_module")


def variants(subject: Subject) -> list[Outcome]:
    renames = Renames(subject)
    if not renames.by_node:
        return [Outcome("", reason="defines no name to rename")]
    return [Outcome("", code=subject.module.visit(_Renamer(renames.by_node, renames.by_string)).code)]


def _kept(name: str) -> bool:
    return name in KEPT or (name.startswith("__") and name.endswith("__"))


class Renames:
    """What to rename: `by_node` maps id() of a Name node to its new identifier; `by_string` maps id()
    of a getattr/setattr/hasattr string to its new literal."""

    def __init__(self, subject: Subject):
        self.subject = subject
        self.by_node: dict[int, str] = {}
        self.by_string: dict[int, str] = {}
        self._taken = {n.value for n in subject.nodes if isinstance(n, cst.Name)}
        names = self._names()
        attributes = self._attributes()
        self._keywords(names, attributes)

    def _new(self, prefix: str, counters: dict) -> str:
        while True:
            counters[prefix] = counters.get(prefix, 0) + 1
            name = f"{prefix}{counters[prefix]}"
            if name not in self._taken and not keyword.iskeyword(name):
                self._taken.add(name)
                return name

    # ------------------------------------------------------------------ names bound by the file
    def _names(self) -> dict[str, str]:
        """Rename every binding of the file and its uses; the new name of each identifier."""
        sites: dict[str, list] = {}  # identifier -> [(line, column, kind, [Name nodes])]
        refused = set()
        for scope in {s for s in self.subject.scopes.values() if s is not None}:
            if isinstance(scope, ClassScope):
                continue  # class bodies define attributes: see _attributes
            for a in scope.assignments:
                if type(a) is not Assignment:
                    refused.add(a.name)
                    continue
                node = a.node
                target = node.name if isinstance(node, (cst.Param, cst.FunctionDef, cst.ClassDef)) else node
                uses = [r.node for r in a.references]
                if not isinstance(target, cst.Name) or not all(isinstance(u, cst.Name) for u in uses):
                    refused.add(a.name)
                    continue
                where = self.subject.positions[target].start
                kind = PREFIX.get(type(node), "v")
                sites.setdefault(a.name, []).append((where.line, where.column, kind, [target, *uses]))
        new: dict[str, str] = {}
        counters: dict = {}
        order = sorted((min(s[:2] for s in found), name) for name, found in sites.items())
        for _, name in order:
            if name in refused or _kept(name):
                continue
            first = min(sites[name])
            new[name] = self._new(first[2], counters)
            for *_, nodes in sites[name]:
                for n in nodes:
                    self.by_node[id(n)] = new[name]
        for n in self.subject.nodes:  # `global x` / `nonlocal x` name what is renamed
            if isinstance(n, (cst.Global, cst.Nonlocal)):
                for item in n.names:
                    if item.name.value in new:
                        self.by_node[id(item.name)] = new[item.name.value]
        return new

    # ------------------------------------------------------------------ attributes the file defines
    def _attributes(self) -> dict[str, str]:
        defined: dict[str, tuple[int, int]] = {}
        class_names = []  # Name nodes defining an attribute in a class body
        for n in self.subject.nodes:
            targets = []
            if isinstance(n, cst.Assign):
                targets = [t.target for t in n.targets]
            elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
                targets = [n.target]
            elif isinstance(n, cst.ClassDef):
                for statement in n.body.body:
                    if isinstance(statement, cst.FunctionDef):
                        class_names.append(statement.name)
                    elif isinstance(statement, cst.SimpleStatementLine):
                        for small in statement.body:
                            if isinstance(small, cst.Assign):
                                class_names += [t.target for t in small.targets if isinstance(t.target, cst.Name)]
                            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                                class_names.append(small.target)
            for t in targets:
                for e in _elements(t):
                    if isinstance(e, cst.Attribute) and not self._of_import(e):
                        where = self.subject.positions[e.attr].start
                        defined.setdefault(e.attr.value, (where.line, where.column))
            literal = _named_by_string(n)
            if literal is not None:
                where = self.subject.positions[literal].start
                defined.setdefault(literal.evaluated_value, (where.line, where.column))
        for name in class_names:
            where = self.subject.positions[name].start
            defined[name.value] = min(defined.get(name.value, (where.line, where.column)), (where.line, where.column))
        library = library_attributes()
        new: dict[str, str] = {}
        counters: dict = {}
        for _, name in sorted((where, name) for name, where in defined.items()):
            if not _kept(name) and name not in library:
                new[name] = self._new("a", counters)
        for name in class_names:
            if name.value in new:
                self.by_node[id(name)] = new[name.value]
                for a in self.subject.scopes[name].assignments[name.value]:  # uses inside the class body
                    for r in a.references:
                        if isinstance(r.node, cst.Name):
                            self.by_node[id(r.node)] = new[name.value]
        for n in self.subject.nodes:
            if isinstance(n, cst.Attribute) and n.attr.value in new:
                self.by_node[id(n.attr)] = new[n.attr.value]
            literal = _named_by_string(n)
            if literal is not None and literal.evaluated_value in new:
                quote = literal.value[0]
                self.by_string[id(literal)] = f"{quote}{new[literal.evaluated_value]}{quote}"
        return new

    def _of_import(self, attribute: cst.Attribute) -> bool:
        """`torch.backends.cudnn.benchmark = ...`: an attribute of an imported module."""
        root = attribute
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.value if not isinstance(root, cst.Call) else root.func
        return isinstance(root, cst.Name) and self._definitions(root) is None

    # ------------------------------------------------------------------ keyword arguments
    def _keywords(self, names: dict[str, str], attributes: dict[str, str]) -> None:
        functions = [n for n in self.subject.nodes if isinstance(n, cst.FunctionDef)]
        methods: dict[str, list[cst.FunctionDef]] = {}
        for f in functions:
            if self.subject.class_of(f) is not None:
                methods.setdefault(f.name.value, []).append(f)
        # a callable held in a variable may be a model of the file, or one of its classes
        called_objects = {p for m in ("forward", "__call__", "__init__") for f in methods.get(m, [])
                          for p in _params(f)}
        for call in self.subject.nodes:
            if not isinstance(call, cst.Call) or not any(a.keyword for a in call.args):
                continue
            params = self._bound_params(call, methods, attributes, called_objects)
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in params and arg.keyword.value in names:
                    self.by_node[id(arg.keyword)] = names[arg.keyword.value]

    def _bound_params(self, call: cst.Call, methods, attributes, called_objects) -> set[str]:
        """The parameters a call's keywords may bind to (empty for a library's callable)."""
        func = call.func
        if isinstance(func, cst.Name):
            defs = self._definitions(func)
            if defs is None:
                return set()
            if not defs:
                return called_objects  # a parameter or variable holding some callable
            params = set()
            for d in defs:
                if isinstance(d, cst.FunctionDef):
                    params |= set(_params(d))
                elif isinstance(d, cst.ClassDef):
                    params |= {p for m in d.body.body if isinstance(m, cst.FunctionDef) and m.name.value == "__init__"
                               for p in _params(m)}
            return params
        if isinstance(func, cst.Attribute):
            name = func.attr.value
            if _is_super(func.value):
                return self._super_params(call, name, methods)
            if name in methods:
                return {p for m in methods[name] for p in _params(m)}
            if name in attributes:
                return called_objects  # an attribute holding some callable (`self.net(x, mask=m)`)
        return set()

    def _definitions(self, name: cst.Name) -> Optional[list[cst.CSTNode]]:
        """The file's functions and classes a Name resolves to ([] for another binding of the file),
        None when it resolves to an import or a builtin."""
        scope = self.subject.scopes.get(name)
        if scope is None:
            return None
        defs = []
        for access in scope.accesses[name]:
            if access.node is not name:
                continue
            for a in access.referents:
                if type(a) is not Assignment:
                    return None
                if isinstance(a.node, (cst.FunctionDef, cst.ClassDef)):
                    defs.append(a.node)
        return defs

    def _super_params(self, call: cst.Call, name: str, methods) -> set[str]:
        """`super().name(...)`: the parameters of `name` in a base class the file defines."""
        function = self.subject.function_of(call)
        owner = self.subject.class_of(function) if function is not None else None
        if owner is None:
            return set()
        bases = set()
        for base in owner.bases:
            if isinstance(base.value, cst.Name):
                bases |= {d for d in (self._definitions(base.value) or []) if isinstance(d, cst.ClassDef)}
        return {p for m in methods.get(name, []) if self.subject.class_of(m) in bases for p in _params(m)}


class _Renamer(cst.CSTTransformer):
    def __init__(self, by_node: dict[int, str], by_string: dict[int, str]):
        super().__init__()
        self.by_node = by_node
        self.by_string = by_string

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.by_node.get(id(original))
        return updated.with_changes(value=new) if new else updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        new = self.by_string.get(id(original))
        return updated.with_changes(value=new) if new else updated


def _elements(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            yield from _elements(e.value)
    elif isinstance(target, cst.StarredElement):
        yield from _elements(target.value)
    else:
        yield target


def _params(function: cst.FunctionDef) -> list[str]:
    p = function.params
    return [x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)]


def _named_by_string(node: cst.CSTNode) -> Optional[cst.SimpleString]:
    """The attribute name a call spells as a string: `getattr(x, "name")`, `setattr`, `hasattr`,
    `self.register_buffer("name", t)`, `register_parameter`, `add_module`."""
    if not isinstance(node, cst.Call) or not node.args:
        return None
    if _called(node) in ("getattr", "setattr", "hasattr") and len(node.args) >= 2:
        literal = node.args[1].value
    elif isinstance(node.func, cst.Attribute) and node.func.attr.value in REGISTERS:
        literal = node.args[0].value
    else:
        return None
    return literal if isinstance(literal, cst.SimpleString) and literal.value[:1] in "'\"" else None


def _called(call: cst.Call) -> Optional[str]:
    return call.func.value if isinstance(call.func, cst.Name) else None


def _is_super(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and _called(value) == "super"
