"""The flow analysis: one walk over a module that knows, at every point, what
each name holds (grad state, storage alias, loop context) and tells the rules.

The walk follows execution order rather than source order where it matters:
module statements first, function bodies when they are called (with the
arguments of that call, so `train(model, loader)` sees a module in `model`) or,
if never called here, at the end with unknown parameters. A function called
again in a different context (other argument values, a `no_grad` caller) is
analysed again, a bounded number of times; its earlier findings are dropped.
"""

from __future__ import annotations

import ast
import builtins
import enum
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Optional

import libcst as cst

from gradguard.engine import evidence
from gradguard.engine import knowledge as K
from gradguard.engine.describe import short
from gradguard.engine.evidence import dotted
from gradguard.engine.values import (
    NUMBER,
    UNKNOWN,
    Alias,
    Evidence,
    Grad,
    Kind,
    Value,
    combined_cuts,
    join_grad,
    merge,
    reach,
)

MAX_ANALYSES_PER_FUNCTION = 3


_BUILTINS = frozenset(dir(builtins))

class GradMode(enum.Enum):
    ON = "on"
    OFF = "off"  # torch.no_grad(), inference_mode(), set_grad_enabled(False)
    UNKNOWN = "unknown"  # set_grad_enabled(flag)


@dataclass(eq=False)
class Binding:
    value: Value
    loops: tuple  # loop nodes of the function that were running when it was bound
    node: Optional[cst.CSTNode] = None
    # Stands for this binding among a value's graph origins (the binding itself
    # there would be a reference cycle: its value's origins would hold it).
    token: object = field(default_factory=object, repr=False)


@dataclass(eq=False)
class ClassInfo:
    name: str
    node: cst.ClassDef
    is_module: bool
    parameterized: bool
    scope: "Scope"
    attrs: dict = field(default_factory=dict)  # self.<attr> -> Value, merged over all methods
    methods: dict = field(default_factory=dict)  # name -> FunctionInfo
    lightning: bool = False
    unknown_base: bool = False  # a base class imported from elsewhere, not known to be torch's

    @property
    def module_like(self) -> bool:
        """An nn.Module subclass, or a class of an unknown base that has a forward()
        or a model's name (transformers' modular files subclass models of other files)."""
        return self.is_module or "forward" in self.methods or (self.unknown_base and self.name.endswith(MODEL_SUFFIXES))


@dataclass(eq=False)
class FunctionInfo:
    name: str
    node: cst.FunctionDef
    scope: "Scope"  # the defining scope (closures and globals)
    cls: Optional[ClassInfo] = None
    decorated_mode: Optional[GradMode] = None
    context: Optional[tuple] = None  # (mode, params) it was last analysed with
    analyses: int = 0
    in_progress: bool = False
    returns: Value = UNKNOWN
    returned: bool = False  # a `return` with a value was seen in the current analysis
    callers: set = field(default_factory=set)  # FunctionInfos whose analysis used `returns`
    dirty: bool = False
    call_modes: set = field(default_factory=set)
    call_sites: int = 0  # calls seen in this file (0: called from elsewhere, or by a framework)
    repeated: bool = False  # called over and over by a framework: `optimizer.step(closure)`
    keeps: Optional[dict] = None  # parameter -> where the function keeps it past the call (computed on first call)
    param_values: dict = field(default_factory=dict)
    off_call: Optional[tuple] = None  # (call, the caller's `torch.no_grad()` or None): its first call with grad off


@dataclass(eq=False)
class Scope:
    kind: str  # "module" | "function" | "class"
    parent: Optional["Scope"]
    env: dict = field(default_factory=dict)
    function: Optional[FunctionInfo] = None


@dataclass(eq=False)
class Store:
    """A graph-carrying value stored where it outlives the loop iteration."""

    node: cst.BaseExpression  # the stored expression (where a finding goes)
    value: Value
    target: str  # how the place reads in code: "losses", "self.last", "stats['loss']"
    token: object  # identity of the place (for "a later backward reads it")
    loop: cst.CSTNode  # innermost loop
    how: str  # "append", "accumulate", "assign", "item"
    function: Optional[FunctionInfo]
    via: Optional[str] = None  # the function of this file that stores it (`remember(loss)`)
    made_in: tuple = ()  # the loops a local place was made in (`losses = []` in an outer loop's body)


@dataclass(eq=False)
class Backward:
    node: cst.CSTNode
    origins: frozenset
    loops: tuple
    function: Optional[FunctionInfo]
    value: Value = UNKNOWN  # what was back-propagated


@dataclass(eq=False)
class Frame:
    """Walk state of one function (or module) body being analysed."""

    scope: Scope
    loops: tuple = ()
    modes: list = field(default_factory=lambda: [GradMode.ON])
    mode_nodes: list = field(default_factory=lambda: [None])  # the `torch.no_grad()` that set each mode
    inference: Optional[cst.CSTNode] = None  # the `torch.inference_mode()` in force (a `with` item or decorator)
    inert: Optional[cst.CSTNode] = None  # a `torch.enable_grad()` that inference mode keeps from recording

    @property
    def mode(self) -> GradMode:
        return self.modes[-1]


_AUTOGRAD_USE = re.compile(r"\b(?:backward|grad|requires_grad|requires_grad_)\b")
_GRAD_SWITCH = re.compile(r"\b(?:set_grad_enabled|no_grad|inference_mode|enable_grad)\b")
MODEL_SUFFIXES = ("Model", "Module", "Layer", "Block", "Encoder", "Decoder", "Net", "Network", "Head",
                  "Embeddings", "Attention", "Transformer", "Backbone", "MLP", "Mixer")
CLASS_KEY = "<class>"  # the class a class body belongs to (not an identifier: a method may be named __class__)
BUILTIN_NUMBER_CALLS = frozenset("float int bool len str repr print isinstance hasattr id abs format".split())



@lru_cache(maxsize=4096)
def _string_value(code: str):
    """A string literal's value (ast.literal_eval leaves cyclic closures behind on every call)."""
    return ast.literal_eval(code)


# Imports syntax already understands: the type layer never overrides what they give.
_UNDERSTOOD_IMPORTS = frozenset({"torch", "numpy", "torchvision", "timm", "transformers", "diffusers", "math", "builtins"})


# Python's standard library makes no modules, tensors or arrays: a name imported from it is never asked
# about. Generic names a project may give a module of its own (which would shadow the library's) excepted.
_STDLIB = frozenset(sys.stdlib_module_names) - {
    "array", "code", "numbers", "operator", "parser", "platform", "profile", "queue", "select", "signal",
    "site", "stat", "string", "symbol", "test", "this", "token", "trace", "types",
}


def _shape(v: Value) -> tuple:
    """What callers of a function read of its result: kind and grad, and each item's
    (`return loss, rewards`: the tuple's own grad can stay while the loss's changes)."""
    return v.kind, v.grad, tuple((e.kind, e.grad) for e in v.elements or ())


def _unsure(v: Value) -> Value:
    """`v` with "no graph" made unknown (what a grad mode decided), its items too."""
    if v.kind not in (Kind.TENSOR, Kind.CONTAINER, Kind.UNKNOWN):
        return v
    elements = tuple(_unsure(e) for e in v.elements) if v.elements is not None else None
    item = _unsure(v.item) if v.item is not None else None
    grad = Grad.UNKNOWN if v.grad is Grad.NO else v.grad
    return v.but(grad=grad, why=None if grad is not v.grad else v.why, elements=elements, item=item,
                 cuts=frozenset() if grad is not v.grad else v.cuts)


def _unknown(v: Value) -> bool:
    """Nothing known from syntax: a bare unknown, or a name imported from a module the engine does not model."""
    return v.kind is Kind.UNKNOWN and (v.qualname is None or v.qualname.split(".", 1)[0] not in _UNDERSTOOD_IMPORTS)


def _literal_key(node: cst.Subscript) -> Optional[str]:
    """`d["loss"]` -> "loss"; None for any other index."""
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        value = node.slice[0].slice.value
        if isinstance(value, cst.SimpleString):
            return _string_value(value.value)
    return None


def reduces_to_scalar(call: cst.Call) -> bool:
    """A loss call (or constructor) without `reduction="none"`."""
    red = keyword(call, "reduction")
    return not (red is not None and isinstance(red.value, cst.SimpleString) and "none" in red.value.value)


def literal_bool(node: cst.BaseExpression) -> Optional[bool]:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list:
    return [a for a in call.args if a.keyword is None and not a.star]


def _assigns_state(body) -> bool:
    """Statement by statement, stopping at the first hit (`super().__init__(); self.fc = ...` is
    decided at the second line): a walk of every expression costs as much as parsing."""
    for stmt in getattr(body, "body", ()):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
                    [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else [])
                for target in targets:
                    for t in (target.elements if isinstance(target, (cst.Tuple, cst.List)) else [target]):
                        t = t.value if isinstance(t, cst.Element) else t
                        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                            return True
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    func = small.value.func
                    if isinstance(func, cst.Attribute) and func.attr.value in ("register_parameter", "register_module", "add_module"):
                        return True
        elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            for part in (getattr(stmt, "body", None), getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
                inner = getattr(part, "body", part)
                if inner is not None and _assigns_state(inner if isinstance(inner, cst.BaseSuite) else part):
                    return True
            for handler in getattr(stmt, "handlers", ()):
                if _assigns_state(handler.body):
                    return True
    return False


class FlowAnalysis:
    """Walks a module once and dispatches rule hooks with the flow state at hand.

    Rules read `value(node)` for any expression already evaluated, `frame`
    for the current loop and grad mode, and the recorded `stores`/`backwards`.
    """

    def __init__(
        self,
        module: cst.Module,
        hooks: dict,
        code_for: Callable[[cst.CSTNode], str],
        facts: Optional[dict] = None,
        strict: bool = False,
        source: str = "",
    ):
        self.module = module
        self.source = source  # the text, for evidence searches that need no tree walk
        # strict: a call of something unknown whose arguments carry a graph is taken to
        # return one too (likely, not proven: off by default, precision first).
        self.strict = strict
        # What the type layer (jedi) found out about names syntax left unknown: node -> Value.
        self.facts: dict = facts or {}
        self.type_queries: dict = {}  # unknown callees, receivers and stored names -> what the question is about
        self.removal_queries: set = set()  # the questions whose answer can only take a finding away
        self._questions: set = set()  # distinct questions (at most MAX_TYPE_QUERIES per file)
        self.hooks = hooks  # node type -> [callables(node)]
        self.code_for = code_for
        self.values: dict = {}  # expression node -> Value when last evaluated
        self.stores: list[Store] = []
        self.backwards: list[Backward] = []
        self.functions: list[FunctionInfo] = []
        self.classes: list[ClassInfo] = []
        self.class_members: dict = {}  # ClassInfo -> names its instances have (evidence.class_members)
        self.call_fits: dict = {}  # call -> the instance its shape says, or None (_instance_by_call)
        self.class_words: Optional[frozenset] = None  # words of the file's class names (_instance_by_members)
        self.frame: Frame = Frame(Scope("module", None))
        self.statement: Optional[cst.CSTNode] = None
        self.top: Optional[cst.CSTNode] = None  # the module-level statement being walked
        self.top_of: dict = {}  # node -> its module-level statement (for cheap positions)
        self.not_tensors: list[str] = []  # code of expressions a tensor guard says are not tensors here
        self.on_drop: list[Callable[[set], None]] = []  # rules drop findings of re-analysed functions
        self.uses: dict = {}  # scope node -> evidence.Uses (how its code uses each name)
        self.mentions: Optional[frozenset] = None  # names that could have evidence in this file (evidence.mentioned)
        self.instance_methods: frozenset = frozenset()  # evidence.instance_methods, with the mentions
        self.scalar_backwards: frozenset = frozenset()  # `x.backward()` with no argument: `x` is 0-dim
        self.plain_methods: frozenset = frozenset()  # evidence.plain_class_methods, with the mentions
        self.loop_items: dict = {}  # loop variable -> the list it runs over (`for p in parameters`)
        self.evidences: dict = {}  # (use, wording) -> Evidence
        self.switches: dict = {}  # function node -> does its body switch grad mode (a context manager)
        self.escaped: set = set()  # graph identities passed to functions of other files
        self.parameter_attrs: Optional[dict] = None  # attr -> (class, nn.Parameter call): evidence.parameter_attributes
        self.layer_attrs: Optional[dict] = None  # attr -> (class, layer, call): evidence.layer_attributes

    # ------------------------------------------------------------------ entry
    def run(self) -> None:
        for stmt in self.module.body:
            self.top = stmt  # positions are later resolved per top-level statement
            self._stmt(stmt)
        # Functions never called in this file: analyse with unknown parameters.
        for fn in list(self.functions):
            if fn.analyses == 0:
                self._analyse(fn)
        for _ in range(MAX_ANALYSES_PER_FUNCTION):
            dirty = [f for f in self.functions if f.dirty]
            if not dirty:
                break
            for fn in dirty:
                self._analyse(fn)

    def dispose(self) -> None:
        """Break the model's reference cycles (a value names its function, the function
        its scope, the scope binds the value) so that memory comes back at once instead
        of at the next full GC pass, which on a 10,000-line file holds the GIL ~0.3 s."""
        infos = [*self.functions, *(f.cls for f in self.functions if f.cls is not None)]
        scopes = {id(self.frame.scope): self.frame.scope}
        for info in infos:
            scope = getattr(info, "scope", None)
            while scope is not None and id(scope) not in scopes:
                scopes[id(scope)] = scope
                scope = scope.parent
        for scope in scopes.values():
            for b in scope.env.values():
                if b.value.kind is Kind.CLASS and b.value.cls is not None:
                    infos.append(b.value.cls)
            scope.env.clear()
        for info in infos:
            vars(info).clear()
        for container in (self.values, self.stores, self.backwards, self.functions, self.top_of, self.hooks, self.on_drop,
                          self.uses, self.switches, self.evidences):
            container.clear()

    @property
    def function(self) -> Optional[FunctionInfo]:
        return self.frame.scope.function

    # -------------------------------------------------------------- rule API
    def value(self, node: cst.CSTNode) -> Value:
        return self.values.get(node, UNKNOWN)

    def evaluated(self, node: cst.BaseExpression) -> Value:
        v = self.values.get(node)
        return v if v is not None else self._eval(node)

    def in_loop(self) -> bool:
        return bool(self.frame.loops)

    def lookup(self, name: str) -> Optional[Binding]:
        scope = self.frame.scope
        while scope is not None:
            if scope.kind != "class" or scope is self.frame.scope:
                b = scope.env.get(name)
                if b is not None:
                    return b
            scope = scope.parent
        return None

    def _root(self, target: cst.BaseExpression) -> tuple:
        """The root of a place (`losses` of `losses[k].items`, `self.<attr>`), the binding of a root
        name, and whether this scope bound it."""
        base = target
        while isinstance(base, (cst.Subscript, cst.Attribute)) and not (
            isinstance(base, cst.Attribute) and isinstance(base.value, cst.Name) and base.value.value == "self"
        ):
            base = base.value
        b = self.lookup(base.value) if isinstance(base, cst.Name) else None
        return base, b, b is not None and any(v is b for v in self.frame.scope.env.values())

    def outlives_iteration(self, target: cst.BaseExpression) -> Optional[tuple[str, object]]:
        """If `target` (a name, attribute or item) lives past the innermost loop's
        iteration, return (its code, an identity token); else None."""
        if not self.frame.loops:
            return None
        loop = self.frame.loops[-1]
        base, b, local = self._root(target)
        if isinstance(base, cst.Attribute):  # self.<attr>: lives on the object
            return self.code_for(target), ("attr", self.function.cls if self.function else None, base.attr.value)
        if b is None:
            # Not a name, or unbound here: a global or closure cell we cannot see - or a typo.
            return None
        if local and loop in b.loops:
            return None  # created inside this iteration
        if target is base or isinstance(target, cst.Subscript):
            return self.code_for(target), b.token
        return self.code_for(target), ("attr", b.token, self.code_for(target))

    # ---------------------------------------------------------------- blocks
    def _block(self, body) -> None:
        if isinstance(body, cst.SimpleStatementSuite):  # `for x in xs: kept.append(f(x))` on one line
            for small in body.body:
                self._small(small)
            return
        if isinstance(body, cst.BaseSuite):
            body = body.body
        for stmt in body:
            self._stmt(stmt)

    def _dispatch(self, node: cst.CSTNode) -> None:
        for hook in self.hooks.get(type(node), ()):
            hook(node)

    def _stmt(self, stmt: cst.CSTNode) -> None:
        self.statement = stmt  # the statement being run (fixes that wrap or precede it)
        self.top_of[stmt] = self.top
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._small(small)
            return
        self._dispatch(stmt)
        t = type(stmt)
        if t is cst.If:
            self._if(stmt)
        elif t is cst.For:
            self._for(stmt)
        elif t is cst.While:
            self._while(stmt)
        elif t is cst.With:
            self._with(stmt)
        elif t is cst.FunctionDef:
            self._funcdef(stmt)
        elif t is cst.ClassDef:
            self._classdef(stmt)
        elif t in (cst.Try, cst.TryStar):
            self._block(stmt.body)
            for h in stmt.handlers:
                if h.name is not None:
                    self._bind(h.name.name, UNKNOWN)
                self._block(h.body)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body)
            if stmt.finalbody is not None:
                self._block(stmt.finalbody.body)
        elif t is cst.Match:
            self._eval(stmt.subject)
            for case in stmt.cases:
                self._block(case.body)
        self._leave(stmt)

    def _leave(self, node) -> None:
        for hook in self.hooks.get(("leave", type(node)), ()):
            hook(node)

    def _small(self, s: cst.CSTNode) -> None:
        self.top_of[s] = self.top
        self._dispatch(s)
        t = type(s)
        if t is cst.Expr:
            self._eval(s.value)
            if isinstance(s.value, cst.Call):
                self._statement_call(s.value)
        elif t is cst.Assign:
            v = self._eval(s.value)
            for target in s.targets:
                self._assign(target.target, v, s.value)
        elif t is cst.AnnAssign:
            if s.value is not None:
                self._assign(s.target, self._eval(s.value), s.value)
            elif isinstance(s.target, cst.Name):
                self._bind(s.target, self._annotation(s.annotation.annotation))
        elif t is cst.AugAssign:
            self._augassign(s)
        elif t is cst.Return:
            if s.value is not None:
                v = self._eval(s.value)
                fn = self.function
                if fn is not None:
                    fn.returns = merge(fn.returns, v) if fn.returned else v
                    fn.returned = True
        elif t in (cst.Import, cst.ImportFrom):
            self._import(s)
        elif t is cst.Del:
            pass
        elif t in (cst.Raise, cst.Assert):
            for child in s.children:
                if isinstance(child, cst.BaseExpression):
                    self._eval(child)
        self._leave(s)

    def _if(self, node: cst.If) -> None:
        self._eval(node.test)
        env = self.frame.scope.env
        before = dict(env)
        guard = self._tensor_guard(node.test)  # (name, is a tensor in the body?)
        depth = len(self.not_tensors)
        if guard is not None and not guard[1]:
            self._not_a_tensor(guard[0])
        self._block(node.body)
        del self.not_tensors[depth:]
        after_body = dict(env)
        env.clear()
        env.update(before)
        if guard is not None and guard[1]:
            self._not_a_tensor(guard[0])
        if node.orelse is not None:
            if isinstance(node.orelse, cst.If):
                self._stmt(node.orelse)
            else:
                self._block(node.orelse.body)
        del self.not_tensors[depth:]
        self._merge_env(after_body)

    def _tensor_guard(self, test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
        """`torch.is_tensor(x)` / `isinstance(x, torch.Tensor)`, maybe negated: (x, True/False)."""
        positive = True
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, positive = test.expression, False
        if not (isinstance(test, cst.Call) and test.args and isinstance(test.args[0].value, (cst.Name, cst.Attribute))):
            return None
        q = self._qualname(test.func)
        name = self.code_for(test.args[0].value)
        if q == "torch.is_tensor":
            return name, positive
        if isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2:
            kinds = test.args[1].value
            kinds = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
            names = [self._qualname(k) or self.code_for(k) for k in kinds]
            if len(names) == 1 and names[0] in ("torch.Tensor", "torch.nn.Parameter"):
                return name, positive
            if positive and all(n in K.NOT_TENSOR_TYPES for n in names):
                return name, False  # `isinstance(x, (np.ndarray, np.generic))`: not a tensor in the body
        return None

    def _not_a_tensor(self, name: str) -> None:
        """In this branch `name` is not a tensor, whatever it was before."""
        env = self.frame.scope.env
        b = self.lookup(name) if name.isidentifier() else None
        if b is not None and b.value.kind is Kind.TENSOR:
            env[name] = Binding(UNKNOWN, b.loops, b.node)
        self.not_tensors.append(name)  # attributes (self.x) are told to the rules by their code

    def _merge_env(self, other: dict) -> None:
        env = self.frame.scope.env
        for name, b in other.items():
            mine = env.get(name)
            if mine is None:
                env[name] = b
            elif mine is not b:
                loops = mine.loops if len(mine.loops) >= len(b.loops) else b.loops
                env[name] = Binding(merge(mine.value, b.value), loops, b.node)

    def _loop(self, node, body_fn) -> None:
        self.frame.loops = self.frame.loops + (node,)
        try:
            body_fn()
        finally:
            self.frame.loops = self.frame.loops[:-1]

    def _for(self, node: cst.For) -> None:
        it = self._eval(node.iter)
        over = isinstance(node.target, cst.Name) and isinstance(node.iter, cst.Name)
        if over:  # `for p in parameters:` - what `p.requires_grad = True` sets
            self.loop_items[node.target.value] = node.iter.value

        def body():
            self._assign(node.target, self._element_of(it, node.iter), node.iter)
            self._block(node.body)

        self._loop(node, body)
        if over:
            self.loop_items.pop(node.target.value, None)
        frozen = evidence.frozen_by(node)
        if frozen is not None:
            m = self.values.get(frozen, UNKNOWN)
            if m.kind is Kind.MODULE:
                if isinstance(frozen, cst.Name):
                    self._rebind_mutated(frozen.value, m.but(frozen=True))
                elif isinstance(frozen, cst.Attribute):
                    self._replace_attribute(frozen, m.but(frozen=True))
        if node.orelse is not None:
            self._block(node.orelse.body)

    def _while(self, node: cst.While) -> None:
        def body():
            self._eval(node.test)
            self._block(node.body)

        self._loop(node, body)
        if node.orelse is not None:
            self._block(node.orelse.body)

    def grad_mode_of(self, expr: cst.BaseExpression) -> Optional[GradMode]:
        """The grad mode a `with` item or decorator sets, or None if it sets none."""
        if not isinstance(expr, cst.Call):
            q = self._qualname(expr)
            if q in K.GRAD_CONTEXTS_OFF:  # @torch.no_grad without parentheses
                return GradMode.OFF
            return None
        q = self._qualname(expr.func)
        if q is None or not q.startswith("torch."):
            name = (q or dotted(expr.func) or "").rsplit(".", 1)[-1].lower()
            # inference_context(), maybe_no_grad(), poutyne's _set_training_mode(False), yolov5's imported
            # smart_inference_mode(): a switch we cannot read.
            if any(word in name for word in ("no_grad", "inference", "grad_enabled", "training_mode", "eval_mode")):
                return GradMode.UNKNOWN
        if q is None:
            fv = self.values.get(expr.func, UNKNOWN)
            if fv.kind is Kind.FUNCTION and isinstance(fv.cls, FunctionInfo) and self._switches_grad(fv.cls):
                return GradMode.UNKNOWN  # a context manager of this file that switches grad mode inside
            return None
        if q in K.GRAD_CONTEXTS_OFF:
            if q == "torch.inference_mode" and expr.args and literal_bool(expr.args[0].value) is False:
                return GradMode.ON
            return GradMode.OFF
        if q in K.GRAD_CONTEXTS_ON:
            return GradMode.ON
        if q in K.SET_GRAD_ENABLED and expr.args:
            flag = literal_bool(expr.args[0].value)
            return GradMode.UNKNOWN if flag is None else (GradMode.ON if flag else GradMode.OFF)
        return None

    def _switches_grad(self, fn: FunctionInfo) -> bool:
        found = self.switches.get(fn.node)
        if found is None:
            found = self.switches[fn.node] = _GRAD_SWITCH.search(self.code_for(fn.node)) is not None
        return found

    def _with(self, node: cst.With) -> None:
        mode = None
        for item in node.items:
            v = self._eval(item.item)
            m = self.grad_mode_of(item.item)
            if m is not None:
                mode = m
            if item.asname is not None:
                self._assign(item.asname.name, UNKNOWN if m is None else NUMBER, item.item)
        if mode is None:
            self._block(node.body)
            return
        frame = self.frame
        at = next((i.item for i in node.items if self.grad_mode_of(i.item)), None)
        outer = (frame.inference, frame.inert)
        if self._is_inference(at):
            frame.inference = at if mode is GradMode.OFF else None  # `inference_mode(False)` leaves inference mode
        elif frame.inference is not None and mode is not GradMode.OFF:
            # `torch.enable_grad()` inside `torch.inference_mode()`: grad mode is on, yet nothing is recorded
            frame.inert, mode, at = at, GradMode.OFF, frame.inference
        frame.modes.append(mode)
        frame.mode_nodes.append(at)
        try:
            self._block(node.body)
        finally:
            frame.modes.pop()
            frame.mode_nodes.pop()
            frame.inference, frame.inert = outer

    def _is_inference(self, switch: Optional[cst.BaseExpression]) -> bool:
        """Is this `with` item or decorator `torch.inference_mode(...)`? Only it undoes itself:
        `torch.enable_grad()` inside `torch.inference_mode()` records nothing."""
        if switch is None:
            return False
        func = switch.func if isinstance(switch, cst.Call) else switch
        return self._qualname(func) == "torch.inference_mode"

    def _off_why(self, node: cst.CSTNode) -> Evidence:
        """Why what `node` computes with grad off has no graph: the block that turned grad off, or, in a
        function every call of which runs with grad off, the call (`test_step` called inside `torch.no_grad()`)."""
        frame, fn = self.frame, self.function
        at = frame.mode_nodes[-1]
        if frame.inert is not None and at is frame.inference:
            return Evidence(at, f"`{self._short(frame.inert)}` does not undo `{self._short(at)}`")
        if at is None and fn is not None and fn.decorated_mode is None and fn.off_call is not None:
            call, outer = fn.off_call
            return Evidence(call, f"`{fn.name}` is called " + (f"inside `{self._short(outer)}`" if outer is not None
                                                                  else "with grad off"))
        switch = "torch.inference_mode()" if frame.inference is not None else "torch.no_grad()"
        return Evidence(node, f"computed inside `{switch}`")

    def _statement_call(self, call: cst.Call) -> None:
        # torch.set_grad_enabled(False) as a statement switches the mode for the rest.
        m = self.grad_mode_of(call)
        if m is not None and self._qualname(call.func) in K.SET_GRAD_ENABLED:
            self.frame.modes[-1] = m
            self.frame.mode_nodes[-1] = call

    # ------------------------------------------------------------ functions
    def _funcdef(self, node: cst.FunctionDef) -> None:
        mode = None
        for dec in node.decorators:
            m = self.grad_mode_of(dec.decorator)
            if m is not None:
                mode = m
        scope = self.frame.scope
        fn = FunctionInfo(node.name.value, node, scope, decorated_mode=mode)
        fn.top = self.top
        self.top_of[node] = self.top
        for dec in node.decorators:
            self.top_of[dec] = self.top
        self.functions.append(fn)
        if scope.kind == "class":
            info = scope.env[CLASS_KEY].value.cls
            fn.cls = info
            info.methods[fn.name] = fn
            if fn.name in K.NO_GRAD_HOOKS and info.lightning:
                fn.decorated_mode = GradMode.OFF
            if fn.name == "training_step" and (info.lightning or info.module_like):
                fn.repeated = True  # once per batch: what it stores on `self` outlives the step
        self._bind(node.name, Value(kind=Kind.FUNCTION, grad=Grad.NO, cls=fn))

    def _classdef(self, node: cst.ClassDef) -> None:
        bases = [self._eval(a.value) for a in node.bases]
        is_module, external, parameterized_base, lightning, unknown = False, False, False, False, False
        for arg, base in zip(node.bases, bases):
            q = base.qualname or ""
            if base.kind is Kind.CLASS and base.cls is None and base.item is not None:
                # A class from another file the type layer knows: an nn.Module subclass, or not.
                if base.item.kind is Kind.MODULE:
                    is_module, external = True, True
                else:
                    unknown = True
            elif base.kind is Kind.CLASS and base.cls.is_module:
                is_module = True
                parameterized_base |= base.cls.parameterized
                lightning |= base.cls.lightning
            elif q in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                is_module = True
            elif q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
                is_module, external = True, True
            elif q.endswith("LightningModule"):
                is_module, lightning = True, True
            elif q.endswith(("PreTrainedModel", "ModelMixin")):
                is_module, external = True, True
            elif base.kind is not Kind.CLASS:
                unknown = True
        info = ClassInfo(
            node.name.value,
            node,
            is_module,
            parameterized=external or parameterized_base or self._init_assigns_state(node),
            scope=self.frame.scope,
            lightning=lightning,
            unknown_base=unknown,
        )
        self.classes.append(info)
        class_scope = Scope("class", self.frame.scope)
        class_scope.env[CLASS_KEY] = Binding(Value(kind=Kind.CLASS, grad=Grad.NO, cls=info), ())
        outer = self.frame
        self.frame = Frame(class_scope, modes=[GradMode.ON])
        try:
            self._block(node.body)
        finally:
            self.frame = outer
        for name, b in class_scope.env.items():
            if name != CLASS_KEY and b.value.kind is not Kind.FUNCTION:
                info.attrs.setdefault(name, b.value)
        self._bind(node.name, Value(kind=Kind.CLASS, grad=Grad.NO, cls=info))

    @staticmethod
    def _init_assigns_state(node: cst.ClassDef) -> bool:
        """Does `__init__` give the module any attribute that could hold parameters?"""
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in ("__init__", "setup", "build"):
                return _assigns_state(stmt.body)
        return False

    def _call_function(self, fn: FunctionInfo, call: cst.Call, args: list, bound_self: Optional[Value]) -> Value:
        params = self._bind_params(fn, call, args, bound_self)
        mode = self.frame.mode
        if self.function is not None:
            fn.callers.add(self.function)
        fn.call_modes.add(mode)
        fn.call_sites += 1
        if mode is GradMode.OFF and fn.off_call is None:
            fn.off_call = (call, self.frame.mode_nodes[-1])
        for name, v in params.items():
            old = fn.param_values.get(name)
            fn.param_values[name] = v if old is None else merge(old, v)
        if fn.in_progress:
            return fn.returns
        context = self._context_of(fn)
        if fn.analyses == 0:
            self._analyse(fn)
        elif context != fn.context and fn.analyses < MAX_ANALYSES_PER_FUNCTION:
            fn.dirty = True
        self._kept_by_call(fn, call, args, bound_self)
        if fn.context is not None and mode is not fn.context[0]:
            # The body was last walked in another grad mode (a loss function called under no_grad
            # for evaluation, then to train - LLMs-from-scratch's DPO): the graphs it returned
            # there say nothing of this call's, until it is walked again.
            return _unsure(fn.returns)
        return fn.returns

    def _context_of(self, fn: FunctionInfo) -> tuple:
        if fn.decorated_mode is not None:
            mode = fn.decorated_mode
        elif not fn.call_modes:
            mode = GradMode.ON
        elif len(fn.call_modes) == 1:
            mode = next(iter(fn.call_modes))
        elif GradMode.ON in fn.call_modes and fn.cls is not None and fn.cls.module_like:
            mode = GradMode.ON  # a model's own methods: what matters is the call that trains
        else:
            mode = GradMode.UNKNOWN
        sig = tuple(sorted((k, v.kind, v.grad, v.cls is not None and id(v.cls)) for k, v in fn.param_values.items()))
        return (mode, sig)

    def _bind_params(self, fn: FunctionInfo, call: Optional[cst.Call], args: list, bound_self: Optional[Value]) -> dict:
        p = fn.node.params
        names = [x.name.value for x in (*p.posonly_params, *p.params)]
        values: dict = {}
        rest = list(args)
        if bound_self is not None and names:
            values[names[0]] = bound_self
            names = names[1:]
        if call is None:
            return values
        pos = [v for a, v in rest if a.keyword is None and not a.star]
        for name, v in zip(names, pos):
            values[name] = v
        kw_names = set(names) | {x.name.value for x in p.kwonly_params}
        for a, v in rest:
            if a.keyword is not None and a.keyword.value in kw_names:
                values[a.keyword.value] = v
        return values

    def _analyse(self, fn: FunctionInfo) -> None:
        """Walk the body of `fn` in its current context, replacing earlier results."""
        if fn.analyses:
            self._drop({fn})
        fn.analyses += 1
        fn.dirty = False
        fn.context = self._context_of(fn)
        mode = fn.context[0]
        scope = Scope("function", fn.scope, function=fn)
        p = fn.node.params
        self_value = None
        if fn.cls is not None and not any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in fn.node.decorators
        ):
            self_value = Value(
                kind=Kind.MODULE if fn.cls.is_module else Kind.OBJECT,
                grad=Grad.NO,
                cls=fn.cls,
                parameterized=fn.cls.parameterized,
            )
        all_params = [*p.posonly_params, *p.params, *p.kwonly_params]
        for i, param in enumerate(all_params):
            name = param.name.value
            if i == 0 and self_value is not None:
                v = self_value
            elif name in fn.param_values:
                v = fn.param_values[name]
            elif param.annotation is not None and not name[:1].isupper():
                # `Model: nn.Module` named like a class holds one (`model = Model(envs)` constructs).
                v = self._annotation(param.annotation.annotation)
            else:
                v = UNKNOWN
            scope.env[name] = Binding(v, (), param)
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                scope.env[star.name.value] = Binding(UNKNOWN, (), star)
        outer = self.frame
        self.frame = Frame(scope, modes=[mode], loops=(fn.node,) if fn.repeated else ())
        if mode is GradMode.OFF:  # `@torch.inference_mode()`: `torch.enable_grad()` inside does not undo it
            self.frame.inference = next((d.decorator for d in fn.node.decorators if self._is_inference(d.decorator)
                                         and self.grad_mode_of(d.decorator) is GradMode.OFF), None)
        outer_top, self.top = self.top, fn.top
        outer_statement = self.statement  # the caller's: a fix that wraps the call must wrap it, not the callee's
        fn.in_progress = True
        old_returns = fn.returns
        fn.returns = UNKNOWN
        fn.returned = False
        try:
            self._block(fn.node.body)
            for inner in [f for f in self.functions if f.scope is scope and f.analyses == 0]:
                self._analyse(inner)
        finally:
            fn.in_progress = False
            self.frame = outer
            self.top = outer_top
            self.statement = outer_statement
        if not fn.returned:
            fn.returns = NUMBER  # falls off the end: None
        if _shape(old_returns) != _shape(fn.returns) and fn.analyses > 1:
            for caller in fn.callers:
                if caller.analyses < MAX_ANALYSES_PER_FUNCTION:
                    caller.dirty = True

    def _drop(self, fns: set) -> None:
        nested = {f for f in self.functions if f.scope.function in fns}
        fns = fns | nested
        self.stores = [s for s in self.stores if s.function not in fns]
        self.backwards = [b for b in self.backwards if b.function not in fns]
        for cb in self.on_drop:
            cb(fns)

    # --------------------------------------------------------------- binding
    def _bind(self, name_node, value: Value, node=None) -> None:
        name = name_node.value if isinstance(name_node, cst.Name) else name_node
        self.frame.scope.env[name] = Binding(value, self.frame.loops, node or name_node)

    def _assign(self, target: cst.BaseExpression, v: Value, rhs: Optional[cst.BaseExpression]) -> None:
        t = type(target)
        if t is cst.Name:
            if self._maybe_reassign_store(target, v, rhs):
                return
            self._bind(target, v, rhs)
        elif t in (cst.Tuple, cst.List):
            elems = [e.value for e in target.elements]
            if v.elements is not None and len(v.elements) == len(elems):
                # The tuple's own identity (the list it was read from: `for r, prob in self.data`)
                # goes to each part, as a loop's element carries its container's.
                own = v.origins.difference(*(e.origins for e in v.elements))
                parts = [e.but(origins=e.origins | own) if own and e.grad is not Grad.NO else e for e in v.elements]
            elif v.kind is Kind.CONTAINER and v.item is not None:
                parts = [v.item] * len(elems)
            elif v.kind is Kind.TENSOR and v.grad is not Grad.UNKNOWN:
                parts = [v.but(elements=None, alias=None)] * len(elems)  # model outputs: (out, hidden)
            elif v.kind is Kind.UNKNOWN and v.grad is Grad.NO and v.why is not None:
                parts = [Value(grad=Grad.NO, why=v.why)] * len(elems)  # unpacked from a call under no_grad
            else:
                parts = [UNKNOWN] * len(elems)
            for e, part in zip(elems, parts):
                if isinstance(e, cst.StarredElement):
                    e = e.value
                self._assign(e, part, None)
        elif t is cst.Attribute:
            base = self._eval(target.value)
            if target.attr.value == "requires_grad" and isinstance(target.value, (cst.Name, cst.Attribute)) \
                    and base.kind is Kind.TENSOR:
                flag = literal_bool(rhs) if rhs is not None else None
                if flag is not None:  # x.requires_grad = True makes x a leaf that requires grad
                    new = base.but(grad=Grad.YES if flag else Grad.NO, leaf=flag,
                                   why=Evidence(target, "`.requires_grad = True`"))
                    if isinstance(target.value, cst.Name):
                        self._rebind_mutated(target.value.value, new)
                        if target.value.value in self.loop_items:
                            self._items_require_grad(self.loop_items[target.value.value], flag, target)
                    else:  # `self.log_alpha.requires_grad = True` (SAC's temperature)
                        self._replace_attribute(target.value, new)
                return
            if v.has_graph and rhs is not None:
                self._store(target, rhs, v, "assign")
            self._set_attribute(target, v)
        elif t is cst.Subscript:
            base = self._eval(target.value)
            for el in target.slice:
                if isinstance(el.slice, cst.Index):
                    self._eval(el.slice.value)
            key = _literal_key(target)
            if base.kind is Kind.TENSOR and isinstance(key, str) and isinstance(target.value, cst.Name):
                # A string key: not a tensor but a model's output dict. `output["loss"] = output["loss"].detach()`
                # drops the graph we knew of; what its other items hold is not known.
                if base.has_graph and v.grad is Grad.NO:
                    self._rebind_mutated(target.value.value, base.but(grad=Grad.UNKNOWN, why=None, origins=frozenset()))
                return
            if base.kind is Kind.TENSOR:  # `outs[t] = h` writes into the buffer: it now carries h's graph
                if isinstance(target.value, cst.Name):
                    self._rebind_mutated(target.value.value, self._written(base, v, self.token_of(target.value)))
                return
            if v.has_graph and rhs is not None:
                # `state["y_pred"] = out` overwrites one slot each iteration, like `self.out = out`;
                # `buf[i] = out` fills a new one.
                self._store(target, rhs, v, "item" if key is None else "assign")
            self._add_item(target.value, v, key=key)
        elif t is cst.StarredElement:
            self._assign(target.value, UNKNOWN, None)

    def _items_require_grad(self, name: str, flag: bool, where: cst.CSTNode) -> None:
        """`parameters = [C, W1, b1]` ... `for p in parameters: p.requires_grad = True` (makemore):
        each tensor the list was written with is now a leaf that requires grad (or not)."""
        b = self.lookup(name)
        if b is None or not isinstance(b.node, (cst.List, cst.Tuple)):
            return
        why = Evidence(where, f"`.requires_grad = {flag}` on the items of `{name}`")
        for e in b.node.elements:
            item = self.lookup(e.value.value) if isinstance(e.value, cst.Name) else None
            if item is not None and item.value.kind in (Kind.TENSOR, Kind.UNKNOWN):
                self._rebind_mutated(e.value.value, item.value.but(
                    kind=Kind.TENSOR, grad=Grad.YES if flag else Grad.NO, leaf=flag, why=why, origins=frozenset()))
        if b.value.kind is Kind.CONTAINER and b.value.item is not None:
            item = b.value.item.but(grad=Grad.YES if flag else Grad.NO, leaf=flag, why=why, origins=frozenset())
            self._rebind_mutated(name, b.value.but(item=item, grad=item.grad, leaf=flag))

    def _replace_attribute(self, target: cst.Attribute, v: Value) -> None:
        """The attribute now holds `v`, whatever it held: its own state changed in place."""
        obj = self.values.get(target.value, UNKNOWN)
        if obj.kind in (Kind.OBJECT, Kind.MODULE) and isinstance(obj.cls, ClassInfo):
            obj.cls.attrs[target.attr.value] = v

    def _set_attribute(self, target: cst.Attribute, v: Value) -> None:
        obj = self.values.get(target.value, UNKNOWN)
        if obj.frozen and isinstance(target.value, cst.Name):
            # `model.fc = nn.Linear(...)` after freezing the backbone: a part that trains again
            self._rebind_mutated(target.value.value, obj.but(frozen=False))
        info = obj.cls if obj.kind in (Kind.OBJECT, Kind.MODULE) and isinstance(obj.cls, ClassInfo) else None
        if info is not None:
            name = target.attr.value
            old = info.attrs.get(name)
            info.attrs[name] = v if old is None or old.kind is Kind.NUMBER and old.grad is Grad.NO and v.kind is not Kind.NUMBER else merge(old, v)

    def _maybe_reassign_store(self, target: cst.Name, v: Value, rhs) -> bool:
        """`total = total + loss` is `total += loss` written out: the same
        loop-carried variable, now holding the graph; so is `total = loss if total is None else
        total + loss` (RecBole's first batch starts the sum). Returns True if handled."""
        whole = rhs
        if isinstance(rhs, cst.IfExp):
            rhs = next((b for b in (rhs.orelse, rhs.body) if isinstance(b, cst.BinaryOperation)), None)
        if not (v.has_graph and isinstance(rhs, cst.BinaryOperation) and self.frame.loops):
            return False
        for own, other in ((rhs.left, rhs.right), (rhs.right, rhs.left)):
            if isinstance(own, cst.Name) and own.value == target.value:
                ov = self.values.get(other, UNKNOWN)
                b = self.lookup(target.value)
                if not ov.has_graph or b is None:
                    return False
                # The stored expression: the added term, or the whole conditional (each branch is detached)
                self._store(target, other if whole is rhs else whole, ov, "accumulate")
                self._rebind_mutated(target.value, v.but(origins=v.origins | {b.token}))
                return True
        return False

    def _store(self, target: cst.BaseExpression, stored: cst.BaseExpression, v: Value, how: str) -> None:
        where = self.outlives_iteration(target)
        if where is None:
            return
        code, token = where
        s = Store(stored, v, code, token, self.frame.loops[-1], how, self.function, made_in=self._made_in(target))
        self.stores.append(s)
        for hook in self.hooks.get("store", ()):
            hook(s)

    def _made_in(self, target: cst.BaseExpression) -> tuple:
        """The loops a local name at the root of `target` was bound in (`loss_list = []` each outer iteration)."""
        _, b, local = self._root(target)
        return b.loops if local else ()

    def _kept_by_call(self, fn: FunctionInfo, call: cst.Call, args: list, bound_self: Optional[Value]) -> None:
        """Stores a call in a loop makes through a function that keeps its argument."""
        if not self.frame.loops or not any(v.has_graph for _, v in args):
            return
        if fn.keeps is None:
            fn.keeps = {name: self.code_for(t) for name, t in evidence.kept_params(fn.node).items()}
        if not fn.keeps:
            return
        if isinstance(call.func, cst.Attribute) and self.outlives_iteration(call.func.value) is None:
            return  # `Meter().update(loss)` on an object of this iteration
        p = fn.node.params
        names = [x.name.value for x in (*p.posonly_params, *p.params)]
        if bound_self is not None:
            names = names[1:]
        positional_args = [(a, v) for a, v in args if a.keyword is None and not a.star]
        by_name = dict(zip(names, positional_args))
        by_name.update({a.keyword.value: (a, v) for a, v in args if a.keyword is not None})
        for name, where in fn.keeps.items():
            a, v = by_name.get(name, (None, UNKNOWN))
            if a is None or not v.has_graph:
                continue
            s = Store(a.value, v, where, self._place_token(fn, where), self.frame.loops[-1], "append", self.function,
                      via=fn.name)
            self.stores.append(s)
            for hook in self.hooks.get("store", ()):
                hook(s)

    def _place_token(self, fn: FunctionInfo, where: str) -> object:
        """The identity of the place `fn` keeps things in, as outlives_iteration() names it
        (a later backward that reads the place excuses the store)."""
        root = where.split("[", 1)[0].split(".")
        if root[0] == "self" and len(root) > 1:
            return ("attr", fn.cls, root[1])
        b = self.lookup(root[0])
        return b.token if b is not None else ("kept", fn, where)

    def token_of(self, expr: cst.BaseExpression) -> object:
        if isinstance(expr, cst.Name):
            b = self.lookup(expr.value)
            return b.token if b is not None else None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return ("attr", self.function.cls if self.function else None, expr.attr.value)
        return None

    def _add_item(self, container: cst.BaseExpression, v: Value, key: Optional[str] = None) -> None:
        """`c.append(v)`, `c[k] = v`: c now holds v (and v's graph)."""
        cv = self.values.get(container, UNKNOWN)
        token = self.token_of(container)
        if key is not None:  # d["loss"] = v says nothing about d["acc"]
            keyed = tuple((k, x) for k, x in cv.keyed if k != key) + ((key, v),)
            item = cv.item
            origins = cv.origins | v.origins | ({token} if token is not None else set())
            grad = Grad.YES if v.has_graph or cv.grad is Grad.YES else cv.grad
            new = Value(kind=Kind.CONTAINER, grad=grad, why=v.why if v.has_graph else cv.why,
                        origins=frozenset(origins), item=item, keyed=keyed)
        else:
            item = v if cv.item is None else merge(cv.item, v) if cv.item.grad is not Grad.NO or v.grad is Grad.NO else v
            if v.has_graph:  # [x] + a graph appended: a list of tensors, one with a graph at least
                kind = v.kind if item.kind is Kind.UNKNOWN else item.kind
                item = item.but(kind=kind, grad=Grad.YES, why=v.why,
                                origins=(cv.item.origins if cv.item else frozenset()) | v.origins, leaf=False)
            origins = item.origins | ({token} if token is not None else set())
            new = Value(kind=Kind.CONTAINER, grad=item.grad, why=item.why, origins=frozenset(origins), item=item,
                        keyed=cv.keyed, leaf=item.leaf)
        if isinstance(container, cst.Name):
            self._rebind_mutated(container.value, new)
        elif isinstance(container, cst.Attribute):
            obj = self.values.get(container.value, UNKNOWN)
            if isinstance(obj.cls, ClassInfo):
                obj.cls.attrs[container.attr.value] = new
        elif isinstance(container, cst.Subscript):
            # `outs[k].append(v)`: outs now holds lists of v (not v itself: a later `outs[k].append`
            # is a list's append again)
            self._add_item(container.value, new if cv.kind is Kind.CONTAINER or key is None else v)

    def _rebind_mutated(self, name: str, value: Value) -> None:
        scope = self.frame.scope
        while scope is not None:
            b = scope.env.get(name)
            if b is not None:
                b.value = value  # same binding: the same object, mutated
                return
            scope = scope.parent

    def _augassign(self, s: cst.AugAssign) -> None:
        v = self._eval(s.value)
        target = s.target
        old = self._eval(target)
        if v.has_graph:
            self._store(target, s.value, v, "accumulate")
        token = self.token_of(target)
        g, why, origins = join_grad([old, v])
        if old.kind is Kind.CONTAINER:
            self._add_item(target, v.item if v.kind is Kind.CONTAINER and v.item else v)
            return
        extra = {token} if token is not None else set()
        if old.kind is Kind.TENSOR:
            new = self._written(old, v, token)
        else:
            kind = Kind.TENSOR if Kind.TENSOR in (old.kind, v.kind) else old.kind if old.kind is v.kind else Kind.UNKNOWN
            new = Value(kind=kind, grad=g, why=why, origins=origins | (extra if g is Grad.YES else set()),
                        scalar=old.scalar or v.scalar, alias=old.alias)
            new = self._made(new, s)
        if isinstance(target, cst.Name):
            self._rebind_mutated(target.value, new)
        elif isinstance(target, cst.Attribute):
            self._set_attribute(target, new)

    def _written(self, old: Value, v: Value, token) -> Value:
        """A tensor after an in-place write of `v` into it (`t += v`, `t[i] = v`): it keeps
        its identity, and requires_grad never goes away."""
        extra = {token} if token is not None else set()
        if old.grad is Grad.YES:
            grows = v.origins if self.frame.mode is GradMode.ON else frozenset()
            return old.but(origins=old.origins | grows | extra)
        if v.grad is Grad.YES and self.frame.mode is GradMode.ON:
            return old.but(grad=Grad.YES, why=v.why, origins=v.origins | extra, leaf=False)
        if old.grad is Grad.NO and v.grad is Grad.NO:
            return old
        return old.but(grad=Grad.UNKNOWN, why=None, origins=reach([old, v]))

    def _import(self, s) -> None:
        if isinstance(s, cst.Import):
            for alias in s.names:
                full = dotted(alias.name)
                if alias.asname is not None:
                    self._bind(alias.asname.name.value, Value(qualname=full), s)
                else:
                    root = full.split(".")[0]
                    self._bind(root, Value(qualname=root), s)
            return
        if isinstance(s.names, cst.ImportStar):
            return
        mod = dotted(s.module) if s.module is not None else ""
        mod = "." * len(s.relative) + (mod or "")
        for alias in s.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
            local = alias.asname.name.value if alias.asname is not None else name
            self._bind(local, Value(qualname=f"{mod}.{name}" if mod else name), s)

    def _annotation(self, ann: cst.BaseExpression) -> Value:
        q = self._qualname(ann) or ""
        # `x: torch.Tensor` is a hint, often wrong (configs pass lists): no kind claimed from it.
        if q in ("torch.nn.Module",):
            return Value(kind=Kind.MODULE, grad=Grad.NO, why=Evidence(ann, "annotated `nn.Module`"))
        if isinstance(ann, cst.Name):  # `net: Net`, a Module subclass of this file: an instance of it
            b = self.lookup(ann.value)
            info = b.value.cls if b is not None and b.value.kind is Kind.CLASS else None
            if isinstance(info, ClassInfo) and info.is_module:
                return Value(kind=Kind.MODULE, grad=Grad.NO, cls=info, parameterized=info.parameterized,
                             why=Evidence(ann, f"annotated `{info.name}`"))
        if q in ("int", "float", "str", "bool"):
            return NUMBER
        return UNKNOWN

    # ----------------------------------------------------------- expressions
    def _qualname(self, node: cst.BaseExpression) -> Optional[str]:
        if isinstance(node, cst.Name):
            b = self.lookup(node.value)
            return b.value.qualname if b is not None else None
        if isinstance(node, cst.Attribute):
            base = self._qualname(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def _made(self, v: Value, node: cst.CSTNode) -> Value:
        """A result computed at this point: grad mode decides whether it has a graph."""
        if v.grad is Grad.YES and not v.leaf:
            if not v.origins:  # a graph born here from leaves (`w * x` with `w` a parameter): its identity
                v = v.but(origins=frozenset((node,)))
            mode = self.frame.mode
            if mode is GradMode.OFF:
                at = self.frame.mode_nodes[-1]
                cuts = v.cuts | ({Evidence(at, f"`{self._short(at)}`")} if at is not None else set())
                return v.but(grad=Grad.NO, why=self._off_why(node), origins=frozenset(), cuts=frozenset(cuts))
            if mode is GradMode.UNKNOWN:
                return v.but(grad=Grad.UNKNOWN, why=None, origins=frozenset())
        return v

    def _made_each(self, v: Value, node: cst.CSTNode) -> Value:
        """A tuple/list computed by the call `node`: each element made here (grad mode applies),
        carrying the call's graph identity (a backward of any element reaches the call)."""
        if v.elements is not None:
            return v.but(elements=tuple(self._made_each(e, node) for e in v.elements))
        if v.grad is Grad.YES and not v.leaf:
            v = v.but(origins=v.origins | {node})
        return self._made(v, node)

    def _eval(self, node: cst.BaseExpression) -> Value:
        method = self._EVAL.get(type(node))
        v = method(self, node) if method is not None else self._eval_children(node)
        if (isinstance(node, cst.Call) and v.grad is Grad.UNKNOWN and v.kind in (Kind.UNKNOWN, Kind.TENSOR)
                and self.frame.mode is GradMode.OFF):
            # Whatever a call computes under no_grad carries no graph (`teacher(x)` of an unknown teacher).
            v = v.but(grad=Grad.NO, why=self._off_why(node), origins=frozenset())
        if isinstance(node, (cst.Name, cst.Attribute)) and (
            _unknown(v) or v.grad is Grad.UNKNOWN and v.kind is Kind.TENSOR or v.has_graph and not v.scalar
        ):
            v = self._from_use(node, v)
        if self.facts and _unknown(v):
            v = self.facts.get(node, v)
        self.values[node] = v
        self.top_of[node] = self.top
        hooks = self.hooks.get(type(node))
        if hooks:
            for hook in hooks:
                hook(node)
        return v

    def _from_use(self, node: cst.BaseExpression, v: Value) -> Value:
        """What the uses of a name left unknown by its origin tell (evidence.py)."""
        key = dotted(node)
        if key is None:
            return v
        if self.mentions is None:
            self.instance_methods = evidence.instance_methods(self.module)
            self.mentions = (evidence.mentioned(self.source)
                             | evidence.member_receivers(self.source, self.instance_methods)
                             | evidence.named_receivers(self.source, evidence.class_methods(self.module))
                             | evidence.call_shape_receivers(self.source, evidence.forward_signatures(self.module)))
            self.scalar_backwards = evidence.scalar_backwards(self.source)
            self.plain_methods = evidence.plain_class_methods(self.module)
        if key not in self.mentions or v.has_graph and key not in self.scalar_backwards:
            return v
        for uses in self._uses_around(key):
            if _unknown(v):
                call = uses.module_evidence(key)
                if call is not None and self._plain_method(call):
                    call = None  # micrograd's `n.parameters()`: the file's own class has that method
                if call is not None:
                    # `x.state_dict()` alone says a stateful module, not one with parameters (a torchrl
                    # transform, a scheduler): its calls are not known to build graphs.
                    weights = not (isinstance(call.func, cst.Attribute) and call.func.attr.value in ("state_dict", "load_state_dict"))
                    said = " takes its output as a prediction" if uses.predicts.get(key) is call else ""
                    return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=weights, why=self._evidence(call, said))
                inst = self._instance_by_members(key, uses) or self._instance_by_call(key, uses)
                if inst is not None:
                    return inst
            call = uses.graph_evidence(key)
            if call is not None and self._plain_method(call):
                call = None  # micrograd's `o.backward()` on its own `Value`
            if call is not None and v.has_graph:
                # Known to carry a graph already (from `model(x)`): the backward adds only that the
                # value is 0-dim - PyTorch creates the gradient implicitly only for a scalar.
                return v.but(scalar=True) if not call.args and dotted(call.func) == f"{key}.backward" else v
            if call is not None and self.frame.mode is not GradMode.OFF:
                # `loss.backward()` with no gradient argument also says 0-dim: PyTorch only
                # creates the gradient implicitly for a scalar.
                scalar = v.scalar or (not call.args and dotted(call.func) == f"{key}.backward")
                return v.but(kind=Kind.TENSOR, grad=Grad.YES, leaf=False, origins=v.origins | {call}, scalar=scalar,
                             why=self._evidence(call, " needs one"))
        return v

    def _plain_method(self, call: cst.Call) -> bool:
        return isinstance(call.func, cst.Attribute) and call.func.attr.value in self.plain_methods

    def _instance_by_members(self, key: str, uses: "evidence.Uses") -> Optional[Value]:
        """`decoder.init_hidden_state(...)`, `decoder.attend(...)`, `decoder.fc(h)`: a name on which
        the code uses only members of one nn.Module class of this file, one of them a method no other
        class of the file defines, is an instance of that class (duck typing, as the code's author
        meant it). Two members at least, and a method name other objects do not share
        (evidence.COMMON_METHODS): `tokenizer.encode(s)` is not a VAE's `encode`. One member is enough
        where the name is the class's too (`user.test()`, only `User` defines `test`), and then the
        class may be any class of the file."""
        used = uses.members.get(key)
        if not used or not self.classes:
            return None
        if self.class_words is None:
            self.class_words = frozenset().union(*(evidence.class_words(c.name) for c in self.classes))
        maybe_named = "." not in key and evidence.name_word(key) in self.class_words
        if not maybe_named and (len(used) < 2 or not used.keys() & self.instance_methods):
            return None
        for info in self.classes:
            if info not in self.class_members:
                self.class_members[info] = evidence.class_members(info.node)
        fits = [c for c in self.classes if used.keys() <= self.class_members[c]]
        if len(fits) != 1:
            return None
        info = fits[0]
        named = maybe_named and evidence.name_word(key) in evidence.class_words(info.name)
        if not named and (len(used) < 2 or not info.module_like or not used.keys() & self.instance_methods):
            return None
        own = [m for m in used if m in info.methods and not m.startswith("_") and m not in evidence.COMMON_METHODS
               and sum(m in c.methods for c in self.classes) == 1]
        if not own:
            return None
        node = used[own[0]]
        why = self.evidences.get((node, info.name))
        if why is None:
            what = "an nn.Module of this file" if info.module_like else "a class of this file"
            also = f", and the name says `{info.name}`" if named and len(used) < 2 else ""
            why = self.evidences[(node, info.name)] = Evidence(
                node, f"`{self._short(node)}`: only `{info.name}`, {what}, has that method{also};")
        kind = Kind.MODULE if info.module_like else Kind.OBJECT
        return Value(kind=kind, grad=Grad.NO, cls=info, parameterized=info.parameterized, why=why)

    def _instance_by_call(self, key: str, uses: "evidence.Uses") -> Optional[Value]:
        """`attention(last_alignment)`, `model(input_ids, state=state)`: a name called the way the
        `forward()` of one nn.Module class of this file is declared is an instance of that class.
        Two agreements at least (evidence.call_agreements: arguments named as its parameters,
        keywords it declares, the name a word of the class's name), and no other class fits."""
        call = uses.called.get(key)
        if call is None or "." in key or not self.classes:
            return None
        if call in self.call_fits:
            return self.call_fits[call]
        # only classes whose forward takes one of the call's names: an agreement needs one
        named = {a.keyword.value if a.keyword is not None else a.value.value for a in call.args
                 if a.keyword is not None or isinstance(a.value, cst.Name)}
        unpacked = uses.unpacked.get(call)
        fits = []
        for info in self.classes:
            forward = info.methods.get("forward")
            # (a class of no torch base with a forward() - pytorch-grad-cam's RefineCAM - is not an nn.Module)
            if forward is None or not (info.is_module or info.unknown_base) \
                    or named.isdisjoint(evidence.named_params(forward.node)) and not unpacked:
                continue
            agree = evidence.call_agreements(call, key, info.name, forward.node, unpacked)
            if agree is not None and len(agree) >= 2:
                fits.append((info, agree))
        found = None
        if len(fits) == 1:
            info, agree = fits[0]
            why = Evidence(call, f"`{self._short(call)}`: the call fits `{info.name}.forward()` ({', '.join(agree)}), "
                                 "an nn.Module of this file;")
            found = Value(kind=Kind.MODULE, grad=Grad.NO, cls=info, parameterized=info.parameterized, why=why)
        self.call_fits[call] = found
        return found

    def _evidence(self, call: cst.Call, suffix: str) -> Evidence:
        """One Evidence per use and wording (the code of the call is printed once, not per read)."""
        found = self.evidences.get((call, suffix))
        if found is None:
            found = self.evidences[(call, suffix)] = Evidence(call, f"`{self._short(call)}`{suffix}")
        return found

    def _uses_around(self, key: str):
        """The Uses that speak for `key` here: the class's for `self.x`, then each enclosing function's, then the module's."""
        fn = self.function
        if key.startswith("self.") and fn is not None and fn.cls is not None:
            yield self._uses_cache(fn.cls.node, evidence.class_uses)
        scope = self.frame.scope
        while scope is not None:
            if scope.kind == "function" and scope.function is not None:
                yield self._uses_cache(scope.function.node, evidence.uses_of)
                if key.split(".", 1)[0] in scope.env:
                    return  # bound here: outer scopes' uses are of another variable
            elif scope.kind == "module":
                yield self._uses_cache(self.module, evidence.uses_of)
            scope = scope.parent

    def _uses_cache(self, node: cst.CSTNode, compute) -> "evidence.Uses":
        found = self.uses.get(node)
        if found is None:
            found = self.uses[node] = compute(node)
        return found

    MAX_TYPE_QUERIES = 64  # distinct questions per file

    def _question(self, node: cst.BaseExpression) -> object:
        """What a name question is about: uses of one binding (an import, a parameter, an
        assignment) or of one `self.<attr>` of a class are one question to jedi, asked at the first."""
        if isinstance(node, cst.Name):
            b = self.lookup(node.value)
            return ("binding", b.token) if b is not None else ("free", node.value)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            cls = self.function.cls if self.function is not None else None
            return ("self", cls, node.attr.value) if cls is not None else node
        return node

    def _python_builtin(self, name: cst.Name) -> bool:
        """`len`, `print`, `super`: Python's own, unless the file rebinds the name (never worth a question)."""
        return name.value in _BUILTINS and self.lookup(name.value) is None

    def _ask(self, node: cst.BaseExpression, removes_only: bool = False) -> None:
        """Syntax cannot tell what this name is: the type layer may - unless it was imported from
        Python's standard library, which makes no modules, tensors or arrays (`Path`, `deque`).
        `removes_only`: the answer can only take findings away (a receiver that turns out to be a
        NumPy array, an appended float), so it is asked only where a finding is (engine._queries)."""
        if isinstance(node, (cst.Name, cst.Attribute)) and node not in self.facts and node not in self.type_queries:
            v = self.values.get(node, UNKNOWN)
            if _unknown(v) and (v.qualname is None or v.qualname.split(".", 1)[0] not in _STDLIB):
                about = self._question(node)
                if about in self._questions or len(self._questions) < self.MAX_TYPE_QUERIES:
                    self._questions.add(about)
                    self.type_queries[node] = about
                    if removes_only:
                        self.removal_queries.add(node)

    def _eval_children(self, node) -> Value:
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                self._eval(child)
            elif isinstance(child, (cst.Arg, cst.Element, cst.DictElement, cst.SubscriptElement,
                                    cst.FormattedStringExpression, cst.Index, cst.Slice, cst.StarredDictElement)):
                self._eval_children(child)
        return UNKNOWN

    def _e_literal(self, node) -> Value:
        return NUMBER

    def _e_fstring(self, node: cst.FormattedString) -> Value:
        self._eval_children(node)
        return NUMBER

    def _e_name(self, node: cst.Name) -> Value:
        b = self.lookup(node.value)
        if b is not None:
            return b.value
        if node.value in ("True", "False", "None"):
            return NUMBER
        return UNKNOWN

    def _e_attribute(self, node: cst.Attribute) -> Value:
        base = self._eval(node.value)
        attr = node.attr.value
        if base.qualname:
            return Value(qualname=f"{base.qualname}.{attr}")
        kind = base.kind
        if kind is Kind.TENSOR:
            if attr == "data":
                return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, "`.data`"),
                             alias=self._alias(node.value, "data", node, base), scalar=base.scalar,
                             cuts=self._cut(base, node, "`.data`"))
            if attr in K.VIEW_ATTRIBUTES:
                return base.but(alias=self._view_alias(base, node.value, node), fresh=False, scalar=False)
            if attr in K.NEVER_GRAD_ATTRIBUTES:
                return Value(kind=Kind.TENSOR if attr == "grad" else Kind.NUMBER, grad=Grad.NO, why=Evidence(node, f"`.{attr}`"))
            if base.has_graph and not attr.startswith("__"):
                # A field of a model's output (outputs.logits, outputs.loss).
                return base.but(alias=None, fresh=False, scalar=attr == "loss", elements=None)
            return Value(kind=Kind.UNKNOWN, grad=base.grad if base.grad is Grad.NO else Grad.UNKNOWN)
        if kind is Kind.MODULE:
            if isinstance(base.cls, ClassInfo) and attr in base.cls.attrs:
                return base.cls.attrs[attr]
            if isinstance(base.cls, ClassInfo) and attr in base.cls.methods:
                return Value(kind=Kind.FUNCTION, grad=Grad.NO, cls=base.cls.methods[attr], elements=(base,))
            if attr in ("weight", "bias") and base.parameterized:
                return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, f"parameter `{self.code_for(node)}`"))
            if base.cls is None and base.parameterized:
                return self._file_parameter(node, attr)
            return Value(kind=Kind.UNKNOWN)
        if kind is Kind.OBJECT and isinstance(base.cls, ClassInfo):
            if attr in base.cls.attrs:
                return base.cls.attrs[attr]
            if attr in base.cls.methods:
                return Value(kind=Kind.FUNCTION, grad=Grad.NO, cls=base.cls.methods[attr], elements=(base,))
            return UNKNOWN
        if kind is Kind.CLASS and isinstance(base.cls, ClassInfo):
            return base.cls.attrs.get(attr, UNKNOWN)
        if kind is Kind.NDARRAY:
            return Value(kind=Kind.UNKNOWN, grad=Grad.NO)
        if attr in ("weight", "bias") and isinstance(node.value, cst.Attribute):
            owner = self.values.get(node.value.value, UNKNOWN)
            if owner.kind is Kind.MODULE and owner.parameterized and owner.cls is None:
                # `model.out.weight`: the parameter of a submodule of a model from elsewhere.
                return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, f"parameter `{self.code_for(node)}`"))
            if _unknown(owner):
                return self._file_layer_weight(node.value.attr.value, attr)
        return UNKNOWN

    def _file_parameter(self, node: cst.Attribute, attr: str) -> Value:
        """`model.W` of a model from elsewhere, where the one class of this file that sets `self.W`
        makes it an `nn.Parameter` (see evidence.parameter_attributes)."""
        if self.parameter_attrs is None:
            self.parameter_attrs = evidence.parameter_attributes(self.module, self.source)
        found = self.parameter_attrs.get(attr)
        if found is None:
            return Value(kind=Kind.UNKNOWN)
        cls, made = found
        why = Evidence(made, f"`.{attr}` is an `nn.Parameter` in `{cls}`, the only class of this file with a `.{attr}`,")
        return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=why)

    def _file_layer_weight(self, sub: str, attr: str) -> Value:
        """`model.layers[i].dense.weight` of a model from elsewhere, where the one class of this file
        that sets `self.dense` makes it a torch layer with weights (evidence.layer_attributes)."""
        if self.layer_attrs is None:
            self.layer_attrs = evidence.layer_attributes(self.module, self.source)
        found = self.layer_attrs.get(sub)
        if found is None:
            return UNKNOWN
        cls, layer, made = found
        why = Evidence(made, f"`.{sub}` is an `nn.{layer}` in `{cls}`, the only class of this file with a `.{sub}`,")
        return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=why)

    def _alias(self, base_node: cst.BaseExpression, how: str, node: cst.CSTNode, base: Value) -> Alias:
        binding = self.lookup(base_node.value) if isinstance(base_node, cst.Name) else None
        return Alias(self._name_of(base_node), how, node, binding, base.leaf)

    def _cut(self, v: Value, node: cst.CSTNode, how: str) -> frozenset:
        """Cutting a graph here (GG301 reports it if a loss built on it is back-propagated)."""
        return v.cuts | {Evidence(node, how)} if v.has_graph else v.cuts

    def _name_of(self, node: cst.BaseExpression) -> str:
        return node.value if isinstance(node, cst.Name) else self.code_for(node)

    def _view_alias(self, base: Value, base_node, node) -> Alias:
        if base.alias is not None:
            return base.alias  # a view of a detach() alias still writes to the original
        return self._alias(base_node, "view", node, base)

    def _e_subscript(self, node: cst.Subscript) -> Value:
        base = self._eval(node.value)
        index = None
        for el in node.slice:
            if isinstance(el.slice, cst.Index):
                self._eval(el.slice.value)
                index = el.slice.value
            else:
                for part in (el.slice.lower, el.slice.upper, el.slice.step):
                    if part is not None:
                        self._eval(part)
        if base.elements is not None and len(node.slice) == 1 and isinstance(index, (cst.Integer, cst.UnaryOperation)):
            try:
                i = int(self.code_for(index).replace(" ", ""), 0)
                return base.elements[i]
            except (ValueError, IndexError):
                pass
        key = _literal_key(node)
        if base.has_graph and base.kind in (Kind.TENSOR, Kind.CONTAINER) and key in K.INTEGER_OUTPUT_KEYS \
                and all(k != key for k, _ in base.keyed):  # (not a "labels" item the file itself stored)
            return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"`{self._short(node)}`, class indices"))
        if base.kind is Kind.TENSOR:
            # A view of a leaf still requires grad but holds no activations: `leaf` carries over.
            return base.but(alias=self._view_alias(base, node.value, node), fresh=False, scalar=False, elements=None)
        if base.kind is Kind.CONTAINER:
            if any(isinstance(el.slice, cst.Slice) for el in node.slice):
                return base.but(elements=None)  # `self.data[::-1]`: a list of the same items
            if key is not None:
                return next((x for k, x in base.keyed if k == key), UNKNOWN)
            # `losses[i]` read back from a list of graphs: like iterating it, it carries the list's
            # identity (a backward of it reaches what was stored there).
            return self._element_of(base, node)
        if base.kind is Kind.MODULE:
            return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=base.parameterized)
        if base.kind is Kind.NDARRAY:
            return Value(kind=Kind.NDARRAY, grad=Grad.NO)
        if base.kind is Kind.NUMBER:
            return NUMBER
        return UNKNOWN

    def _e_binary(self, node: cst.BinaryOperation) -> Value:
        a, b = self._eval(node.left), self._eval(node.right)
        if Kind.CONTAINER in (a.kind, b.kind):
            items = [x.item for x in (a, b) if x.item is not None]
            item = items[0] if len(items) == 1 else merge(*items) if items else None
            return Value(kind=Kind.CONTAINER, grad=item.grad if item else Grad.UNKNOWN, item=item,
                         origins=a.origins | b.origins)
        g, why, origins = join_grad([a, b])
        if Kind.TENSOR in (a.kind, b.kind):
            kind = Kind.TENSOR
        elif a.kind is Kind.NUMBER and b.kind is Kind.NUMBER:
            kind = Kind.NUMBER
        elif Kind.NDARRAY in (a.kind, b.kind) and g is Grad.NO:
            kind = Kind.NDARRAY
        else:
            kind = Kind.UNKNOWN
        if kind is Kind.UNKNOWN and g is Grad.YES:
            kind = Kind.TENSOR  # a graph only lives in tensors
        scalar = (a.scalar or a.kind is Kind.NUMBER) and (b.scalar or b.kind is Kind.NUMBER) and kind is Kind.TENSOR
        cuts, pred = combined_cuts([a, b])
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            # `loss + aux_loss.detach().item()`: a loss term cut from its graph and added to a loss
            # that trains is a constant - its model gets no gradient (a target is per element, not a loss).
            for term, other in ((a, b), (b, a)):
                # (provably cut: a term of unknown grad - `-(log_probs * adv.detach()).mean()` over a
                # distribution's log-probs - may carry its own graph)
                if other.has_graph and other.scalar and term.grad is Grad.NO and term.cuts and (
                    term.scalar or term.kind is Kind.NUMBER
                ):
                    pred = pred | frozenset((cut, node) for cut in term.cuts)
        return self._made(Value(kind=kind, grad=g, why=why, origins=origins, scalar=scalar, cuts=cuts, pred_cuts=pred), node)

    def _e_unary(self, node: cst.UnaryOperation) -> Value:
        v = self._eval(node.expression)
        if isinstance(node.operator, cst.Not):
            return NUMBER
        return self._made(v.but(alias=None, fresh=False, leaf=False) if v.grad is Grad.YES else v.but(alias=None), node)

    def _e_boolean(self, node: cst.BooleanOperation) -> Value:
        return merge(self._eval(node.left), self._eval(node.right))

    def _e_compare(self, node: cst.Comparison) -> Value:
        vals = [self._eval(node.left)] + [self._eval(c.comparator) for c in node.comparisons]
        kind = Kind.TENSOR if any(v.kind is Kind.TENSOR for v in vals) else Kind.NUMBER
        return Value(kind=kind, grad=Grad.NO, why=Evidence(node, "a comparison"))

    def _e_ifexp(self, node: cst.IfExp) -> Value:
        self._eval(node.test)
        return merge(self._eval(node.body), self._eval(node.orelse))

    def _e_sequence(self, node) -> Value:
        elems = []
        for e in node.elements:
            elems.append(self._eval(e.value) if isinstance(e, cst.Element) else UNKNOWN)
            if isinstance(e, cst.StarredElement):
                self._eval(e.value)
        return self._container(elems, tuple(elems) if isinstance(node, cst.Tuple) else None)

    def _container(self, elems: list, elements=None) -> Value:
        item = None
        if elems:
            item = elems[0]
            for e in elems[1:]:
                item = merge(item, e)
            graph = [e for e in elems if e.has_graph]
            if graph:
                item = item.but(grad=Grad.YES, why=graph[0].why, leaf=False,
                                origins=frozenset().union(*(e.origins for e in graph)))
        # A list of parameters requires grad but holds no graph: `leaf` carries over.
        return Value(kind=Kind.CONTAINER, grad=item.grad if item else Grad.NO, item=item, elements=elements,
                     why=item.why if item else None, origins=item.origins if item else frozenset(),
                     leaf=bool(item and item.leaf))

    def _e_dict(self, node: cst.Dict) -> Value:
        elems, keyed = [], []
        for e in node.elements:
            if isinstance(e, cst.DictElement):
                self._eval(e.key)
                v = self._eval(e.value)
                elems.append(v)
                if isinstance(e.key, cst.SimpleString):
                    keyed.append((_string_value(e.key.value), v))
            else:
                self._eval(e.value)
        return self._container(elems).but(keyed=tuple(keyed))

    def _e_comprehension(self, node) -> Value:
        scope = self.frame.scope
        saved = dict(scope.env)
        try:
            comp = node.for_in
            while comp is not None:
                it = self._eval(comp.iter)
                self._assign_quiet(comp.target, self._element_of(it, comp.iter))
                for cond in comp.ifs:
                    self._eval(cond.test)
                comp = comp.inner_for_in
            if isinstance(node, cst.DictComp):
                self._eval(node.key)
                elt = self._eval(node.value)
            else:
                elt = self._eval(node.elt)
        finally:
            scope.env.clear()
            scope.env.update(saved)
        return self._container([elt])

    def _assign_quiet(self, target, v: Value) -> None:
        if isinstance(target, cst.Name):
            self._bind(target, v)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = [e.value for e in target.elements]
            parts = list(v.elements) if v.elements is not None and len(v.elements) == len(elems) else [UNKNOWN] * len(elems)
            for e, part in zip(elems, parts):
                self._assign_quiet(e, part)

    def _e_lambda(self, node: cst.Lambda) -> Value:
        return Value(kind=Kind.UNKNOWN, grad=Grad.NO)

    def _e_named(self, node: cst.NamedExpr) -> Value:
        v = self._eval(node.value)
        if isinstance(node.target, cst.Name):
            self._bind(node.target, v, node.value)
        return v

    def _e_await(self, node: cst.Await) -> Value:
        self._eval(node.expression)
        return UNKNOWN

    def _element_of(self, it: Value, node: cst.BaseExpression) -> Value:
        """What a `for` loop over `it` binds. An element of a container carries the
        container's identity: a loss built from `for v in values` reads `values`."""
        if it.kind is Kind.CONTAINER:
            item = it.item or UNKNOWN
            if it.origins - item.origins and item.grad is not Grad.NO:
                item = item.but(origins=item.origins | it.origins)
            return item
        if it.kind is Kind.TENSOR:  # rows of a tensor, or the items of a list a model returned
            return it.but(alias=None, fresh=False, scalar=False, elements=None)
        if it.kind is Kind.PARAMS:
            return it.item
        if it.kind is Kind.MODULE and it.parameterized and it.cls is None:
            # `for layer in self.layers` over an nn.ModuleList / Sequential: its submodules.
            return Value(kind=Kind.MODULE, grad=Grad.NO, why=it.why)
        return UNKNOWN

    # ----------------------------------------------------------------- calls
    def _e_call(self, node: cst.Call) -> Value:
        func = node.func
        fv = self._eval(func)
        if (isinstance(func, cst.Name) and not self._python_builtin(func)) or (
            isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
        ):
            self._ask(func)  # model(x), Net(), self.encoder(x): an nn.Module from elsewhere?
        args = []
        for a in node.args:
            args.append((a, self._eval(a.value)))
        if isinstance(func, cst.Attribute) and func.attr.value == "step":
            self._repeated_closures(args)
        v = self._call(node, fv, args)
        if self.strict and v is UNKNOWN and _unknown(fv) and not isinstance(func, cst.Attribute):
            graphs = [a for _, a in args if a.has_graph]
            if graphs:
                why = Evidence(node, f"from `{self._short(node)}`, which is given a graph,")
                origins = frozenset().union(*(a.origins for a in graphs)) | {node}
                v = self._made(Value(kind=Kind.TENSOR, grad=Grad.YES, why=why, origins=origins), node)
        if _unknown(fv) and isinstance(func, cst.Name):
            # Handed to a function of another file (`update(loss)`), which may train on it.
            self.escaped |= reach([a for _, a in args])
        if v.grad is Grad.UNKNOWN and not v.origins and v.kind in (Kind.UNKNOWN, Kind.TENSOR, Kind.CONTAINER):
            # What an unknown call returns may carry its inputs' graphs: `scaler.scale(loss)`,
            # `outs.mean()` of a buffer written with graphs.
            inputs = [a for _, a in args]
            if isinstance(func, cst.Attribute):
                inputs.append(self.values.get(func.value, UNKNOWN))
            origins = reach(inputs)
            if origins:
                v = v.but(origins=origins)
        return v

    def _unknown_receiver(self, node: cst.Call, name: str, args: list) -> None:
        """Stores through an object syntax cannot see: `history.append(loss)` on a list the caller
        passed in, and `meter.update(loss)` where the only class of the file with an `update` keeps
        its argument (`self.sum += val`)."""
        func = node.func
        if name in ("append", "extend", "appendleft", "insert") and args:
            a, v = args[-1]
            if v.has_graph:
                self._store(func.value, a.value, v, "append")
                self._add_item(func.value, v)  # now a list of graphs: a later backward of it excuses the store
            return
        owners = [f for f in self.functions if f.name == name and f.cls is not None]
        if len(owners) == 1:
            self._called_by_name(owners[0])
            self._kept_by_call(owners[0], node, args, UNKNOWN)

    def _called_by_name(self, fn: FunctionInfo) -> None:
        """`model.predict(batch)` on an object syntax cannot see, where `predict` is defined by one
        class of the file: that method runs in this call's grad mode (mt-dnn's `predict()`, reached
        only under the entry point's `no_grad`, builds no graph). Only the mode is taken: the
        receiver may be another object (an sklearn model's `predict`), so only a call under
        no_grad counts, and only for a method that does not use autograd itself: then the mode
        can only silence findings."""
        if self.frame.mode is not GradMode.OFF or _AUTOGRAD_USE.search(self.module.code_for_node(fn.node)):
            return  # a guessed callee must not make its own backward look like one under no_grad
        before = self._context_of(fn)
        fn.call_modes.add(self.frame.mode)
        if fn.analyses and self._context_of(fn) != before and fn.analyses < MAX_ANALYSES_PER_FUNCTION:
            fn.dirty = True

    def _repeated_closures(self, args: list) -> None:
        """`optimizer.step(closure)` calls the closure on every step (L-BFGS): its body is a
        loop body - what it stores outside itself piles up."""
        for _, v in args:
            fn = v.cls if v.kind is Kind.FUNCTION and isinstance(v.cls, FunctionInfo) else None
            if fn is not None and not fn.repeated:
                fn.repeated = True
                if fn.analyses:
                    fn.dirty = True

    def _call(self, node: cst.Call, fv: Value, args: list) -> Value:
        func = node.func
        if fv.qualname:
            return self._call_qualified(node, fv.qualname, args)
        if fv.kind is Kind.MODULE:  # model(x), self.encoder(x)
            return self._module_call(node, fv, args)
        if fv.kind is Kind.CLASS and fv.cls is None and fv.item is not None:
            return fv.item  # a class the type layer knows (an nn.Module subclass from another file)
        if isinstance(func, cst.Attribute):
            recv = self.values.get(func.value, UNKNOWN)
            name = func.attr.value
            if recv.kind is Kind.UNKNOWN:
                if name in K.RECEIVER_QUESTIONS or (name.endswith("_") and not name.startswith("_")):
                    # a tensor, an array, another object? (~10 ms a question). Only for `.clone()` and
                    # `.detach()` can the answer add a finding (a needless copy, a storage alias).
                    self._ask(func.value, removes_only=name not in ("clone", "detach"))
                self._unknown_receiver(node, name, args)
            if name == "append" and args:
                self._ask(args[0][0].value, removes_only=True)  # a float or a tensor kept?
            if name in K.BACKWARD_METHODS:
                pos = [v for a, v in args if a.keyword is None and not a.star]
                if recv.kind is Kind.TENSOR or (recv.grad is Grad.YES and not pos) or (recv.kind is Kind.UNKNOWN and not pos):
                    self._backward(node, recv)  # `.backward()` proves a graph (or PyTorch raises)
                    return NUMBER
                if pos and recv.kind is Kind.UNKNOWN:
                    # `y.backward(grad)` or `accelerator.backward(loss)`: either may be the graph
                    self._backward(node, UNKNOWN.but(origins=reach([recv, pos[0]])))
                    return NUMBER
                if pos:
                    self._backward(node, pos[0])  # accelerator.backward(loss)
                    return NUMBER
            if fv.kind is Kind.FUNCTION and isinstance(fv.cls, FunctionInfo):
                bound = fv.elements[0] if fv.elements else None
                return self._call_function(fv.cls, node, args, bound)
            if recv.kind is Kind.MODULE:
                return self._module_method(node, recv, name, args)
            if recv.kind is Kind.TENSOR:
                return self._tensor_method(node, recv, name, args)
            if recv.kind is Kind.CONTAINER:
                return self._container_method(node, recv, name, args)
            if recv.kind is Kind.PARAMS:
                return UNKNOWN
            if recv.kind is Kind.NDARRAY:
                return Value(kind=Kind.NDARRAY, grad=Grad.NO) if name not in ("item", "tolist") else NUMBER
            if recv.kind is Kind.NUMBER:
                return NUMBER
            if recv.kind is Kind.OBJECT and recv.cls is None:
                return UNKNOWN  # an instance the type layer knows is no tensor: its own clone(), detach()...
            # Unknown receiver: only what holds whatever it is.
            if name == "item":
                return Value(kind=Kind.NUMBER, grad=Grad.NO, why=Evidence(node, "`.item()`"))
            if name == "tolist":
                return Value(kind=Kind.CONTAINER, grad=Grad.NO, why=Evidence(node, "`.tolist()`"), item=NUMBER)
            if name == "detach":
                return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, "`.detach()`"),
                             alias=self._alias(func.value, "detach", node, UNKNOWN))
            if name == "from_pretrained" and self._looks_like_model_class(func.value):
                return Value(kind=Kind.MODULE, grad=Grad.NO)
            return UNKNOWN
        if fv.kind is Kind.MODULE:
            return self._module_call(node, fv, args)
        if fv.kind is Kind.CLASS and isinstance(fv.cls, ClassInfo):
            info = fv.cls
            inst = Value(kind=Kind.MODULE if info.is_module else Kind.OBJECT, grad=Grad.NO, cls=info,
                         parameterized=info.parameterized)
            init = info.methods.get("__init__")
            if init is not None:
                self._call_function(init, node, args, inst)
            return inst
        if fv.kind is Kind.FUNCTION and isinstance(fv.cls, FunctionInfo):
            return self._call_function(fv.cls, node, args, fv.elements[0] if fv.elements else None)
        if isinstance(func, cst.Name) and self.lookup(func.value) is None:
            return self._builtin(node, func.value, args)
        return UNKNOWN

    def _looks_like_model_class(self, node: cst.BaseExpression) -> bool:
        name = self._qualname(node) or (dotted(node) or "")
        last = name.rsplit(".", 1)[-1]
        if any(word in last for word in K.PRETRAINED_NOT_MODELS) or re.match(r"(?:TF|Flax)[A-Z]", last):
            return False  # (transformers' TensorFlow and Flax models are no torch modules)
        return "Model" in last or "For" in last or last.startswith(("UNet", "Autoencoder", "VAE"))

    def _backward(self, node: cst.CSTNode, v: Value) -> None:
        b = Backward(node, v.origins, self.frame.loops, self.function, v)
        self.backwards.append(b)

    def _module_call(self, node: cst.Call, m: Value, args: list) -> Value:
        vals = [v for _, v in args]
        if m.loss:
            operands = self._loss_operands(node, args)
            g, why, origins = join_grad(operands) if operands else (Grad.UNKNOWN, None, frozenset())
            scalar = m.scalar and reduces_to_scalar(node)  # nn.MSELoss(reduction="none") stays per element
            if g is Grad.YES:
                why = Evidence(node, f"from `{self._short(node)}`")
            return self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins, scalar=scalar,
                                    pred_cuts=self._prediction_cuts(node, vals)), node)
        if isinstance(m.cls, ClassInfo) and "forward" in m.cls.methods:
            # Analyse forward() with these arguments; a module with parameters makes a new graph here.
            out = self._call_function(m.cls.methods["forward"], node, args, m)
            if not m.parameterized:
                return out
            if out.kind is Kind.CONTAINER and out.elements is not None:
                return self._made_each(out, node)  # a tuple/list output keeps its shape: `pred, inputs_list = net(x)`
        if m.parameterized:
            # A new graph from this call, on top of whatever graphs its inputs carry.
            inputs = frozenset().union(*(v.origins for v in vals if v.has_graph))
            return self._made(Value(kind=Kind.TENSOR, grad=Grad.YES, why=Evidence(node, f"from `{self._short(node)}`"),
                                    origins=inputs | {node}), node)
        g, why, origins = join_grad(vals) if vals else (Grad.NO, None, frozenset())
        return self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins), node)

    @staticmethod
    def _loss_operands(node: cst.Call, args: list) -> list:
        """What a loss's graph comes from: its prediction, and its target unless the target is a
        name nothing is known about that names data (`y`, `labels`, `targets`): where the
        prediction was cut, `F.mse_loss(out, y)` then has no graph (and `.backward()` raises)."""
        out = []
        for i, (a, v) in enumerate(args):
            target = (a.keyword is None and i > 0) or (a.keyword is not None and a.keyword.value == "target")
            if target and v.grad is Grad.UNKNOWN and isinstance(a.value, cst.Name) and K.target_like(a.value.value):
                continue
            out.append(v)
        return out

    @staticmethod
    def _prediction_cuts(node: cst.Call, vals: list) -> frozenset:
        """A loss's first argument is its prediction; a cut there means no gradient for the model.
        A cut in the target (the second argument) is the point of the target."""
        inp = keyword(node, "input")
        first = vals[0] if vals and node.args and node.args[0].keyword is None else None
        if inp is not None:
            first = next((v for a, v in zip(node.args, vals) if a is inp), first)
        if first is None:
            return frozenset()
        return frozenset((cut, node) for cut in first.cuts) | first.pred_cuts  # (where cut, which loss)

    def _short(self, node: cst.CSTNode) -> str:
        return short(self.code_for(node))

    def _module_method(self, node: cst.Call, m: Value, name: str, args: list) -> Value:
        func = node.func
        if name in K.MODULE_SELF_METHODS:
            new = m
            if name == "requires_grad_":
                flag = literal_bool(args[0][0].value) if args else True
                new = m.but(parameterized=flag is not False and m.parameterized)
                if isinstance(func.value, cst.Name):
                    self._rebind_mutated(func.value.value, new)
            return new
        if name == "forward":
            return self._module_call(node, m, args)
        if name in ("parameters",):
            return Value(kind=Kind.PARAMS, grad=Grad.NO, item=self._param(node) if m.parameterized else UNKNOWN)
        if name == "named_parameters":
            p = self._param(node) if m.parameterized else UNKNOWN
            return Value(kind=Kind.PARAMS, grad=Grad.NO, item=Value(kind=Kind.CONTAINER, elements=(NUMBER, p), item=UNKNOWN))
        if name in ("zero_grad", "load_state_dict", "register_buffer", "register_forward_hook"):
            return NUMBER
        if m.cls is None and m.parameterized and K.forward_like(name):
            # `model.encode(x)`, `critic.get_value(obs)` on a model from elsewhere: a forward pass.
            return self._module_call(node, m, args)
        return UNKNOWN

    def _param(self, node) -> Value:
        return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, "a parameter"))

    def _tensor_method(self, node: cst.Call, t: Value, name: str, args: list) -> Value:
        func = node.func
        vals = [v for _, v in args]
        if name.startswith("register_"):
            return UNKNOWN  # `p.register_hook(fn)`: a handle, not a tensor
        if name == "detach":
            return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, "`.detach()`"),
                         alias=self._alias(func.value, "detach", node, t) if not t.fresh else None,
                         scalar=t.scalar, fresh=t.fresh, cuts=self._cut(t, node, "`.detach()`"))
        if name in ("item",):
            return Value(kind=Kind.NUMBER, grad=Grad.NO, why=Evidence(node, "`.item()`"), cuts=self._cut(t, node, "`.item()`"))
        if name in ("argmax", "argmin"):  # indices: a loss computed from them trains nothing (arcface's issue)
            return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"`.{name}()`"), cuts=self._cut(t, node, f"`.{name}()`"))
        if name == "tolist":
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, why=Evidence(node, "`.tolist()`"), item=NUMBER,
                         cuts=self._cut(t, node, "`.tolist()`"))
        if name == "numpy":
            return Value(kind=Kind.NDARRAY, grad=Grad.NO, why=Evidence(node, "`.numpy()`"), cuts=self._cut(t, node, "`.numpy()`"))
        if name == "clone":
            return t.but(alias=None, fresh=True, leaf=False) if t.grad is Grad.YES else t.but(alias=None, fresh=True)
        if name == "requires_grad_":
            flag = literal_bool(args[0][0].value) if args else True
            if flag is False:
                v = t.but(grad=Grad.NO, leaf=False, why=Evidence(node, "`.requires_grad_(False)`"))
            elif t.has_graph:
                v = t  # already part of a graph: requires_grad_() changes nothing
            else:
                v = t.but(grad=Grad.YES, leaf=True, why=Evidence(node, "`.requires_grad_()`"), origins=frozenset())
            if isinstance(func.value, cst.Name):
                self._rebind_mutated(func.value.value, v)
            return v
        if name == "detach_":  # in place: the tensor itself is now a leaf that does not require grad
            v = t.but(grad=Grad.NO, leaf=False, why=Evidence(node, "`.detach_()`"), origins=frozenset(),
                      cuts=self._cut(t, node, "`.detach_()`"))
            if isinstance(func.value, cst.Name):
                self._rebind_mutated(func.value.value, v)
            return v
        if name in K.NUMBER_METHODS:
            return Value(kind=Kind.NUMBER, grad=Grad.NO, why=Evidence(node, f"`.{name}()`"))
        if name in K.NEVER_GRAD_METHODS:
            return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"`.{name}()`"))
        if name in ("to", "type"):
            for a, _ in args:
                q = self._qualname(a.value) or ""
                if q.startswith("torch.") and q.rsplit(".", 1)[-1] in K.INTEGER_DTYPES:
                    return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"a cast to `{q}`"))
            return t.but(alias=None, fresh=False, leaf=t.leaf and name == "to")
        if name in K.SAME_GRAD_METHODS_RETURN_SELF_KIND:
            return t.but(alias=None, fresh=name == "clone")
        has_dim = bool(positional(node)) or keyword(node, "dim") is not None
        if name in K.TUPLE_ALWAYS or (name in K.TUPLE_WITH_DIM and has_dim):
            g, why, origins = join_grad([t] + vals)
            values = self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins), node)
            indices = Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"the indices of `.{name}()`"))
            return Value(kind=Kind.CONTAINER, grad=values.grad, elements=(values, indices), item=values,
                         why=values.why, origins=values.origins)
        if name in ("split", "chunk", "unbind", "tensor_split"):
            part = t.but(alias=self._view_alias(t, func.value, node), fresh=False, leaf=False)
            return Value(kind=Kind.CONTAINER, grad=t.grad, item=self._made(part, node), origins=t.origins, why=t.why)
        if K.is_inplace_method(name):
            g, why, origins = join_grad([t] + vals)
            new = t.but(grad=g, why=why if g is Grad.YES and t.grad is not Grad.YES else t.why, origins=origins)
            new = self._made(new, node) if t.grad is not Grad.YES else new
            if isinstance(func.value, cst.Name) and new is not t:
                self._rebind_mutated(func.value.value, new.but(alias=t.alias))
            return new
        operands = [t] + [v for v in vals if v.kind in (Kind.TENSOR, Kind.UNKNOWN)]
        g, why, origins = join_grad(operands)
        scalar = name in K.SCALAR_REDUCTIONS and not has_dim
        alias = self._view_alias(t, func.value, node) if name in K.VIEW_METHODS else None
        cuts, pred = combined_cuts(operands)
        # A view of a parameter holds no activations (`mi.bias.view(self.na, -1)`: the sizes are no operands).
        leaf = alias is not None and t.leaf and not any(v.kind is Kind.TENSOR for v in operands[1:])
        return self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins, scalar=scalar, alias=alias,
                                cuts=cuts, pred_cuts=pred, leaf=leaf), node)

    def _container_method(self, node: cst.Call, c: Value, name: str, args: list) -> Value:
        func = node.func
        if name in ("append", "add", "appendleft", "insert") and args:
            a, v = args[-1]
            if v.has_graph:
                self._store(func.value, a.value, v, "append")
            self._add_item(func.value, v)
            return NUMBER
        if name == "extend" and args:
            a, v = args[0]
            item = v.item if v.kind is Kind.CONTAINER else UNKNOWN
            if item is not None and item.has_graph:
                self._store(func.value, a.value, v, "append")
            if item is not None:
                self._add_item(func.value, item)
            return NUMBER
        if name in ("pop", "get", "popleft", "setdefault"):
            return c.item or UNKNOWN
        if name in ("values", "copy"):
            return c
        if name == "items":
            return Value(kind=Kind.CONTAINER, grad=c.grad, item=Value(kind=Kind.CONTAINER, elements=(UNKNOWN, c.item or UNKNOWN)))
        return UNKNOWN

    def _call_qualified(self, node: cst.Call, q: str, args: list) -> Value:
        vals = [v for _, v in args]
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.nn.") and not q.startswith("torch.nn.functional.") and last[:1].isupper():
            v = self._nn_class(node, q, last, vals)
            inplace = keyword(node, "inplace")
            if v.kind is Kind.MODULE and last not in K.MODULE_CONTAINERS:
                pure = not (inplace is not None and literal_bool(inplace.value) is not False)
                if last == "Sequential":
                    pure = all(x.kind is Kind.MODULE and x.pure for x in vals)
                v = v.but(pure=pure)
            return v
        if q.startswith("torch.nn.functional."):
            tensors = [v for v in (self._loss_operands(node, args) if last in K.FUNCTIONAL_LOSSES else vals)
                       if v.kind is not Kind.NUMBER]
            g, why, origins = join_grad(tensors) if tensors else (Grad.UNKNOWN, None, frozenset())
            scalar = False
            if last in K.FUNCTIONAL_LOSSES:
                scalar = reduces_to_scalar(node)
                if g is Grad.YES:
                    why = Evidence(node, f"from `{self._short(node)}`")
            if last == "one_hot":
                return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, "`one_hot`"))
            if last in K.FUNCTIONAL_LOSSES:
                cuts, pred = frozenset(), self._prediction_cuts(node, vals)
            else:
                cuts, pred = combined_cuts(tensors) if tensors else (frozenset(), frozenset())
            return self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins, scalar=scalar, cuts=cuts,
                                    pred_cuts=pred), node)
        if q in K.MODULE_WRAPPERS and vals:
            return vals[0]
        if q in K.VARIABLE and vals:  # a no-op wrapper since torch 0.4
            rg = keyword(node, "requires_grad")
            if rg is not None and literal_bool(rg.value) and not vals[0].has_graph:
                return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, "`requires_grad=True`"))
            return vals[0]
        if q.startswith("torchvision.models.") and last not in ("get_weight", "list_models") and not any(
            part[:1].isupper() for part in q.split(".")  # `EfficientNet_B2_Weights.DEFAULT.transforms()`: a weight's
        ):
            return Value(kind=Kind.MODULE, grad=Grad.NO)
        if q in ("timm.create_model",):
            return Value(kind=Kind.MODULE, grad=Grad.NO)
        if last == "from_pretrained" and self._looks_like_model_class(node.func.value):
            return Value(kind=Kind.MODULE, grad=Grad.NO)
        if q in K.BACKWARD_FUNCTIONS and vals:
            self._backward(node, vals[0])
            return UNKNOWN if last == "grad" else NUMBER
        if q.startswith("torch."):
            return self._torch_function(node, q, last, args)
        if q.startswith("numpy."):
            return Value(kind=Kind.NDARRAY, grad=Grad.NO, why=Evidence(node, f"`{q}`"))
        return UNKNOWN


    def _nn_class(self, node: cst.Call, q: str, last: str, vals: list) -> Value:
        """An instance of a torch.nn class: a layer, a loss, a container, a Parameter."""
        if last == "Parameter":
            rg = keyword(node, "requires_grad")
            if rg is not None and literal_bool(rg.value) is False:
                return Value(kind=Kind.TENSOR, grad=Grad.NO)
            return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, "`nn.Parameter`"))
        if last.endswith("Loss"):
            # `scalar` of a loss module: whether its calls reduce to one number
            return Value(kind=Kind.MODULE, grad=Grad.NO, loss=True, parameterized=False, scalar=reduces_to_scalar(node))
        if last in K.PARAMETERLESS_MODULES:
            return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=False)
        if last in K.MODULE_CONTAINERS:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=Value(kind=Kind.MODULE, grad=Grad.NO))
        if last in K.PARAM_CONTAINERS:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=self._param(node))
        if q in K.MODULE_WRAPPERS and vals:
            return vals[0]
        if last == "Sequential":
            p = any(v.kind is not Kind.MODULE or v.parameterized for v in vals)
            return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=p)
        if last[0].isupper() and "." not in q[len("torch.nn."):].replace("modules.", "", 1).rstrip(last).strip("."):
            return Value(kind=Kind.MODULE, grad=Grad.NO)
        return UNKNOWN
    def _torch_function(self, node: cst.Call, q: str, last: str, args: list) -> Value:
        if q.count(".") == 1 or q.startswith(("torch.linalg.", "torch.special.", "torch.fft.", "torch.sparse.")):
            if last in K.FACTORIES:
                rg = keyword(node, "requires_grad")
                if rg is not None and literal_bool(rg.value) is not False:
                    return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, "`requires_grad=True`"))
                if last in ("tensor", "as_tensor", "asarray") and args:
                    src = args[0][1]
                    if last != "tensor" and src.kind is Kind.TENSOR:
                        return src.but(alias=None)
                # `torch.tensor(out)` copies `out` without its graph: a cut, as `.detach()` is
                return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"a new tensor from `torch.{last}`"),
                             scalar=last == "tensor" and bool(args) and args[0][1].kind is Kind.NUMBER,
                             cuts=frozenset().union(*(self._cut(v, node, f"`torch.{last}()`") for _, v in args)))
            if last in K.NOT_TENSOR_FUNCTIONS or last[:1].isupper():
                return NUMBER if last in ("numel", "is_tensor", "is_floating_point", "is_complex", "is_grad_enabled") else UNKNOWN
            if last in K.NEVER_GRAD_FUNCTIONS:
                return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"`torch.{last}`"))
            tensors = []
            for _, v in args:
                if v.kind is Kind.CONTAINER and v.item is not None:
                    tensors.append(v.item.but(origins=v.origins))
                elif v.kind is not Kind.NUMBER:
                    tensors.append(v)
            g, why, origins = join_grad(tensors) if tensors else (Grad.UNKNOWN, None, frozenset())
            has_dim = len(positional(node)) > 1 or keyword(node, "dim") is not None
            if last in K.TUPLE_ALWAYS or (last in K.TUPLE_WITH_DIM and has_dim):
                values = self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins), node)
                indices = Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"the indices of `torch.{last}`"))
                return Value(kind=Kind.CONTAINER, grad=values.grad, elements=(values, indices), item=values)
            scalar = last in K.SCALAR_REDUCTIONS and not has_dim or (
                last in K.ELEMENTWISE and bool(tensors) and all(t.scalar for t in tensors)  # `torch.abs(loss)`
            )
            cuts, pred = combined_cuts(tensors) if tensors else (frozenset(), frozenset())
            return self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins, scalar=scalar, cuts=cuts,
                                    pred_cuts=pred), node)
        return UNKNOWN

    def _builtin(self, node: cst.Call, name: str, args: list) -> Value:
        vals = [v for _, v in args]
        if name in ("float", "int", "bool"):
            cuts = self._cut(vals[0], node, f"`{name}()`") if vals else frozenset()
            return Value(kind=Kind.NUMBER, grad=Grad.NO, why=Evidence(node, f"`{name}()`"), cuts=cuts)
        if name in BUILTIN_NUMBER_CALLS:
            return NUMBER
        if name in ("list", "tuple", "set", "sorted", "reversed"):
            if vals and vals[0].kind in (Kind.CONTAINER, Kind.PARAMS):
                v = vals[0]
                # `list(model.parameters())` requires grad but holds no graph: `leaf` carries over
                return Value(kind=Kind.CONTAINER, grad=v.item.grad if v.item else Grad.UNKNOWN, item=v.item,
                             origins=v.origins, why=v.why, leaf=bool(v.item and v.item.leaf))
            return Value(kind=Kind.CONTAINER, grad=Grad.NO) if not vals else UNKNOWN
        if name == "dict" and not vals:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO)
        if name in ("sum", "max", "min") and len(vals) == 1 and vals[0].kind is Kind.CONTAINER and vals[0].item:
            item = vals[0].item
            return self._made(item.but(origins=vals[0].origins | item.origins, alias=None, leaf=False, scalar=item.scalar)
                              if item.grad is Grad.YES else item, node)
        if name == "enumerate" and vals:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=Value(kind=Kind.CONTAINER, elements=(NUMBER, self._element_of(vals[0], node))))
        if name == "zip" and vals:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=Value(kind=Kind.CONTAINER, elements=tuple(self._element_of(v, node) for v in vals)))
        if name == "range":
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=NUMBER)
        if name == "round" and vals and vals[0].kind is Kind.TENSOR:
            return vals[0].but(alias=None)
        return UNKNOWN

    _EVAL = {
        cst.Name: _e_name,
        cst.Attribute: _e_attribute,
        cst.Call: _e_call,
        cst.Subscript: _e_subscript,
        cst.BinaryOperation: _e_binary,
        cst.UnaryOperation: _e_unary,
        cst.BooleanOperation: _e_boolean,
        cst.Comparison: _e_compare,
        cst.IfExp: _e_ifexp,
        cst.Tuple: _e_sequence,
        cst.List: _e_sequence,
        cst.Set: _e_sequence,
        cst.Dict: _e_dict,
        cst.ListComp: _e_comprehension,
        cst.SetComp: _e_comprehension,
        cst.GeneratorExp: _e_comprehension,
        cst.DictComp: _e_comprehension,
        cst.Lambda: _e_lambda,
        cst.NamedExpr: _e_named,
        cst.Await: _e_await,
        cst.Integer: _e_literal,
        cst.Float: _e_literal,
        cst.Imaginary: _e_literal,
        cst.SimpleString: _e_literal,
        cst.ConcatenatedString: _e_literal,
        cst.FormattedString: _e_fstring,
        cst.Ellipsis: _e_literal,
    }
