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

import builtins
from typing import Any, Callable, Optional

import libcst as cst

from gradguard.engine import evidence
from gradguard.engine import knowledge as K
from gradguard.engine.calls import Calls
from gradguard.engine.containers import Containers
from gradguard.engine.evidence import dotted
from gradguard.engine.expressions import Expressions
from gradguard.engine.from_use import FromUse
from gradguard.engine.function_facts import FunctionFacts, function_facts
from gradguard.engine.gradmodes import GradModes
from gradguard.engine.handing import names_in
from gradguard.engine.outside import LIBRARIES, Border
from gradguard.engine.model import (
    Backward,
    Binding,
    ClassInfo,
    Frame,
    FunctionInfo,
    Scope,
    Store,
)
from gradguard.engine.places import Places
from gradguard.engine.sinks import DISPLAYED, Sinks
from gradguard.engine.summaries import MAX_ANALYSES_PER_FUNCTION, Functions
from gradguard.engine.typequestions import TypeQuestions
from gradguard.engine.values import (
    NUMBER,
    UNKNOWN,
    Evidence,
    Grad,
    Kind,
    Value,
    merge,
)


class FlowAnalysis(Functions, Places, GradModes, Containers, Calls, Expressions, FromUse, TypeQuestions, Sinks, Border):
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
        outside: Optional[dict] = None,
        export_calls: bool = False,
        imported: Optional[dict] = None,
    ):
        self.module = module
        self.source = source  # the text, for evidence searches that need no tree walk
        self.cell_starts: tuple = ()  # a notebook's joined program: the line each code cell starts on
        self._cell_lasts: Optional[set] = None  # ids of the module-level statements that end a cell (_displayed)
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
        self.class_submodules: dict = {}  # ClassInfo -> attributes its `__init__` sets to modules
        self.call_fits: dict = {}  # (call, the helper's call it is handed back to) -> the instance its shape says, or None (_instance_by_call)
        self.function_facts: dict = {}  # a function's node -> FunctionFacts (what its code mentions)
        self.scratch: Optional[dict] = None  # method node -> its scratch attributes (scratch.py), when first asked
        self.frame: Frame = Frame(Scope("module", None))
        self.statement: Optional[cst.CSTNode] = None
        self.top: Optional[cst.CSTNode] = None  # the module-level statement being walked
        self.top_of: dict = {}  # node -> its module-level statement (for cheap positions)
        self.not_tensors: list[str] = []  # code of expressions a tensor guard says are not tensors here
        self.on_drop: list[Callable[[set], None]] = []  # rules drop findings of re-analysed functions
        self.uses: dict = {}  # scope node -> evidence.Uses (how its code uses each name)
        # what is read of the tree alone, kept with the parse for its next analysis (Parsed.memo): name -> value
        self.memo: dict = {}
        self.imported: Optional[frozenset] = None  # names the file's imports bind (evidence.imported_names)
        self.mentions: Optional[frozenset] = None  # names that could have evidence in this file (evidence.mentioned)
        self.own_methods: frozenset = frozenset()  # evidence.class_methods: what tells an instance of a class
        self.scalar_backwards: frozenset = frozenset()  # `x.backward()` with no argument: `x` is 0-dim
        self.plain_methods: frozenset = frozenset()  # evidence.plain_class_methods, with the mentions
        self.loop_items: dict = {}  # loop variable -> the list it runs over (`for p in parameters`)
        # loop variable -> the literal tuple or list it runs over (`for phase, module in (("G", G), ("D", D))`)
        self.loop_literals: dict = {}
        self.evidences: dict = {}  # (use, wording) -> Evidence
        self.escaped: set = set()  # graph identities passed to functions of other files
        self.sinks: list = []  # sinks.Use: non-differentiable uses of values with graphs (`.item()`, `print`)
        self.escapes: list = []  # sinks.Use: values with graphs handed to what the analysis cannot see
        self.cut_from: dict = {}  # a cut (`.detach()`, `.item()`) -> the graph identities it cut
        self.parameter_attrs: Optional[dict] = None  # attr -> (class, nn.Parameter call): evidence.parameter_attributes
        self.layer_attrs: Optional[dict] = None  # attr -> (class, layer, call): evidence.layer_attributes
        # project-wide analysis (outside.py): how other files call this file's functions, and the
        # calls this file makes of theirs (None: not asked for)
        self.outside: dict = outside or {}
        self.outgoing: Optional[list] = [] if export_calls else None
        self.callee_summaries: dict = imported or {}  # what other files' functions keep or build (outside.Keeps, Builds)
        self.summarized: dict = {}  # a call whose value another file's outside.Returns gave -> that summary
        self.asked: Optional[set] = set() if export_calls else None  # what the walk read of `outside` (outside_of)
        # a name bound by unpacking a call's result -> (the call, the item's position): `losses` of
        # `grads, losses = sweep(x, y)`, for a call of another file's function (outside.Border._passed)
        self.unpacked_from: dict = {}
        self.border_results: dict = {}  # a call of another file's function, run with grad on -> its target
        self.foreign: dict = {}  # module-level statement joined from another file (neighbours) -> that file
        self.foreign_names: dict = {}  # a joined class's name -> the qualname of the import it stands for
        # `from models import *` of a module that may be the project's: a name the file reads but never
        # binds is named "*.Net", which the project index resolves through the file's star imports
        self.star_imports = False

    def of_tree(self, name: str, compute: Callable[[], Any]) -> Any:
        """What `compute()` reads of the module's tree alone (no value, no setting), once per parse."""
        if name not in self.memo:
            self.memo[name] = compute()
        return self.memo[name]

    def facts_of(self, node: cst.FunctionDef) -> FunctionFacts:
        found = self.function_facts.get(node)
        if found is None:
            found = self.function_facts[node] = function_facts(node)
        return found

    # ------------------------------------------------------------------ entry
    def run(self) -> None:
        for stmt in self.module.body:
            self.top = stmt  # positions are later resolved per top-level statement
            self._stmt(stmt)
        # Functions no module-level code called: callers before callees, so that a callee is first
        # analysed at a call, in its caller's context, whichever order the file defines them in.
        for fn in self._callers_first([f for f in self.functions if f.analyses == 0]):
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
                          self.sinks, self.escapes, self.cut_from, self.function_facts,
                          self.uses, self.evidences, self.unpacked_from, self.border_results):
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

    def star_name(self, name: str) -> Optional[str]:
        """"*.Net" for a name no statement of the file binds, when a star import may bind it."""
        if self.star_imports and name not in _BUILTINS:
            return f"*.{name}"
        return None

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
            v = self._eval(s.value)
            if isinstance(s.value, cst.Call):
                self._statement_call(s.value)
            if self.cell_starts and self.function is None and self._displayed(s):
                self._sink(s.value, [v], DISPLAYED)
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
                v = self.added_to_parameter(s.value, self._eval(s.value))  # (`return total + loss`)
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

    def _displayed(self, s: cst.Expr) -> bool:
        """Is `s` the expression a notebook shows as its cell's output: the last statement of a code
        cell, at the top level, with no `;` after it (IPython displays its value, a look at it)?"""
        if self._cell_lasts is None:
            self._cell_lasts = set()
            module, line = self.module, 1 + len(self.module.header)
            starts = []
            for top in module.body:
                line += len(getattr(top, "leading_lines", ()))
                starts.append((top, max((k for k, at in enumerate(self.cell_starts) if at <= line), default=0)))
                line += module.code_for_node(top).count("\n") - len(getattr(top, "leading_lines", ()))
            for (top, cell), (_, following) in zip(starts, [*starts[1:], (None, -1)]):
                if cell != following:
                    self._cell_lasts.add(id(top))
        stmt = self.statement
        return (id(stmt) in self._cell_lasts and isinstance(stmt, cst.SimpleStatementLine) and stmt.body[-1] is s
                and not isinstance(s.semicolon, cst.Semicolon))

    def _if(self, node: cst.If) -> None:
        self._eval(node.test)
        env = self.frame.scope.env
        before = dict(env)
        guard = self._tensor_guard(node.test)  # (name, is a tensor in the body?)
        # a name proved a tensor (a loss computed with a graph) takes only the branch where it is one: `if isinstance(value, torch.Tensor): value = value.clone()` keeps
        # the graph on every path that runs (the other branch is still walked, without the tensor)
        dead = (not guard[1]) if guard is not None and self._proved_tensor(guard[0]) else None
        depth = self._enter_branch(guard, body=True, rebind=True)
        self._block(node.body)
        del self.not_tensors[depth:]
        after_body = dict(env)
        env.clear()
        env.update(before)
        self._enter_branch(guard, body=False, rebind=True)
        if node.orelse is not None:
            if isinstance(node.orelse, cst.If):
                self._stmt(node.orelse)
            else:
                self._block(node.orelse.body)
        del self.not_tensors[depth:]
        if dead is False:  # the branches after the body do not run
            env.clear()
            env.update(after_body)
        elif dead is not True:  # (the body does not run: what the other branches bound stands)
            self._merge_env(after_body)

    def _proved_tensor(self, name: str) -> bool:
        """`name` holds a tensor on every path here: a 0-dim value computed with a graph (a loss, a
        `.mean()`). (Not any value taken for a tensor: the output of a model whose `forward()` the
        file does not show may be a tuple, as the guard itself may be asking.)"""
        b = self.lookup(name) if name.isidentifier() else None
        v = b.value if b is not None else None
        return v is not None and v.kind is Kind.TENSOR and v.has_graph and v.scalar and not v.guessed

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

    def _enter_branch(self, guard: Optional[tuple[str, bool]], body: bool, rebind: bool) -> int:
        """Enter the body (or the other branch) of a test that is a tensor guard (`_tensor_guard`): where
        the guard says its name is no tensor there, it is not one. An `if` statement also rebinds the
        name for its branch (`rebind`); a conditional expression cannot. Returns the depth of
        `not_tensors` to restore when leaving the branch."""
        depth = len(self.not_tensors)
        if guard is not None and guard[1] != body:
            if rebind:
                self._not_a_tensor(guard[0])
            else:
                self.not_tensors.append(guard[0])
        return depth

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
        literal = [n for n in names_in(node.target) if n not in self.loop_literals] \
            if isinstance(node.iter, (cst.Tuple, cst.List)) else []
        self.loop_literals.update((n, node.iter) for n in literal)

        def body():
            self._assign(node.target, self._element_of(it, node.iter), node.iter)
            self._block(node.body)

        self._loop(node, body)
        if over:
            self.loop_items.pop(node.target.value, None)
        for n in literal:
            del self.loop_literals[n]
        frozen = evidence.frozen_by(node)
        if frozen is not None:
            m = self.values.get(frozen, UNKNOWN)
            if isinstance(frozen, cst.Name) and self.function is not None:
                b = self.lookup(frozen.value)
                if b is not None and isinstance(b.node, cst.Param):
                    self.function.freezes.add(frozen.value)  # `def freeze(model): for p in ...`: the caller's model
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

    def _statement_call(self, call: cst.Call) -> None:
        # torch.set_grad_enabled(False) as a statement switches the mode for the rest.
        m = self.grad_mode_of(call)
        if m is not None and self._qualname(call.func) in K.SET_GRAD_ENABLED:
            self.frame.modes[-1] = m
            self.frame.mode_nodes[-1] = call

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
            mod = dotted(s.module) if s.module is not None else ""
            self.star_imports |= bool(s.relative) or mod.split(".", 1)[0] not in LIBRARIES
            return
        mod = dotted(s.module) if s.module is not None else ""
        mod = "." * len(s.relative) + (mod or "")
        for alias in s.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
            local = alias.asname.name.value if alias.asname is not None else name
            # `from . import utils` -> ".utils", `from .models import Net` -> ".models.Net"
            qualname = f"{mod}{name}" if mod.endswith(".") else f"{mod}.{name}" if mod else name
            self._bind(local, Value(qualname=qualname), s)

    def _annotation(self, ann: cst.BaseExpression) -> Value:
        q = self._qualname(ann) or ""
        # `x: torch.Tensor` is a hint, often wrong (configs pass lists): no kind claimed from it.
        if q in ("torch.nn.Module",):
            return Value(kind=Kind.MODULE, grad=Grad.NO, why=Evidence(ann, "annotated `nn.Module`"))
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.nn.") and not q.startswith("torch.nn.functional.") and last[:1].isupper() \
                and last not in K.MODULE_CONTAINERS and last not in K.PARAM_CONTAINERS and last != "Parameter":
            # `layer: nn.Linear`: a layer, with parameters unless torch's class has none
            loss = last.endswith("Loss")
            return Value(kind=Kind.MODULE, grad=Grad.NO, loss=loss, scalar=loss, layer=last,
                         parameterized=not loss and last not in K.PARAMETERLESS_MODULES,
                         why=Evidence(ann, f"annotated `nn.{last}`"))
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
        if type(node) is cst.Name:  # (exact types: see function_facts)
            b = self.lookup(node.value)
            if b is not None and not b.value.qualname and node.value in self.foreign_names and b.value.kind is Kind.CLASS:
                return self.foreign_names[node.value]  # a class joined from another file: as the file imports it
            return b.value.qualname if b is not None else self.star_name(node.value)
        if type(node) is cst.Attribute:
            base = self._qualname(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None


_BUILTINS = frozenset(dir(builtins))

# Expression node type -> the method that evaluates it (FlowAnalysis._eval).
FlowAnalysis._EVAL = {
    cst.Name: FlowAnalysis._e_name,
    cst.Attribute: FlowAnalysis._e_attribute,
    cst.Call: FlowAnalysis._e_call,
    cst.Subscript: FlowAnalysis._e_subscript,
    cst.BinaryOperation: FlowAnalysis._e_binary,
    cst.UnaryOperation: FlowAnalysis._e_unary,
    cst.BooleanOperation: FlowAnalysis._e_boolean,
    cst.Comparison: FlowAnalysis._e_compare,
    cst.IfExp: FlowAnalysis._e_ifexp,
    cst.Tuple: FlowAnalysis._e_sequence,
    cst.List: FlowAnalysis._e_sequence,
    cst.Set: FlowAnalysis._e_sequence,
    cst.Dict: FlowAnalysis._e_dict,
    cst.ListComp: FlowAnalysis._e_comprehension,
    cst.SetComp: FlowAnalysis._e_comprehension,
    cst.GeneratorExp: FlowAnalysis._e_comprehension,
    cst.DictComp: FlowAnalysis._e_comprehension,
    cst.Lambda: FlowAnalysis._e_lambda,
    cst.NamedExpr: FlowAnalysis._e_named,
    cst.Await: FlowAnalysis._e_await,
    cst.Yield: FlowAnalysis._e_yield,
    cst.Integer: FlowAnalysis._e_literal,
    cst.Float: FlowAnalysis._e_literal,
    cst.Imaginary: FlowAnalysis._e_literal,
    cst.SimpleString: FlowAnalysis._e_literal,
    cst.ConcatenatedString: FlowAnalysis._e_literal,
    cst.FormattedString: FlowAnalysis._e_fstring,
    cst.Ellipsis: FlowAnalysis._e_literal,
}

