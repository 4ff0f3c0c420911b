"""Training steps: which loops' iterations are steps (rules.md, "Semantics every rule shares").

"Across iterations" means across training steps or evaluation iterations, never any loop. Inside
one step, keeping values is how code works: an RNN cell unrolled over time steps whose outputs are
stacked, the decoding steps of one sequence, a loop over a model's parameters summing a
regulariser or filling a dict that dies with the call.

A loop's iterations are steps when its body back-propagates (directly, or through a function of
the file it calls: flow.backwards holds both), or when they are independent forward passes (an
evaluation over data). They are not when the loop runs over the parts of a model (its parameters,
its layers) or carries a graph from one iteration into the next without back-propagating in
between (an unroll of one computation: everything it keeps is in the carried graph anyway).
"""

from __future__ import annotations

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.values import Grad, Kind, all_origins, holds_graph
from gradguard.engine.walk import descendants


class _Carried(cst.CSTVisitor):
    """Names a loop body reads before it assigns them in the same iteration - the state carried from
    the previous iteration - with the values it assigns them. Statements in order; within one,
    the value before the targets (`h = cell(x, h)` reads `h`, then binds it)."""

    def __init__(self):
        self.assigned: set = set()
        self.read_first: set = set()
        self.values: dict = {}  # name -> [the expressions assigned to it in the body]
        self.fed: dict = {}  # name read first -> the calls given it as an argument (`cell(x[t], h)`)
        self.calls: list = []  # the calls whose arguments are being read

    def _targets(self, target: cst.BaseExpression, value) -> None:
        if isinstance(target, cst.Name):
            self.assigned.add(target.value)
            if value is not None:
                self.values.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._targets(e.value, value)
        else:
            target.visit(self)  # `self.h = ...`, `buf[i] = ...` read their base

    def visit_Assign(self, node: cst.Assign) -> bool:
        node.value.visit(self)
        for t in node.targets:
            self._targets(t.target, node.value)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            node.value.visit(self)
            self._targets(node.target, node.value)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        node.value.visit(self)
        node.target.visit(self)
        self._targets(node.target, node)
        return False

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)
        self._targets(node.target, None)
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False  # `.attr` is no name read

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False  # nor is a keyword

    def visit_Call(self, node: cst.Call) -> bool:
        node.func.visit(self)
        for a in node.args:
            self.calls.append(node)
            a.visit(self)
            self.calls.pop()
        return False

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self.assigned:
            self.read_first.add(node.value)
            if self.calls:
                self.fed.setdefault(node.value, []).append(self.calls[-1])


def carried(loop: cst.CSTNode) -> list:
    """(name, the expressions the body assigns it, the calls an iteration gives it to before that) for
    the names an iteration reads before it assigns them: state from the previous iteration."""
    finder = _Carried()
    loop.body.visit(finder)
    return [(n, finder.values[n], finder.fed.get(n, [])) for n in sorted(finder.read_first & finder.assigned)
            if n in finder.values]


def backpropagates_in(flow, loop: cst.CSTNode) -> bool:
    """Does an iteration of `loop` run a backward (in its body or in a function it calls)?"""
    return any(loop in b.loops for b in flow.backwards)


def framework_backward(fn, origins: frozenset) -> bool:
    """Does a framework back-propagate, after `fn` returns, a graph that holds `origins` (what
    Lightning's `training_step()` returns: each step's loss)?"""
    return fn is not None and fn.name in K.BACKPROPAGATED_RETURNS and bool(origins & all_origins(fn.returns))


def is_step_loop(flow, loop: cst.CSTNode, kept=None) -> bool:
    """Are `loop`'s iterations steps (training or evaluation), across which kept graphs pile up?
    (`kept`: a value the loop keeps; a graph it made itself is new each iteration.)"""
    if backpropagates_in(flow, loop):
        return True
    if isinstance(loop, cst.For) and _model_parts(flow.value(loop.iter)):
        return False  # the parameters or layers of a model: parts of one step
    if not _runs_a_model(flow, loop) and not (kept is not None and _made_inside(kept, loop)):
        return False  # slices or sums of what one forward computed before the loop: no graph per iteration
    for _, values, fed in carried(loop):
        graph = any(holds_graph(flow.value(v)) for v in values if isinstance(v, cst.BaseExpression))
        if graph and any(_computes(flow, call) for call in fed):
            return False  # an unroll: each iteration feeds its graph to the model in the next
    return True


def _runs_a_model(flow, loop: cst.CSTNode) -> bool:
    """Does an iteration compute a new graph with a model (a module with parameters, a function of
    the file that calls one - a generator the loop runs over too -, a callable the code was given)?"""
    nodes = descendants(loop.body) + (descendants(loop.iter) if isinstance(loop, cst.For) else [])
    for node in nodes:
        if isinstance(node, cst.Call) and flow.value(node).grad is not Grad.NO:
            callee = flow.value(node.func)
            if callee.kind is Kind.MODULE and callee.parameterized and not callee.loss or (
                callee.kind is Kind.FUNCTION and callee.cls is not None and callee.cls.makes_graph
            ) or callee.kind is Kind.UNKNOWN and callee.qualname is None and flow.value(node).has_graph:
                return True
    return False


def _made_inside(v, loop: cst.CSTNode) -> bool:
    """Was some graph of `v` made by code inside the loop (`torch.randn(..., requires_grad=True) * 2`)?"""
    inside = {id(n) for n in descendants(loop.body)}
    return any(id(o) in inside for o in v.origins if isinstance(o, cst.CSTNode))


def _model_parts(over) -> bool:
    """Does iterating `over` give a model's parameters or layers (`model.parameters()`,
    `named_parameters()`, an `nn.ModuleList`, `enumerate` of them)?"""
    if over.kind in (Kind.PARAMS, Kind.MODULE) or over.layer in K.MODULE_CONTAINERS:
        return True  # parameters, an nn.Sequential's layers, an nn.ModuleList's
    item = over.item if over.kind is Kind.CONTAINER else None
    if item is None:
        return False
    # (a list of separate models - `for net, l in zip(nets, losses)` - trains each: not one model's parts)
    parts = item.elements if item.kind is Kind.CONTAINER and item.elements is not None else (item,)
    return any(p.kind is Kind.TENSOR and p.leaf for p in parts)


def _computes(flow, call: cst.Call) -> bool:
    """Is `call` a model's forward (a module, a function of the file, a callable the code was given)
    rather than a torch function or a container method (`torch.cat([mem, h])`, `total.add(x)`)?"""
    callee = flow.value(call.func)
    return callee.kind in (Kind.MODULE, Kind.FUNCTION) or callee.kind is Kind.UNKNOWN and callee.qualname is None \
        and not isinstance(call.func, cst.Attribute)


def step_of(flow, loops: tuple, kept=None):
    """The innermost of `loops` whose iterations are steps, or None (`kept`: see is_step_loop)."""
    return next((loop for loop in reversed(loops) if is_step_loop(flow, loop, kept)), None)
