"""Calls that cross a file's border, for project-wide analysis (gradguard/project/).

Out: the calls this file makes of what another file of the project may define (a function or
class it imports, a method of an instance built from an imported class, a method of an object
nothing here tells), each with the grad mode it runs in. In: how the other files call this
file's top-level functions and methods (`Outside`), where they all agree - a model's
`generate()` that main.py only calls from a function decorated `@torch.no_grad()` runs with
grad off. The engine never reads another file: the driver hands it what the others said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from gradguard.engine import evidence
from gradguard.engine.handing import constant_index
from gradguard.engine.knowledge import AUTOGRAD_NAMES
from gradguard.engine.model import Backward, ClassInfo, FunctionInfo, GradMode, Store, forward_code
from gradguard.engine.values import UNKNOWN, Evidence, Grad, Kind, Value, all_origins, combined_cuts

# Where a call's callee comes from torch or the standard library, never from the project: not
# exported. (Other packages are left to the index: checking timm itself, `timm.layers` is the project.)
LIBRARIES = frozenset({
    "torch", "numpy", "math", "os", "sys", "re", "json", "time", "random", "collections", "itertools",
    "functools", "logging", "argparse", "pathlib", "typing", "copy", "pickle", "shutil", "glob", "datetime",
    "builtins", "warnings", "contextlib", "dataclasses", "inspect", "subprocess", "tempfile",
})
# `Net(...).to(device).eval()`: still the instance `Net(...)` built
_SAME_INSTANCE = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "double", "half", "bfloat16",
                            "requires_grad_", "share_memory"})


@dataclass(frozen=True)
class Call:
    """A call of something another file may define."""

    target: str  # "model.Model.generate" (as this file's imports name it), or "generate" when `by_name`
    by_name: bool  # the receiver is unknown: only the method's name says what it may be
    mode: str  # GradMode value at the call: "on", "off", "unknown"
    proved: bool  # grad is on for certain (module-level code, a function that trains)
    how: str  # where it is and why the mode is what it is: "in `test()`, decorated `@t.no_grad()`"
    in_loop: bool = False  # in a loop, handed a value with a graph: what the callee keeps piles up
    unknown: bool = False  # its result, bound to a name, is unknown here: another file may say it is a model
    per_batch: bool = False  # every training step runs it: in a forward, or in the loop body of each backward
    args: tuple = ()  # ((position or keyword, what the argument is: `describe`), ...) - what is known of each
    line: int = 0  # where the callee's name is (0: unknown); the column's line prefix is ASCII
    column: int = 0
    result: bool = False  # its result is unknown here: another file may say it carries a graph (Returns)


@dataclass(frozen=True)
class At:
    """A place in another file of the project: the call a finding's related location points at."""

    path: str  # absolute
    line: int
    column: int


@dataclass(frozen=True)
class Outside:
    """How every other file of the project calls a function of this file, where they agree."""

    mode: Optional[GradMode]  # None: the calls disagree
    proved: bool  # ON only: every call runs with grad on for certain
    why: str  # "called only with grad off: main.py line 9, in `test()`, decorated `@t.no_grad()`"
    guessed: bool = False  # only calls of objects nothing tells, matched by the method's name
    per_batch: Optional[bool] = None  # every call runs once per training step (True), none does (False)
    where: str = ""  # the calls: "main.py line 9, in `test()`, decorated `@t.no_grad()` (and 2 more calls)"
    # ((position after `self`, or keyword), what every call passes there), where the calls agree: a
    # constructor's under "C.__init__" (`RegressionUnit(m, opt, InMemoryLogger())`)
    params: tuple = ()
    at: Optional[At] = None  # the call `where` names first


@dataclass(frozen=True)
class Keeps:
    """A method's summary for other files: which arguments it keeps on its object past the call
    (`AverageMeter.update(self, val, n=1)`: `self.sum += val * n` keeps `val`)."""

    params: tuple  # its positional parameters after `self`
    kept: tuple  # ((parameter, "self.sum"), ...)


@dataclass(frozen=True)
class Builds:
    """A class of the project that is an nn.Module, or a function that returns one (`create_model`):
    what another file's `model = create_model(cfg)` holds."""

    parameterized: bool  # its calls build a graph by themselves (it has weights)
    where: str  # "builds `Net`, an nn.Module", "returns an nn.Module"; then the file: "(models/net.py)"
    forwards: tuple = ()  # a class's methods that return one tensor the model computes (`sample()`): forward passes


@dataclass(frozen=True)
class Returns:
    """A module-level function of the project that returns a tensor carrying a graph it computed
    itself (a loss of a model's outputs): what another file's `history.append(train_step(...))`
    stores. `backward`: the line of the `.backward()` it ran on that graph before returning it - the
    PyTorch FAQ's `total_loss += loss`, a training loop in the caller's file."""

    name: str
    scalar: bool
    backward: int = 0  # 0: nothing back-propagated it yet
    path: str = ""  # its file, relative to the project root (set when handed to a caller)
    # Not empty: it makes no graph itself but returns what its arguments' graphs become (a loss of its
    # own, `def squared_loss(y_hat, y): return (y_hat - y) ** 2 / 2`): ((position, or -1 for a
    # keyword-only one, parameter), ...) of the parameters whose graphs the result carries
    through: tuple = ()


@dataclass(frozen=True)
class Gives:
    """A module-level function of the project that returns a tuple, or a dict with constant keys, whose
    items it makes itself and this file knows (`return grad_norms, losses`, `losses` a list of lists of
    losses with their graphs): what another file's `losses` of `grads, losses = sweep(x, y)` holds,
    and so what that file passes on when it gives it back to a function of the project
    (callers._params). `shape`: `shape_of`."""

    shape: tuple


def shape_of(v: Value, given: frozenset) -> Optional[tuple]:
    """A returned value for `Gives`: ("tuple", (each item's shape or None, ...)), ("keyed", ((constant
    key, shape), ...)), or `describe` - only for a graph the function made itself, not one an argument
    brought (`given`: the origins of its parameters' values), which another caller's arguments decide."""
    if v.guessed:
        return None
    if v.elements is not None:
        parts = tuple(shape_of(e, given) for e in v.elements)
        return ("tuple", parts) if any(p is not None for p in parts) else None
    if v.kind is Kind.CONTAINER and v.keyed:
        parts = tuple((k, p) for k, e in v.keyed if isinstance(k, str) and (p := shape_of(e, given)) is not None)
        return ("keyed", parts) if parts else None
    inner = v
    while inner.kind is Kind.CONTAINER and inner.item is not None and not inner.keyed and inner.elements is None:
        inner = inner.item
    if inner.has_graph and not any(o not in given and not isinstance(o, cst.Param) for o in inner.origins):
        return None
    return describe(v)


def shape_at(shape: Optional[tuple], path: tuple) -> Optional[tuple]:
    """The shape of the item at `path` (positions of tuples, keys of dicts) in a `Gives.shape`."""
    for step in path:
        if shape is None:
            return None
        if shape[0] == "tuple" and isinstance(step, int) and 0 <= step < len(shape[1]):
            shape = shape[1][step]
        elif shape[0] == "keyed" and isinstance(step, str):
            shape = next((p for k, p in shape[1] if k == step), None)
        else:
            return None
    return shape


def describe(v: Value) -> Optional[tuple]:
    """What a call passes, as another file can use it: ("tensor", "graph" | "nograd"), ("module",
    parameterized), ("loss", 0-dim), ("number",), ("items", what each element is); None where nothing
    is proved. A model the caller froze (`G.requires_grad_(False)`) is none of them: the callee may
    unfreeze it (a GAN's phases do), so whether its calls build a graph is the callee's to say."""
    if v.guessed:
        return None
    if v.kind is Kind.TENSOR:
        if v.has_graph:
            return ("tensor", "graph")
        return ("tensor", "nograd") if v.grad is Grad.NO else None
    if v.kind is Kind.MODULE:
        if v.frozen:
            return None
        return ("loss", bool(v.scalar)) if v.loss else ("module", bool(v.parameterized))
    if v.kind is Kind.NUMBER:
        return ("number",)
    if v.kind is Kind.CONTAINER and v.item is not None and not v.keyed:
        inner = describe(v.item)
        return ("items", inner) if inner is not None else None
    if v.kind is Kind.OBJECT and isinstance(v.cls, ClassInfo):
        # an object of a class the caller defines (LanPaint's model sampling, whose `sigmas` is a
        # tensor): ("fields", ((attribute, what it is), ...)) for its tensor attributes
        fields = tuple(sorted((name, what) for name, a in v.cls.attrs.items()
                              if a.kind is Kind.TENSOR and (what := describe(a)) is not None))
        return ("fields", fields) if fields else None
    return None


def callee_name(call: cst.Call) -> cst.CSTNode:
    """The node a call's position is given by: `generate` of `g.generate(4)`, `Net` of `Net()`."""
    return call.func.attr if isinstance(call.func, cst.Attribute) else call.func


def _one_graph(v: Value) -> bool:
    return v.kind is Kind.TENSOR and v.has_graph and v.elements is None and not v.guessed


def _made_inside(fn: FunctionInfo) -> bool:
    """Does `fn` return one tensor whose graph it builds itself (a model it is given, called in its
    body), not only one its arguments bring (`def mse(pred, y)`: whether the result has a graph is
    each caller's)?"""
    if not _one_graph(fn.returns):
        return False
    given = frozenset().union(*(all_origins(v) for v in fn.param_values.values()))
    return any(o not in given and not isinstance(o, cst.Param) for o in fn.returns.origins)


def _carried(fn: FunctionInfo, stores: list, escapes: list) -> tuple:
    """The parameters whose graphs `fn` returns, where it returns one tensor computed from what it was
    given and nothing else (Returns.through): its last analysis, with grad on, was given graphs and
    returned a graph made of them only; it keeps, hands on, yields and back-propagates none of them
    (a caller's graph it returns is all that becomes of it). () where that is not so."""
    if fn.decorated_mode is not None or fn.context is None or fn.context[0] is not GradMode.ON or fn.in_progress:
        return ()
    if fn.backwards or fn.kept or fn.yields is not None or fn.freezes or fn.repeated or not _one_graph(fn.returns):
        return ()
    p = fn.node.params
    if isinstance(p.star_arg, cst.Param) or isinstance(p.star_kwarg, cst.Param):
        return ()
    positional = [x.name.value for x in (*p.posonly_params, *p.params)]
    given = {name: v for name, v in fn.bound.items() if v.has_graph}
    if not given:
        return ()
    made_of = frozenset().union(*(v.origins for v in given.values()))
    returned = fn.returns.origins
    if not returned or not returned <= made_of:
        return ()
    if any(s.function is fn for s in stores) or any(u.function is fn and u.origins & made_of for u in escapes):
        return ()
    return tuple((positional.index(name) if name in positional else -1, name)
                 for name, v in given.items() if v.origins & returned)


def _per_batch(fn: Optional[FunctionInfo], loops: tuple, forward: Optional[dict] = None) -> bool:
    """Does a call in `fn`, inside `loops`, run once per training step: in a forward, or in the loop
    body of every backward `fn` runs (GG104 asks it of a reset called from another file).
    `forward`: fn -> forward_code(fn), kept across the calls of one walk that is over (a file's
    calls are mostly in a few functions, and forward_code walks up their callers)."""
    if fn is None:
        return False
    if forward is None:
        forward = {}
    if fn not in forward:
        forward[fn] = forward_code(fn)
    if forward[fn]:
        return True
    backs = [b.loops for b in fn.backwards]
    return bool(backs) and all(set(b) <= set(loops) for b in backs)


# an identifier not followed by `(` on its line: a mention that may not be a call
_UNCALLED = re.compile(r"\b(\w+)\b(?![ \t]*\()")


def _none_handed(classes: list, source: str) -> None:
    """Tell the nn.Module classes none of whose methods the text ever names but to call it
    (`self.m(`, `def m(`) that they hand out no method (ClassInfo.handed, else found by walking
    the whole class the first time forward_code asks): every call exported asks it. `forward`
    is not looked for (a docstring's "forward pass"): forward_code never asks whether it is handed."""
    uncalled = None
    for info in classes:
        if info.module_like and info.handed is None:
            if uncalled is None:
                uncalled = frozenset(_UNCALLED.findall(source))
            if uncalled.isdisjoint(info.methods.keys() - {"forward"}):
                info.handed = {}


def symbol_of(fn: FunctionInfo) -> Optional[str]:
    """"f" for a module-level function, "C.f" for a method of a module-level class, else None
    (another file cannot name a nested function)."""
    if fn.cls is None:
        return fn.name if fn.scope is not None and fn.scope.kind == "module" else None
    owner = fn.cls.scope
    return f"{fn.cls.name}.{fn.name}" if owner is not None and owner.kind == "module" else None


class Border:
    """FlowAnalysis' side: `outside` (given) and `outgoing` (collected; None: not asked for)."""

    outside: dict
    outgoing: Optional[list]
    asked: Optional[set]  # (symbol, question) the walk read of `outside` (see outside_of); None: not collected
    foreign: dict  # module-level statements joined from other files (Settings.neighbours) -> the file: not exported
    callee_summaries: dict  # target as this file spells it ("utils.AverageMeter.update") -> Keeps | Builds

    def outside_of(self, fn: FunctionInfo, question: str = "mode") -> Optional[Outside]:
        """What the other files say of `fn`, if the file itself never calls it. `question`: what of it
        the analysis reads - "mode" (grad mode of its calls), "proved" (grad on for certain),
        "per_batch" (run every training step) or "params" (what they pass); the first pass of a
        project run records which were asked (`asked`), so that what the other files then say is
        analysed again only where it answers one of them."""
        if fn.call_modes or fn.decorated_mode is not None:
            return None
        key = symbol_of(fn)
        if key is not None and self.asked is not None:
            self.asked.add((key, question))
        found = self.outside.get(key) if key is not None and self.outside else None
        if found is not None and found.guessed and self.facts_of(fn.node).all_names & AUTOGRAD_NAMES:
            return None  # a guessed callee must not make its own backward look like one under no_grad
        return found

    def told_param(self, fn: FunctionInfo, param: cst.Param, position: Optional[int]) -> Optional[Value]:
        """What every call in the other files passes for a parameter of `fn` (`position`: after `self`;
        None for a keyword-only one), where they agree and the file itself never calls `fn`."""
        outside = self.outside_of(fn, "params")
        if outside is None or not outside.params:
            return None
        name = param.name.value
        what = next((w for key, w in outside.params if key == name or key == position), None)
        if what is None:
            return None
        why = Evidence(param, f"passed by {outside.where}", elsewhere=True)
        if what[0] == "instance":
            info = next((c for c in self.classes if c.name == what[1] and c.scope is not None and c.scope.kind == "module"), None)
            if info is None:
                return None
            return Value(kind=Kind.MODULE if info.module_like else Kind.OBJECT, grad=Grad.NO, cls=info,
                         parameterized=info.parameterized, why=why)
        return self._described(what, param, why)

    def _described(self, what: tuple, param: cst.Param, why: Evidence) -> Optional[Value]:
        """The value `describe` described."""
        if what[0] == "tensor" and what[1] == "graph":
            return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=False, origins=frozenset({param}), why=why)
        if what[0] == "tensor":
            return Value(kind=Kind.TENSOR, grad=Grad.NO, why=why)
        if what[0] == "module":
            return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=what[1], why=why)
        if what[0] == "loss":  # (a loss passes on where its prediction was cut: `_module_call`)
            return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=False, loss=True, scalar=what[1], why=why)
        if what[0] == "number":
            return Value(kind=Kind.NUMBER, grad=Grad.NO)
        if what[0] == "items":
            inner = self._described(what[1], param, why)
            return self._container([inner]) if inner is not None else None
        if what[0] == "tuple":  # (Gives: what another file's function returned, passed back whole)
            parts = [self._described(p, param, why) if p is not None else UNKNOWN for p in what[1]]
            return self._container(parts, elements=tuple(parts))
        if what[0] == "keyed":
            entries = [(k, self._described(p, param, why)) for k, p in what[1]]
            entries = [(k, e) for k, e in entries if e is not None]
            return self._container([e for _, e in entries]).but(keyed=tuple(entries)) if entries else None
        if what[0] == "fields":  # (read by `_e_attribute`: `model_sampling.sigmas`)
            fields = tuple((name, v) for name, w in what[1] if (v := self._described(w, param, why)) is not None)
            return Value(kind=Kind.OBJECT, grad=Grad.NO, keyed=fields, why=why) if fields else None
        return None

    def _border_call(self, node: cst.Call, fv, args: list) -> Optional[Value]:
        """A call that may run code of another file: exported; what it keeps stored; the model it
        builds, when another file's summary says (else None: the call is evaluated as it is)."""
        found = self._target_of(node, fv)
        if found is None:
            return None
        target, by_name = found
        if not by_name and self.frame.mode is GradMode.ON:
            self.border_results[node] = target
        if self.outgoing is not None:
            in_loop = bool(self.frame.loops) and any(v.has_graph for _, v in args)
            named = not by_name and self._named(node)
            self.outgoing.append((self.function, target, by_name, self.frame.mode, self._how(), in_loop, node, named,
                                  self.frame.loops, () if by_name else self._passed(args)))
        summary = self.callee_summaries.get(target)
        self.summarized.pop(node, None)
        if isinstance(summary, Keeps):
            self._kept_elsewhere(node, summary, args)
        elif isinstance(summary, Builds) and not by_name:
            return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=summary.parameterized,
                         forwards=frozenset(summary.forwards),
                         why=Evidence(node, f"`{self._short(node.func)}` {summary.where}", elsewhere=True))
        elif isinstance(summary, Returns) and not by_name and self.frame.mode is not GradMode.OFF:
            found = self._carried_here(node, summary, args) if summary.through else self._returned_elsewhere(node, summary)
            if found is not None:
                self.summarized[node] = summary
            return found
        return None

    def _carried_here(self, node: cst.Call, summary: Returns, args: list) -> Optional[Value]:
        """What another file's function that returns its arguments' graphs (Returns.through) returns
        at this call: the graphs this call gives those parameters (`loss(net(X), y)` with d2l's
        `squared_loss`), which it neither keeps nor trains on. None (the call is evaluated as it is:
        handed to what the analysis cannot see) where the call gives a graph or a leaf that requires
        grad to another parameter, or unpacks arguments: the summary says nothing of those."""
        by_position = {i: name for i, name in summary.through if i >= 0}
        names = {name for _, name in summary.through}
        carried, positional = [], 0
        for a, v in args:
            if a.star:
                return None
            if a.keyword is not None:
                inside = a.keyword.value in names
            else:
                inside = positional in by_position
                positional += 1
            if inside:
                carried.append(v)
            elif v.grad is Grad.YES:
                return None
        graphs = [v for v in carried if v.has_graph]
        if not graphs or any(v.grad is Grad.YES and v.leaf for v in carried):
            return None
        cuts, pred = combined_cuts(carried)
        return Value(kind=Kind.TENSOR, grad=Grad.YES if self.frame.mode is GradMode.ON else Grad.UNKNOWN,
                     scalar=summary.scalar, origins=frozenset().union(*(v.origins for v in graphs)),
                     why=graphs[0].why, cuts=cuts, pred_cuts=pred)

    def _returned_elsewhere(self, node: cst.Call, summary: Returns) -> Value:
        """The graph another file's function returns, made at this call (each call its own, as a
        function of this file: summaries.py); the backward it ran on it runs here, in this file's
        loops (what makes a loop around `one_step(...)` a training loop)."""
        why = Evidence(node, f"`{summary.name}()` returns a tensor with its graph ({summary.path})", elsewhere=True)
        graph = Value(kind=Kind.TENSOR, grad=Grad.YES if self.frame.mode is GradMode.ON or summary.backward else Grad.UNKNOWN,
                      scalar=summary.scalar, origins=frozenset({node}), why=why)
        if summary.backward:
            self._record_backward(Backward(node, graph.origins, self.frame.loops, self.function, graph,
                                           elsewhere=f"in `{summary.name}()` ({summary.path} line {summary.backward})"))
        return graph

    def _passed(self, args: list) -> tuple:
        """What a call passes, argument by argument (Call.args): `describe`, or ("built", the class of
        the project whose call made it, as this file's imports spell it: `InMemoryLogger()`)."""
        out = []
        positional = 0
        for a, v in args:
            if a.star:
                break  # `*xs`, `**kw`: what follows has no known place
            key = a.keyword.value if a.keyword is not None else positional
            positional += a.keyword is None
            made = self._built_by(a.value) or self._built_here(a.value)
            found = ("built", made) if made else describe(v)
            if found is None and v.kind is Kind.UNKNOWN:
                found = self._result_of(a.value)
            if found is not None:
                out.append((key, found))
        return tuple(out)

    def _result_of(self, expr: cst.BaseExpression) -> Optional[tuple]:
        """("result", target, path) for a name bound to what a call of another file's function returned,
        run with grad on (`results = train(...)`), or to one item of it (`losses` of `grads, losses =
        sweep(...)`, `results["loss"]`): what that file's summary (Gives) says it is, read where the calls
        are gathered."""
        path = ()
        while isinstance(expr, cst.Subscript):
            key = constant_index(expr)
            if key is None:
                return None
            path, expr = (key,) + path, expr.value
        if not isinstance(expr, cst.Name):
            return None
        b = self.lookup(expr.value)
        if b is None:
            return None
        call = b.node
        if isinstance(call, cst.Name):
            call, at = self.unpacked_from.get(call, (None, 0))
            path = (at,) + path
        target = self.border_results.get(call) if isinstance(call, cst.Call) else None
        return ("result", target, path) if target is not None else None

    def _built_here(self, expr: cst.BaseExpression) -> Optional[str]:
        """The imported class whose call makes `expr` (`InMemoryLogger()`, `Net(cfg).to(device)`)."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SAME_INSTANCE:
            expr = expr.func.value
        if not isinstance(expr, cst.Call):
            return None
        q = self._qualname(expr.func)
        return q if q and q.split(".", 1)[0] not in LIBRARIES else None

    def _named(self, node: cst.Call) -> bool:
        """Is the call's result (through `.to(device)`, `.eval()`) bound to a plain name here
        (`model = create_model(cfg).to(device)`): a value the code goes on to use by that name."""
        statement = self.statement
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign)) else None
            while isinstance(value, cst.Call) and value is not node and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in _SAME_INSTANCE:
                value = value.func.value
            if value is node:
                targets = small.targets if isinstance(small, cst.Assign) else [small]
                return all(isinstance(t.target, cst.Name) for t in targets)
        return False

    def _target_of(self, node: cst.Call, fv) -> Optional[tuple[str, bool]]:
        """(what the call names as this file's imports spell it, whether only by a method's name)."""
        func = node.func
        if fv.qualname:
            return None if fv.qualname.split(".", 1)[0] in LIBRARIES else (fv.qualname, False)
        joined = self.foreign_names and self._joined(fv)
        if joined and isinstance(func, cst.Name):  # `RegressionUnit(...)`, its class joined from unit.py
            q = self._qualname(func)
            return (q, False) if q else None
        if isinstance(func, cst.Attribute) and (joined or not isinstance(fv.cls, FunctionInfo)):
            made = self._built_by(func.value) or self._built_here(func.value)
            if made:
                return f"{made}.{func.attr.value}", False
            if self.values.get(func.value, UNKNOWN).kind in (Kind.UNKNOWN, Kind.OBJECT, Kind.MODULE):
                return func.attr.value, True  # a tensor's or a list's own method is no one's in the project
        return None

    def _joined(self, fv) -> bool:
        """Is `fv` a class joined from another file (Settings.neighbours), or a method of one?"""
        cls = fv.cls.cls if isinstance(fv.cls, FunctionInfo) else fv.cls
        return cls is not None and getattr(cls, "node", None) in self.foreign

    def _kept_elsewhere(self, node: cst.Call, keeps: Keeps, args: list) -> None:
        """`loss_meter.update(loss)` in a loop, the meter's class in utils.py keeping `val` in
        `self.sum`: the graph is stored where it outlives the iteration (as `_kept_by_call` for
        the file's own classes)."""
        func = node.func
        if not self.frame.loops or not any(v.has_graph for _, v in args) or not isinstance(func, cst.Attribute):
            return
        place = self.outlives_iteration(func.value)
        if place is None:
            return  # `Meter().update(loss)` on an object of this iteration
        positional = [(a, v) for a, v in args if a.keyword is None and not a.star]
        by_name = dict(zip(keeps.params, positional))
        by_name.update({a.keyword.value: (a, v) for a, v in args if a.keyword is not None})
        holder = self._short(func.value)
        for param, where in keeps.kept:
            a, v = by_name.get(param, (None, UNKNOWN))
            if a is None or not v.has_graph:
                continue
            s = Store(a.value, v, holder + where[len("self"):], ("kept", place[1], where), self.frame.loops[-1],
                      "append", self.function, loops=self.frame.loops, via=func.attr.value)
            self.stores.append(s)
            for hook in self.hooks.get("store", ()):
                hook(s)

    def _built_by(self, expr: cst.BaseExpression) -> Optional[str]:
        """The imported class whose call built the instance a name holds (`model = Net(cfg).eval()`)."""
        if not isinstance(expr, cst.Name):
            return None
        b = self.lookup(expr.value)
        return self._built_here(b.node) if b is not None and isinstance(b.node, cst.BaseExpression) else None

    def _how(self) -> str:
        fn = self.function
        where = f"in `{fn.name}()`" if fn is not None else "at module level"
        if self.frame.mode is not GradMode.OFF:
            return where
        at = self.frame.mode_nodes[-1]
        if at is not None:
            return f"{where}, inside `{self._short(at)}`"
        if fn is None:
            return f"{where}, with grad off"
        decorator = next((d.decorator for d in fn.node.decorators if self.grad_mode_of(d.decorator) is GradMode.OFF), None)
        if decorator is not None:
            return f"{where}, decorated `@{self._short(decorator)}`"
        return f"{where}, which runs with grad off"

    def exported_calls(self, place: Callable[[list], dict]) -> list[Call]:
        """The calls of other files' functions, once the walk is over (whether grad is on for
        certain is read then, when every call of the file's own functions has been seen).
        `place({name node: its call})`: name node -> (line, column) where its line prefix is ASCII."""
        proved: dict = {}
        forward: dict = {}  # fn -> forward_code(fn)
        if self.outgoing and self.source:
            _none_handed(self.classes, self.source)
        calls = set()
        own = [e for e in self.outgoing or () if self.top_of.get(e[6]) not in self.foreign]
        # (a call in a class joined from another file is that file's own)
        placed = place({callee_name(e[6]): e[6] for e in own})
        for fn, target, by_name, mode, how, in_loop, node, named, loops, passed in own:
            on = mode is GradMode.ON
            if on and fn not in proved:
                proved[fn] = fn is None or self._on_in(fn, set())
            result = self.values.get(node, UNKNOWN).kind is Kind.UNKNOWN
            calls.add(Call(target, by_name, mode.value, on and proved[fn], how, in_loop, named and result,
                           _per_batch(fn, loops, forward), passed, *placed.get(callee_name(node), (0, 0)), result=result))
        return sorted(calls, key=lambda c: (c.target, c.mode, c.how))

    def exported_summaries(self, line_of: Callable[[cst.CSTNode], int] = lambda node: 0) -> dict:
        """symbol -> Keeps, for the methods of the file's plain classes (meters, loggers, buffers)
        that keep an argument on their object: what a caller in another file stores through them;
        symbol -> Builds for its nn.Module classes and the functions that return one; symbol ->
        Returns for its functions that return a graph they made (`line_of`: a node's line)."""
        out = {}
        for info in self.classes:
            if info.node in self.foreign:
                continue  # a class joined from another file: that file's own summary
            if info.is_module and info.scope is not None and info.scope.kind == "module":
                # a method that returns one tensor the model computed with grad on is a forward pass (not one
                # returning a tuple: `action, log_prob, value = agent.get_action_and_value(x)` - a sampled
                # action has no graph, and nothing here would say which element has one)
                runs = tuple(sorted(name for name, fn in info.methods.items()
                                    if fn.decorated_mode is None and _one_graph(fn.returns) and name != "forward"))
                out[info.name] = Builds(info.parameterized, f"builds `{info.name}`, an nn.Module", runs)
        for fn in self.functions:
            symbol = symbol_of(fn)
            if fn.cls is None and symbol is not None and fn.returns.kind is Kind.MODULE:
                out[symbol] = Builds(fn.returns.parameterized, "returns an nn.Module")
            elif fn.cls is None and symbol is not None and fn.node not in self.foreign and _made_inside(fn):
                graph = fn.returns.origins
                done = next((b for b in fn.backwards if b.origins & graph), None)
                out[symbol] = Returns(fn.name, fn.returns.scalar, line_of(done.at) if done is not None else 0)
            elif fn.cls is None and symbol is not None and fn.node not in self.foreign and (
                    through := _carried(fn, self.stores, self.escapes)):
                out[symbol] = Returns(fn.name, fn.returns.scalar, through=through)
            elif fn.cls is None and symbol is not None and fn.node not in self.foreign \
                    and (fn.returns.elements is not None or fn.returns.keyed):
                given = frozenset().union(*(all_origins(v) for v in fn.param_values.values()))
                shape = shape_of(fn.returns, given)
                if shape is not None and shape[0] in ("tuple", "keyed") and "'tensor'" in repr(shape):
                    out[symbol] = Gives(shape)  # (a tuple of numbers says nothing another file needs)
        for fn in self.functions:
            symbol = symbol_of(fn)
            if fn.cls is None or fn.cls.is_module or symbol is None or "." not in symbol or fn.cls.node in self.foreign:
                continue
            kept = tuple((p, where) for p, t in evidence.kept_params(fn.node).items()
                         if (where := self.code_for(t)).startswith("self."))
            if kept:
                p = fn.node.params
                params = tuple(x.name.value for x in (*p.posonly_params, *p.params))[1:]
                out[symbol] = Keeps(params, kept)
        return out
