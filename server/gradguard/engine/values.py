"""The abstract values the flow analysis tracks for names and expressions.

A value answers the two questions of rules.md: does it carry an autograd graph
(`grad`, with `why`), and does it share storage with another tensor (`alias`)?
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst


class Grad(enum.Enum):
    YES = "yes"  # requires grad: carries a graph, or is a leaf that requires grad
    NO = "no"
    UNKNOWN = "unknown"


class Kind(enum.Enum):
    TENSOR = "tensor"
    MODULE = "module"  # an nn.Module instance (a loss function is a MODULE with loss=True)
    CONTAINER = "container"  # list / dict / set / tuple we can see being built
    PARAMS = "params"  # model.parameters(): iterating yields leaves that require grad
    NUMBER = "number"  # Python scalars, strings, None, bools
    NDARRAY = "ndarray"
    CLASS = "class"  # a class object defined in this file
    OBJECT = "object"  # an instance of a class defined in this file
    FUNCTION = "function"  # a function defined in this file
    UNKNOWN = "unknown"


@dataclass(frozen=True, eq=False)
class Evidence:
    """Why a value is what it is: a node of the file and a short reason."""

    node: cst.CSTNode
    text: str  # e.g. "from `model(x)`", "`.item()`"
    # the fact comes from another file of the project ("passed by fit.py line 9, in `fit()`", "`create_model`
    # returns an nn.Module (models/net.py)"): a hover on the name says where it came from
    elsewhere: bool = False
    # False: the text says where the fact is (another file's line), and the node's line would misplace it
    placed: bool = True


@dataclass(frozen=True, eq=False)
class Alias:
    """Shared storage: this value is `how` applied to the tensor bound to `name`."""

    name: str
    how: str  # "detach", "data", "view"
    node: cst.CSTNode  # the expression that made the alias (x.detach())
    binding: object = None  # the Binding of `name` when the alias was made
    leaf: bool = False  # the original was a leaf that requires grad (a parameter)


@dataclass(frozen=True, eq=False)
class Value:
    kind: Kind = Kind.UNKNOWN
    grad: Grad = Grad.UNKNOWN
    why: Optional[Evidence] = None
    leaf: bool = False  # requires grad without a grad_fn (a parameter, requires_grad=True)
    scalar: bool = False  # 0-dim: a loss, .mean(), .sum() ... (.item() fits)
    origins: frozenset = frozenset()  # graph identities (see FlowAnalysis.origin)
    alias: Optional[Alias] = None
    fresh: bool = False  # a copy with its own storage (clone())
    parameterized: bool = True  # MODULE: do its calls build a graph by themselves?
    frozen: bool = False  # MODULE: its parameters were all set requires_grad=False (PPLM's GPT-2)
    loss: bool = False  # MODULE: a loss function (nn.*Loss)
    pure: bool = False  # MODULE: a torch.nn layer known not to write to its input (no inplace=True)
    elements: Optional[tuple["Value", ...]] = None  # known tuple structure
    item: Optional["Value"] = None  # CONTAINER/PARAMS: what an element is
    keyed: tuple = ()  # CONTAINER: ((literal key, Value), ...) - dict entries differ from each other
    closed: bool = False  # CONTAINER: `keyed` lists every entry (`{"loss": l, "n": 3}`, `{}` then `d["k"] = v`)
    cls: object = None  # CLASS / OBJECT / FUNCTION: the engine's info record
    qualname: Optional[str] = None  # an imported object: "torch.nn.functional"
    # Where a graph was cut on the way to this value (GG301): `cuts` on a tensor
    # (detach(), .item(), no_grad), `pred_cuts` once it is the prediction of a loss.
    cuts: frozenset = frozenset()
    pred_cuts: frozenset = frozenset()
    # TENSOR taken for an item of a model's output of unknown structure (`out, hidden = model(x, h)`):
    # it may be a tuple (an LSTM's `(h, c)`), so no fix may call tensor methods on it
    guessed: bool = False
    callees: frozenset = frozenset()  # FUNCTION: the functions of the file it may be, when branches disagree
    layer: Optional[str] = None  # MODULE: the torch.nn class it is an instance of (`LSTM`)
    evaluated: object = None  # MODULE: the `.eval()` / `.train(False)` call that left it in eval mode
    forwards: frozenset = frozenset()  # MODULE of another file of the project: its methods that run it (outside.Builds)
    volatile: object = None  # the `Variable(..., volatile=True)` call it was made by (a no-op since torch 0.4)

    def but(self, **changes) -> "Value":
        return replace(self, **changes)

    @property
    def has_graph(self) -> bool:
        """Carries a grad_fn chain (not just a leaf that requires grad)."""
        return self.grad is Grad.YES and not self.leaf

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR


def holds_graph(v: Value) -> bool:
    """A tensor with a graph, or a tuple/list (an LSTM's `(h, c)`) holding one."""
    return v.has_graph or any(holds_graph(e) for e in v.elements or ())


def all_origins(v: Value) -> frozenset:
    """The graph identities of a value and of the elements it holds."""
    return v.origins.union(*(all_origins(e) for e in v.elements or ()))


UNKNOWN = Value()
NUMBER = Value(kind=Kind.NUMBER, grad=Grad.NO)


def no_grad(kind: Kind, node: cst.CSTNode, reason: str, **kw) -> Value:
    return Value(kind=kind, grad=Grad.NO, why=Evidence(node, reason), **kw)


def join_grad(values) -> tuple[Grad, Optional[Evidence], frozenset]:
    """Grad of a result computed from `values` (arithmetic, torch.* functions).

    Any operand with a graph gives the result a graph; all operands without a
    graph give none; otherwise unknown.
    """
    yes = [v for v in values if v.grad is Grad.YES]
    if yes:
        origins = frozenset().union(*(v.origins for v in yes))
        return Grad.YES, yes[0].why, origins
    if all(v.grad is Grad.NO for v in values):
        why = next((v.why for v in values if v.why is not None and v.kind is Kind.TENSOR), None) or next(
            (v.why for v in values if v.why is not None and v.kind in (Kind.UNKNOWN, Kind.CONTAINER)), None)
        return Grad.NO, why, frozenset()
    # Unknown: the graphs it may carry are those of its operands (a backward on it
    # reaches them, which excuses their retention).
    return Grad.UNKNOWN, None, reach(values)


def reach(values) -> frozenset:
    """The graph identities a value computed from `values` may carry."""
    return frozenset().union(*(v.origins for v in values if v.grad is not Grad.NO))


def merge(a: Value, b: Value) -> Value:
    """The value of a name after two branches bound it to `a` and `b`."""
    if a is b:
        return a
    kind = a.kind if a.kind is b.kind else Kind.UNKNOWN
    if a.grad is b.grad:
        grad = a.grad
    else:
        grad = Grad.UNKNOWN
    if kind is Kind.MODULE:
        return a.but(parameterized=a.parameterized or b.parameterized, frozen=a.frozen and b.frozen,
                     evaluated=a.evaluated if a.evaluated is b.evaluated else None,  # (eval mode on every path)
                     forwards=a.forwards & b.forwards)
    if kind is Kind.FUNCTION and a.cls is not b.cls:
        # one of several functions of the file (`step_fn = self.val_step_fn if validation else ...`):
        # a call runs each
        return Value(kind=Kind.FUNCTION, grad=Grad.NO, callees=_callees(a) | _callees(b))
    return Value(
        kind=kind,
        grad=grad,
        why=a.why if grad is not Grad.UNKNOWN else None,
        leaf=a.leaf and b.leaf,
        scalar=a.scalar and b.scalar,
        origins=a.origins | b.origins,
        alias=a.alias if a.alias is b.alias else None,
        item=_merge_items(a, b),
        elements=tuple(merge(x, y) for x, y in zip(a.elements, b.elements))
        if a.elements is not None and b.elements is not None and len(a.elements) == len(b.elements) else None,
        keyed=tuple((k, merge(x, dict(b.keyed)[k])) for k, x in a.keyed if k in dict(b.keyed)),
        cls=a.cls if a.cls is b.cls else None,
        # A cut GG301 reports must be on every path: two tensors keep only the cuts both have
        # (`loss_fn` called on a graph in train() and under no_grad in test() cuts nothing).
        cuts=a.cuts & b.cuts if a.kind is b.kind is Kind.TENSOR else a.cuts | b.cuts,
        pred_cuts=a.pred_cuts & b.pred_cuts if a.kind is b.kind is Kind.TENSOR else a.pred_cuts | b.pred_cuts,
        # made `volatile=True` on every path (`Variable(x, volatile=True).cuda()` if use_gpu, else without
        # `.cuda()`): the first path's call names it
        volatile=a.volatile if b.volatile is not None else None,
    )


def _callees(v: Value) -> frozenset:
    """The functions a FUNCTION value may be (with the receiver a method was read from)."""
    if v.callees:
        return v.callees
    return frozenset(((v.cls, v.elements[0] if v.elements else None),)) if v.cls is not None else frozenset()


def _merge_items(a: Value, b: Value) -> Optional[Value]:
    """What an element is after two branches: known only if both paths know it - or if one path's
    container is empty (`self.layers = []`, then `self.layers = self.layers + [Layer(...)]` in a loop):
    it holds no element to disagree."""
    if a.item is None or b.item is None:
        return a.item if _empty(b) else b.item if _empty(a) else None
    return merge(a.item, b.item)


def _empty(v: Value) -> bool:
    """A container nothing was put in (`[]`, `list()`), as far as the walk knows."""
    return v.kind is Kind.CONTAINER and v.item is None and v.grad is Grad.NO and not v.keyed and not v.elements


def combined_cuts(values) -> tuple[frozenset, frozenset]:
    """Cuts of a result computed from `values`. A cut next to an operand that
    still has a graph is a target (`q - target.detach()`), not a lost prediction."""
    graph = [v for v in values if v.has_graph]
    cuts = frozenset().union(*(v.cuts for v in (graph or values)))
    pred = frozenset().union(*(v.pred_cuts for v in values))
    return cuts, pred
