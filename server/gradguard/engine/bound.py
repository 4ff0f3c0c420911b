"""Definite assignment: is a name bound on every path to a statement?

A fix that inserts code (`h = h.detach()` at the top of a loop body, a `with
torch.no_grad():` around a block, a decorator) must read only names that are
bound where it goes, or the fixed program raises UnboundLocalError / NameError.
This module answers that with Python's scoping rules:

- a function's locals (every name it binds anywhere, unless declared `global` /
  `nonlocal`) are bound only where every path from the function's entry binds
  them; a loop body runs zero or more times; a handler may start anywhere in its
  `try`; `del` and `except ... as e` unbind; a comprehension's targets are its own;
- a module's (or class body's) names likewise, falling back to builtins;
- a name a function reads but does not bind is looked up when it runs: bound if
  an enclosing function binds it, or the module binds it anywhere.

Two facts per point: `must`, the names bound on every path (fewer names is the
safe side), and `first`, the names that may be bound the first time the point is
reached (no loop's back edge taken): a read outside `first` crashes on every run
that gets there. Only the points a fix asks about are recorded.
"""

from __future__ import annotations

import builtins
import enum
import textwrap
from dataclasses import dataclass, field
from typing import Iterable, Optional, Union

import libcst as cst

from gradguard.engine.walk import _fields, is_node

BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__builtins__", "__spec__", "__loader__"}
CONSTANTS = frozenset({"True", "False", "None"})


class Status(enum.IntEnum):
    BOUND = 0  # on every path
    MAYBE = 1  # on some paths: the fix is unsafe
    NEVER = 2  # not the first time the point is reached: the fix would always crash


@dataclass(frozen=True)
class State:
    must: Optional[frozenset]  # bound on every path; None: the point is unreachable
    first: frozenset = frozenset()  # may be bound on the first arrival

    def bind(self, names: Iterable[str], *, surely: bool = True) -> "State":
        names = frozenset(names)
        if self.must is None:
            return self
        return State(self.must | names if surely else self.must, self.first | names)

    def unbind(self, names: Iterable[str]) -> "State":
        names = frozenset(names)
        if self.must is None:
            return self
        return State(self.must - names, self.first - names)


DEAD = State(None)


def join(*states: State) -> State:
    live = [s for s in states if s.must is not None]
    if not live:
        return DEAD
    return State(frozenset.intersection(*(s.must for s in live)), frozenset().union(*(s.first for s in live)))


@dataclass
class Scope:
    kind: str  # "module" | "function" | "class"
    parent: Optional["Scope"]
    local: frozenset = frozenset()  # names the scope binds (a function's locals)
    declared: frozenset = frozenset()  # `global` / `nonlocal` names
    star: bool = False  # the module has `from x import *`: any name may be bound


Code = Union[list, cst.BaseExpression, cst.CSTNode]  # statements, or one node


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass
class _Loop:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


class Bindings:
    """The state before each statement of `points` (ids of statement nodes) in `module`."""

    def __init__(self, module: cst.Module, points: Iterable[int] = (), *, walrus: bool = True):
        """`walrus`: the module may hold `:=` (else expressions bind nothing: not walked)."""
        self._walrus = walrus
        self._ahead = _Ahead()
        self._points = set(points)
        self._at: dict[int, tuple[State, Scope, tuple]] = {}
        self._loops: list[_Loop] = []
        self._comp: list[frozenset] = []  # names a comprehension being read binds
        self._reads: Optional[list] = None  # (name, Status, sure to run) while a fix's code is read
        self._chain: tuple = ()  # where the code goes on when the block being walked ends (see `_block`)
        bound, declared, star = binds(module.body, walrus)
        self.anywhere = bound | _globals_declared(module)  # the module binds these somewhere
        self.top = Scope("module", None, bound, frozenset(), star)
        self.extra: frozenset = frozenset()
        self._block(module.body, State(frozenset()), self.top)

    # ---------------------------------------------------------------- questions
    def unbound(self, stmt: cst.CSTNode, new: Code, old: Code, extra: frozenset = frozenset()) -> dict[str, Status]:
        """The names `new`, put before `stmt` (in place of `old`), reads where they may be
        unbound, that `old` does not already read there: name -> MAYBE or NEVER. `extra`:
        module-level names the same fix binds (its `import torch`)."""
        found = self._at.get(id(stmt))
        if found is None:
            return {}
        state, scope, frames = found
        made_local = frozenset()
        if scope.kind == "function":  # a name the new code binds becomes a local of the whole function
            made_local = binds(_as_list(new))[0] - scope.local - scope.declared
            scope = Scope("function", scope.parent, scope.local | made_local, scope.declared)
        # a name the program reads anyway (as the same variable) on every path from here before
        # binding it: the fix adds no crash (`if done: h = zeros()` before `h = h.detach()`)
        fresh = read_first(new) - read_first(old)
        if fresh:
            fresh -= self._ahead.run(frames, fresh=True) - made_local
        if not fresh:
            return {}
        if scope.kind == "module":
            state = state.bind(extra)
        self.extra, self._reads = extra, []
        try:
            self._code(new, state, scope)
            reads = self._reads
        finally:
            self.extra, self._reads = frozenset(), None
        out: dict[str, Status] = {}
        for name, status, _ in reads:
            if name in fresh and status is not Status.BOUND:
                out[name] = max(out.get(name, status), status)
        return out

    # ---------------------------------------------------------------- statements
    def _code(self, code: Code, st: State, scope: Scope) -> State:
        if isinstance(code, list):
            return self._block(code, st, scope)
        if isinstance(code, cst.BaseExpression):
            return self._expr(code, st, scope)
        return self._stmt(code, st, scope)

    def _block(self, stmts, st: State, scope: Scope) -> State:
        """`self._chain`: the frames ((statements, index), ...) the program goes on with when
        this block falls through its end (the statement after an `if`; nothing after a loop's
        or a `try`'s body, whose continuation is not one path)."""
        outer = self._chain
        for i, stmt in enumerate(stmts):
            if id(stmt) in self._points:
                self._at[id(stmt)] = (st, scope, ((stmts, i), *outer))
            self._chain = ((stmts, i + 1), *outer)
            st = self._stmt(stmt, st, scope)
        self._chain = outer
        return st

    def _alone(self, suite, st: State, scope: Scope) -> State:
        """A block whose end does not lead on to one known statement (a loop's or a try's body)."""
        saved, self._chain = self._chain, ()
        try:
            return self._body(suite, st, scope)
        finally:
            self._chain = saved

    def _body(self, suite, st: State, scope: Scope) -> State:
        return self._block(suite.body, st, scope)

    def _stmt(self, stmt, st: State, scope: Scope) -> State:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                st = self._small(small, st, scope)
            return st
        if isinstance(stmt, cst.BaseSmallStatement):
            return self._small(stmt, st, scope)
        if isinstance(stmt, cst.If):
            st = self._expr(stmt.test, st, scope)
            then = self._body(stmt.body, st, scope)
            other = self._stmt(stmt.orelse, st, scope) if isinstance(stmt.orelse, cst.If) else (
                self._body(stmt.orelse.body, st, scope) if stmt.orelse is not None else st)
            return join(then, other)
        if isinstance(stmt, (cst.For, cst.While)):
            return self._loop(stmt, st, scope)
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            return self._try(stmt, st, scope)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                st = self._expr(item.item, st, scope)
                if item.asname is not None:
                    st = self._target(item.asname.name, st, scope)
            return self._body(stmt.body, st, scope)
        if isinstance(stmt, cst.FunctionDef):
            for d in stmt.decorators:
                st = self._expr(d.decorator, st, scope)
            st = self._params(stmt.params, st, scope)
            self._function(stmt, scope)
            return st.bind([stmt.name.value])
        if isinstance(stmt, cst.ClassDef):
            for d in stmt.decorators:
                st = self._expr(d.decorator, st, scope)
            for arg in (*stmt.bases, *stmt.keywords):
                st = self._expr(arg.value, st, scope)
            bound, declared, _ = binds(stmt.body.body, self._walrus)
            self._alone(stmt.body, State(frozenset()), Scope("class", scope, bound, declared))
            return st.bind([stmt.name.value])
        if isinstance(stmt, cst.Match):
            st = self._expr(stmt.subject, st, scope)
            outs, total = [], False
            for case in stmt.cases:
                names = _pattern_names(case.pattern)
                s = st.bind(names)
                if case.guard is not None:
                    s = self._expr(case.guard, s, scope)
                outs.append(self._body(case.body, s, scope))
                total |= case.guard is None and isinstance(case.pattern, cst.MatchAs) and case.pattern.pattern is None
            return join(*outs, *([] if total else [st]))
        return st

    def _function(self, fn: cst.FunctionDef, scope: Scope) -> None:
        params = _param_names(fn.params)
        bound, declared, _ = binds(fn.body.body, self._walrus)
        inner = Scope("function", scope, (bound | params) - declared, declared)
        saved, self._loops = self._loops, []
        self._alone(fn.body, State(params, params), inner)
        self._loops = saved

    def _params(self, params: cst.Parameters, st: State, scope: Scope) -> State:
        for p in (*params.params, *params.kwonly_params, *params.posonly_params):
            if p.default is not None:
                st = self._expr(p.default, st, scope)
        return st

    def _loop(self, loop, st: State, scope: Scope) -> State:
        if isinstance(loop, cst.For):
            st = self._expr(loop.iter, st, scope)
        if st.must is None:
            head = st
        else:  # the body only adds names, but for the ones it deletes
            head = State(st.must - _deleted(loop.body), st.first)
        if isinstance(loop, cst.While):
            head = self._expr(loop.test, head, scope)
        start = self._target(loop.target, head, scope) if isinstance(loop, cst.For) else head
        self._loops.append(_Loop())
        end = self._alone(loop.body, start, scope)
        ctx = self._loops.pop()
        after = join(end, *ctx.continues)
        forever = isinstance(loop, cst.While) and _always_true(loop.test)
        if forever or head.must is None:
            exit_ = DEAD
        else:
            exit_ = State(head.must, head.first | after.first)
        if loop.orelse is not None:
            exit_ = self._body(loop.orelse.body, exit_, scope)
        return join(exit_, *ctx.breaks)

    def _try(self, stmt, st: State, scope: Scope) -> State:
        body = self._alone(stmt.body, st, scope)
        if st.must is None:
            start = st
        else:  # a handler may start before any statement of the body ran
            start = State(st.must - _deleted(stmt.body), st.first | body.first)
        outs = []
        for handler in stmt.handlers:
            s = start
            if handler.type is not None:
                s = self._expr(handler.type, s, scope)
            name = handler.name.name.value if handler.name is not None and isinstance(handler.name.name, cst.Name) else None
            if name is not None:
                s = s.bind([name])
            s = self._alone(handler.body, s, scope)
            outs.append(s.unbind([name]) if name is not None else s)
        normal = self._alone(stmt.orelse.body, body, scope) if stmt.orelse is not None else body
        normal = join(normal, *outs)
        if stmt.finalbody is None:
            return normal
        out = self._alone(stmt.finalbody.body, normal, scope)
        self._alone(stmt.finalbody.body, join(normal, start), scope)  # as reached from an exception
        return out

    def _small(self, small, st: State, scope: Scope) -> State:
        if isinstance(small, cst.Expr):
            return self._expr(small.value, st, scope)
        if isinstance(small, cst.Assign):
            st = self._expr(small.value, st, scope)
            for t in small.targets:
                st = self._target(t.target, st, scope)
            return st
        if isinstance(small, cst.AnnAssign):
            if small.value is None:
                return st
            return self._target(small.target, self._expr(small.value, st, scope), scope)
        if isinstance(small, cst.AugAssign):
            st = self._expr(small.target, st, scope)  # `x += 1` reads `x` first
            return self._target(small.target, self._expr(small.value, st, scope), scope)
        if isinstance(small, (cst.Return, cst.Raise)):
            for child in (getattr(small, "value", None), getattr(small, "exc", None), getattr(small, "cause", None)):
                if isinstance(child, cst.BaseExpression):
                    st = self._expr(child, st, scope)
                elif isinstance(child, cst.From):
                    st = self._expr(child.item, st, scope)
            return DEAD
        if isinstance(small, (cst.Break, cst.Continue)):
            if self._loops:
                (self._loops[-1].breaks if isinstance(small, cst.Break) else self._loops[-1].continues).append(st)
            return DEAD
        if isinstance(small, cst.Del):
            st = self._expr(small.target, st, scope)
            return st.unbind(_target_names(small.target))
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            return st.bind(_import_names(small))
        if isinstance(small, cst.Assert):
            st = self._expr(small.test, st, scope)
            return self._expr(small.msg, st, scope) if small.msg is not None else st
        return st  # pass, global, nonlocal

    def _target(self, target, st: State, scope: Scope) -> State:
        """Bind an assignment target (`a`, `a, *b`, `x.attr`, `x[i]`: the last two read `x`)."""
        if isinstance(target, cst.Name):
            return st.bind([target.value])
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                st = self._target(e.value, st, scope)
            return st
        if isinstance(target, cst.StarredElement):
            return self._target(target.value, st, scope)
        return self._expr(target, st, scope)

    # ---------------------------------------------------------------- expressions
    def _expr(self, node, st: State, scope: Scope, maybe: bool = False) -> State:
        """Read an expression: its names are looked up, its walruses bind (only `maybe`
        where the part may not run: the right of `and`/`or`, a branch of `x if c else y`)."""
        if self._reads is None and not self._walrus:
            return st  # nothing to read, nothing bound
        t = type(node)  # (libcst's classes are ABCs: comparing types is much cheaper than isinstance)
        if t is cst.Name:
            if self._reads is not None and node.value not in CONSTANTS:
                self._reads.append((node.value, self._status(node.value, st, scope), not maybe and not self._comp))
            return st
        if t is cst.Attribute or t is cst.Arg:
            return self._expr(node.value, st, scope, maybe)
        if t is cst.NamedExpr:
            st = self._expr(node.value, st, scope, maybe)
            return st.bind(_target_names(node.target), surely=not maybe and not self._comp)
        if t is cst.BooleanOperation:
            st = self._expr(node.left, st, scope, maybe)
            return self._expr(node.right, st, scope, True)
        if t is cst.IfExp:
            st = self._expr(node.test, st, scope, maybe)
            return self._expr(node.orelse, self._expr(node.body, st, scope, True), scope, True)
        if t is cst.Lambda:
            return self._params(node.params, st, scope)  # the body runs later, when called
        if t in _COMPREHENSIONS:
            return self._comprehension(node, st, scope)
        for child in children(node):
            st = self._expr(child, st, scope, maybe)
        return st

    def _comprehension(self, node, st: State, scope: Scope) -> State:
        first = node.for_in
        st = self._expr(first.iter, st, scope)  # in the enclosing scope
        names, comp = set(), first
        while comp is not None:
            names |= _target_names(comp.target)
            comp = comp.inner_for_in
        self._comp.append(frozenset(names))
        try:
            comp = first
            while comp is not None:
                if comp is not first:
                    st = self._expr(comp.iter, st, scope, True)
                for cond in comp.ifs:
                    st = self._expr(cond.test, st, scope, True)
                comp = comp.inner_for_in
            parts = (node.key, node.value) if isinstance(node, cst.DictComp) else (node.elt,)
            for part in parts:
                st = self._expr(part, st, scope, True)
        finally:
            self._comp.pop()
        return st

    def _status(self, name: str, st: State, scope: Scope) -> Status:
        if st.must is None or any(name in names for names in self._comp):
            return Status.BOUND
        if scope.kind == "function":
            if name in scope.declared:
                return self._free(name, self.top)
            if name in scope.local:
                return _seen(name, st)
            return self._free(name, scope.parent)
        seen = _seen(name, st)
        if seen is Status.BOUND:
            return seen
        if scope.kind == "class":
            return min(seen, self._free(name, scope.parent))
        if name in BUILTINS or name in self.extra or scope.star:
            return Status.BOUND
        return seen

    def _free(self, name: str, scope: Optional[Scope]) -> Status:
        """A name read where it is not bound: looked up in the enclosing functions, then
        the module, when the code runs."""
        while scope is not None and scope.kind != "module":
            if scope.kind == "function" and name in scope.local:
                return Status.BOUND  # a closure: bound by the time it is called, as far as we can tell
            scope = scope.parent
        if name in self.anywhere or name in BUILTINS or name in self.extra or self.top.star:
            return Status.BOUND
        return Status.NEVER


def children(node):
    for name in _fields(type(node)):
        value = getattr(node, name)
        if is_node(value):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from (child for child in value if is_node(child))


_EXPRESSION_TYPES: dict = {}


def _is_expression(value) -> bool:
    t = type(value)
    known = _EXPRESSION_TYPES.get(t)
    if known is None:
        known = _EXPRESSION_TYPES[t] = isinstance(value, cst.BaseExpression)
    return known


def _seen(name: str, st: State) -> Status:
    if name in st.must:
        return Status.BOUND
    return Status.MAYBE if name in st.first else Status.NEVER


def _always_true(test) -> bool:
    return isinstance(test, cst.Name) and test.value == "True" or (
        isinstance(test, cst.Integer) and test.evaluated_value != 0)


def _as_list(code: Code) -> list:
    if isinstance(code, list):
        return code
    return [] if isinstance(code, cst.BaseExpression) else [code]


def _probe(code: Code, *, sure: bool = False) -> frozenset:
    """The names `code` reads before binding them itself, however it is placed (`sure`:
    only reads that run whenever the code does: not the right of an `and`, not a branch)."""
    probe = Bindings.__new__(Bindings)
    probe._points, probe._at, probe._loops, probe._comp, probe._reads = set(), {}, [], [], []
    probe._chain, probe.anywhere, probe.extra, probe._walrus = (), frozenset(), frozenset(), True
    probe.top = Scope("function", None)
    probe._code(code, State(frozenset()), Scope("class", None))  # a class body: reads see only its own bindings
    return frozenset(name for name, status, certain in probe._reads if status is not Status.BOUND and (certain or not sure))


def read_first(code: Code) -> frozenset:
    return _probe(code)


AHEAD_BUDGET = 200  # statements looked at per question: past them, fewer names count as read (the safe side)


class _Ahead:
    """The names every path from `frames` ((statements, index), ...: the statement there,
    then the rest of its block, then what follows the block) reads before binding them,
    before it leaves the code it can see (a loop's next iteration, a `return`). Answers
    are kept for the next question (shorter ones, cut by the budget, only excuse less)."""

    def __init__(self):
        self.budget = AHEAD_BUDGET
        self.memo: dict = {}
        self.lines: dict = {}  # id(simple statement line) -> (names it surely reads first, names it binds)

    def run(self, frames: tuple, *, fresh: bool = False) -> frozenset:
        if fresh:
            self.budget = AHEAD_BUDGET
        key = tuple((id(stmts), i) for stmts, i in frames)
        if key not in self.memo:
            self.memo[key] = self._run(frames)
        return self.memo[key]

    def _line(self, stmt) -> tuple[frozenset, frozenset]:
        found = self.lines.get(id(stmt))
        if found is None:
            found = self.lines[id(stmt)] = (_probe(list(stmt.body), sure=True), binds([stmt])[0])
        return found

    def _run(self, frames: tuple) -> frozenset:
        read: set = set()
        bound: set = set()
        while frames:
            (stmts, i), outer = frames[0], frames[1:]
            if i >= len(stmts):
                frames = outer
                continue
            self.budget -= 1
            if self.budget < 0:
                break
            stmt, rest = stmts[i], ((stmts, i + 1), *outer)
            if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                reads, binding = self._line(stmt)
                read |= reads - bound
                bound |= binding
                if any(isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue)) for small in stmt.body):
                    break
                frames = rest
                continue
            read |= self._compound(stmt, rest) - bound
            break
        return frozenset(read)

    def _compound(self, stmt, rest: tuple) -> frozenset:
        def then(suite, after=rest):
            return self.run(((list(suite.body), 0), *after))

        if isinstance(stmt, cst.If):
            if stmt.orelse is None:
                other = self.run(rest)
            elif isinstance(stmt.orelse, cst.If):
                other = self.run((([stmt.orelse], 0), *rest))
            else:
                other = then(stmt.orelse.body)
            return _probe(stmt.test, sure=True) | (then(stmt.body) & other) - binds([cst.Expr(stmt.test)])[0]  # minus its walruses
        if isinstance(stmt, (cst.For, cst.While)):
            head = stmt.iter if isinstance(stmt, cst.For) else stmt.test
            body = then(stmt.body, ()) - (_target_names(stmt.target) if isinstance(stmt, cst.For) else set())
            if isinstance(stmt, cst.While) and _always_true(stmt.test):
                return _probe(head, sure=True) | body
            skipped = then(stmt.orelse.body) if stmt.orelse is not None else self.run(rest)
            return _probe(head, sure=True) | (body & skipped)
        if isinstance(stmt, cst.With):
            items = [item.item for item in stmt.items]
            names = {n for item in stmt.items if item.asname is not None for n in _target_names(item.asname.name)}
            return frozenset().union(*(_probe(e, sure=True) for e in items)) | (then(stmt.body) - names)
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            out = then(stmt.body, ())
            for handler in stmt.handlers:
                out &= then(handler.body, ())
            return out
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            parts = [d.decorator for d in stmt.decorators]
            if isinstance(stmt, cst.ClassDef):
                parts += [a.value for a in (*stmt.bases, *stmt.keywords)]
            return frozenset().union(*(_probe(e, sure=True) for e in parts)) | (self.run(rest) - {stmt.name.value})
        if isinstance(stmt, cst.Match):
            out = None
            total = False
            for case in stmt.cases:
                reads = then(case.body) - _pattern_names(case.pattern)
                out = reads if out is None else out & reads
                total |= case.guard is None and isinstance(case.pattern, cst.MatchAs) and case.pattern.pattern is None
            if not total:
                out = self.run(rest) if out is None else out & self.run(rest)
            return _probe(stmt.subject, sure=True) | (out or frozenset())
        return frozenset()


# -------------------------------------------------------------------- what a block binds
class _Binder:
    """The names a block binds (its scope's locals), not looking into nested scopes
    but for their names and the walruses of its comprehensions (`walrus`: there may be some)."""

    def __init__(self, walrus: bool = True):
        self.bound: set = set()
        self.declared: set = set()
        self.star = False
        self.walrus = walrus

    def visit(self, node) -> None:
        t = type(node)  # (libcst's classes are ABCs: comparing types is much cheaper than isinstance)
        if not self.walrus and _is_expression(node) or t is cst.Lambda:
            return
        if t is cst.FunctionDef or t is cst.ClassDef:
            self.bound.add(node.name.value)
            for d in node.decorators:
                self.visit(d)
            return
        if t is cst.Global or t is cst.Nonlocal:
            self.declared |= {n.name.value for n in node.names}
            return
        if t is cst.Import or t is cst.ImportFrom:
            self.bound |= _import_names(node)
            self.star |= t is cst.ImportFrom and type(node.names) is cst.ImportStar
            return
        target = _BINDING.get(t)
        if target is not None:
            self.bound |= _pattern_names(node.pattern) if t is cst.MatchCase else _target_names(getattr(node, target))
        for child in children(node):
            self.visit(child)


# The nodes that bind a name, and the field holding it (a comprehension's targets are its own).
_BINDING = {cst.AssignTarget: "target", cst.AnnAssign: "target", cst.AugAssign: "target", cst.For: "target",
            cst.AsName: "name", cst.Del: "target", cst.NamedExpr: "target", cst.MatchCase: "pattern"}


def binds(stmts, walrus: bool = True) -> tuple[frozenset, frozenset, bool]:
    """(names bound, names declared global/nonlocal, has a star import) of a block."""
    b = _Binder(walrus)
    for stmt in stmts:
        b.visit(stmt)
    return frozenset(b.bound - b.declared), frozenset(b.declared), b.star


def _globals_declared(module: cst.Module) -> frozenset:
    """Names some function declares `global` (and so may bind at module level)."""
    found: set = set()

    def visit(node) -> None:
        if isinstance(node, cst.Global):
            found.update(n.name.value for n in node.names)
        elif isinstance(node, (cst.BaseStatement, cst.BaseSuite, cst.Module)):
            for child in children(node):
                visit(child)

    visit(module)
    return frozenset(found)


def _deleted(suite) -> frozenset:
    """Names a block may unbind: `del x`, and `except ... as e` (unbound when the handler ends)."""
    found: set = set()

    def visit(node) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return
        if isinstance(node, cst.Del):
            found.update(_target_names(node.target))
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            found.update(_target_names(node.name.name))
        for child in children(node):
            visit(child)

    visit(suite)
    return frozenset(found)


def _target_names(target) -> set:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    if isinstance(target, (cst.StarredElement, cst.Element)):
        return _target_names(target.value)
    if isinstance(target, cst.Del):
        return _target_names(target.target)
    return set()


def _import_names(node) -> set:
    if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
        return set()
    out = set()
    for alias in node.names:
        if alias.asname is not None:
            out |= _target_names(alias.asname.name)
        elif isinstance(node, cst.Import):
            name = alias.name
            while isinstance(name, cst.Attribute):  # `import a.b.c` binds `a`
                name = name.value
            out.add(name.value)
        else:
            out.add(alias.name.value)
    return out


def _param_names(params: cst.Parameters) -> frozenset:
    ps = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            ps.append(star)
    return frozenset(p.name.value for p in ps)


def _pattern_names(pattern) -> set:
    out = set()

    def visit(node) -> None:
        if isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
            out.add(node.name.value)
        if isinstance(node, cst.MatchMapping) and node.rest is not None:
            out.add(node.rest.value)
        for child in children(node):
            visit(child)

    visit(pattern)
    return out


# -------------------------------------------------------------------- fix text as code
def parse_code(text: str, indent: str, statement: bool) -> Optional[Code]:
    """The code an edit writes, read back: statements (`indent` is the column the text
    starts at, its later lines carry their own), or an expression. A decorator is read
    with a stand-in function under it. None if it cannot be read on its own."""
    if statement:
        body = textwrap.dedent(indent + text)
        for tail in ("", "def _gradguard_stand_in():\n    pass\n"):
            try:
                return list(cst.parse_module(body + ("\n" if tail and not body.endswith("\n") else "") + tail).body)
            except cst.ParserSyntaxError:
                continue
        return None
    try:
        return cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return None
