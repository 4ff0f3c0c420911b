"""Functions and classes of the file: their records, the context each is analysed in, calls into
them, and what a call learns from them."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine import evidence
from gradguard.engine import knowledge as K
from gradguard.engine.bound import BUILTINS
from gradguard.engine.model import (
    CLASS_KEY,
    Backward,
    Binding,
    ClassInfo,
    Frame,
    FunctionInfo,
    GradMode,
    Scope,
    Store,
    param_token,
)
from gradguard.engine.values import (
    NUMBER,
    Evidence,
    UNKNOWN,
    Grad,
    Kind,
    Value,
    holds_graph,
    merge,
)
from gradguard.engine.walk import descendants


MAX_ANALYSES_PER_FUNCTION = 3


def _shape(v: Value) -> tuple:
    """What callers of a function read of its result: kind and grad, and each item's and entry's
    (`return loss, rewards`: the tuple's own grad can stay while the loss's changes)."""
    return (v.kind, v.grad, tuple((e.kind, e.grad) for e in v.elements or ()),
            tuple((k, e.kind, e.grad) for k, e in v.keyed), v.item and (v.item.kind, v.item.grad))


def _unsure(v: Value) -> Value:
    """`v` with "no graph" made unknown (what a grad mode decided), its items too."""
    if v.kind not in (Kind.TENSOR, Kind.CONTAINER, Kind.UNKNOWN):
        return v
    elements = tuple(_unsure(e) for e in v.elements) if v.elements is not None else None
    item = _unsure(v.item) if v.item is not None else None
    grad = Grad.UNKNOWN if v.grad is Grad.NO else v.grad
    return v.but(grad=grad, why=None if grad is not v.grad else v.why, elements=elements, item=item,
                 cuts=frozenset() if grad is not v.grad else v.cuts)


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


def _rebased(v: Value, bound: dict, args: dict) -> Value:
    """What a function returns, read as a summary in terms of its parameters: the graphs its last
    analysis was given through a parameter are, at this call, the graphs this call gives it
    (`generator_loss(gen_logits_fake)` returns a graph of this call's discriminator output, not of
    the call the body was walked for)."""
    mapping = []
    for name, was in bound.items():
        now = args.get(name)
        if now is not None and was is not now and was.origins:
            mapping.append((was.origins, now.origins))
    if not mapping:
        return v
    given = frozenset().union(*(old for old, _ in mapping))

    def rebase(x: Value) -> Value:
        if not x.origins & given and x.elements is None and x.item is None and not x.keyed:
            return x
        origins = x.origins - given
        for old, new in mapping:
            if x.origins & old:
                origins |= new
        return x.but(
            origins=frozenset(origins),
            elements=tuple(rebase(e) for e in x.elements) if x.elements is not None else None,
            item=rebase(x.item) if x.item is not None else None,
            keyed=tuple((k, rebase(e)) for k, e in x.keyed),
        )

    return rebase(v)


def _default_holds(param: cst.Param, fn: FunctionInfo) -> bool:
    """Does a parameter no call passed hold its default, a Python number? A number or bool
    default (`weight=1.0`) says what the parameter is; `None` or a string only where the file's
    own calls all leave it out (a caller elsewhere may pass `hidden=h`)."""
    default = param.default
    if isinstance(default, cst.UnaryOperation):
        default = default.expression
    if isinstance(default, (cst.Integer, cst.Float)) or (isinstance(default, cst.Name) and default.value in ("True", "False")):
        return True
    return fn.call_sites > 0 and (isinstance(default, cst.SimpleString) or (
        isinstance(default, cst.Name) and default.value == "None"))


class Functions:
    """Definitions, calls of the file's own functions, and their (re-)analysis."""

    def _callers_first(self, pending: list) -> list:
        """`pending` ordered so that a function another one mentions (calls, or passes as a callback)
        comes after every function that mentions it: it is then first analysed at a call, with its
        caller's arguments and grad mode. Mutual mentions (recursion) keep definition order."""
        if len(pending) < 2:
            return pending
        mentions = {fn: self.facts_of(fn.node).body_names for fn in pending}  # calls, callbacks
        names = {fn.name for fn in pending}
        callers: dict = {fn: [] for fn in pending}
        for fn, said in mentions.items():
            for name in said & names:
                for callee in pending:
                    if callee.name == name and callee is not fn:
                        callers[callee].append(fn)
        ordered, placed = [], set()

        def place(fn, visiting):
            if fn in placed or fn in visiting:
                return
            visiting.add(fn)
            for caller in callers[fn]:
                place(caller, visiting)
            visiting.discard(fn)
            if fn not in placed:
                placed.add(fn)
                ordered.append(fn)

        # Constructors first: an instance's attributes (`self.fc = nn.Linear(...)`) are set before
        # any method runs.
        for fn in sorted(pending, key=lambda f: f.cls is None or f.name != "__init__"):
            place(fn, set())
        return ordered

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
        test_case, foreign = False, False
        for arg, base in zip(node.bases, bases):
            q = base.qualname or ""
            if base.kind is Kind.CLASS and base.cls is None and base.item is not None:
                # A class from another file the type layer knows: an nn.Module subclass, or not.
                if base.item.kind is Kind.MODULE:
                    is_module, external = True, True
                else:
                    unknown = True
            elif q.startswith(("unittest.", "absl.testing.", "torch.testing.")) and q.endswith("TestCase"):
                test_case = True
            elif base.kind is Kind.CLASS and base.cls is not None and base.cls.test_case:
                test_case = True
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
                # (a builtin base - `object`, `dict` - is no module, whatever the class sets on itself)
                foreign |= not (isinstance(arg.value, cst.Name) and arg.value.value in BUILTINS)
        info = ClassInfo(
            node.name.value,
            node,
            is_module,
            parameterized=external or parameterized_base or self._init_assigns_state(node),
            scope=self.frame.scope,
            lightning=lightning,
            unknown_base=unknown,
            acts_as_module=foreign and evidence.acts_as_module(node),
            test_case=test_case,
            bases=tuple(b.cls for b in bases if b.kind is Kind.CLASS and isinstance(b.cls, ClassInfo)),
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
        if node in self.foreign:  # another file's class, joined: the import it stands for names it still
            b = self.lookup(node.name.value)
            if b is not None and b.value.qualname:
                self.foreign_names[node.name.value] = b.value.qualname
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
            fn.callers[self.function] = None
        else:
            fn.called_at_top = True
        fn.call_modes.add(mode)
        fn.call_sites += 1
        if mode is GradMode.OFF and fn.off_call is None:
            fn.off_call = (call, self.frame.mode_nodes[-1])
        self._give(fn, params)
        if fn.in_progress:
            return fn.returns
        context = self._context_of(fn)
        if fn.analyses == 0:
            self._analyse(fn, (call, self.function))
        elif context != fn.context and fn.analyses < MAX_ANALYSES_PER_FUNCTION:
            self._analyse(fn, (call, self.function))  # now, not later: this call reads what the new context returns
        if fn.cls is not None and self.function is not None and fn.cls is self.function.cls:
            self._forget_own_attributes()  # `self.reset()` may rebind what this method assigned
        self._kept_through(fn, call, args, bound_self)
        self._backwards_through(fn, call)
        if fn.freezes:  # `freeze_model(alex)`: the model given is frozen after the call
            by_name = self._arguments(fn, args, bound_self)
            for name in fn.freezes:
                a, v = by_name.get(name, (None, UNKNOWN))
                if a is not None and isinstance(a.value, cst.Name) and v.kind is Kind.MODULE:
                    self._rebind_mutated(a.value.value, v.but(frozen=True))
        if fn.makes_graph and self.function is not None:
            self.function.makes_graph = True
        returns = _rebased(fn.returns, fn.bound, params)
        if returns.grad is Grad.UNKNOWN and mode is GradMode.ON and returns.kind is Kind.TENSOR:
            returns = self._computed_from_graph(fn, call, params, returns)
        if fn.context is not None and mode is not fn.context[0]:
            # The body was last walked in another grad mode (a loss function called under no_grad
            # for evaluation, then to train - LLMs-from-scratch's DPO): the graphs it returned
            # there say nothing of this call's, until it is walked again.
            return _unsure(returns)
        # Each call makes its own graph, like `vae(x)`'s (the function's own nodes are every call's: they
        # say nothing of where this call's outputs go): a graph born inside from what it reads, not from
        # what it was given (a hand-written model, `def net(X): return X @ W + b`), and a model's own
        # method (`vae.encode(x)`, `model.pi(s)`), which runs the model.
        # (an argument of unknown kind - a batch from a loader - gives it no graph it is known to carry)
        own = not any(v.has_graph for _, v in args) if fn.cls is None else \
            fn.cls.module_like and returns.kind is Kind.TENSOR
        if own and returns.has_graph and mode is GradMode.ON:
            returns = returns.but(origins=returns.origins | {call})
        return returns

    def _computed_from_graph(self, fn: FunctionInfo, call: cst.Call, params: dict, returns: Value) -> Value:
        """What a straight-line tensor function returns at this call, when its analysis (with what every
        call gives it joined: no graph from one, a graph from another) could not say: computed by known
        torch operations from a parameter given a graph here, it carries that graph (`def softmax(X):
        X_exp = X.exp(); return X_exp / X_exp.sum(1, keepdim=True)`, first called on a plain tensor to
        show it, then by a hand-written model). An operation that never carries a graph (`argmax`,
        `.detach()`, `.item()`) says so whatever its input; an unknown callable, a branch, a loop, a
        grad-mode block, a store or a backward in the body leaves the result unknown."""
        given = [p for p, v in params.items() if v.has_graph and p in fn.bound and fn.bound[p].origins & returns.origins]
        if not given or fn.backwards or fn.kept or fn.yields is not None:
            return returns
        body = fn.node.body
        if not isinstance(body, cst.IndentedBlock) or not all(isinstance(st, cst.SimpleStatementLine) for st in body.body):
            return returns
        for st in body.body:
            for small in st.body:
                if not isinstance(small, (cst.Assign, cst.Return, cst.Expr)) or isinstance(small, cst.Expr) and not (
                        isinstance(small.value, cst.SimpleString) and st is body.body[0]):
                    return returns  # (a docstring only)
        for node in descendants(body):
            if isinstance(node, (cst.Lambda, cst.GeneratorExp, cst.ListComp, cst.DictComp, cst.SetComp)):
                return returns
            if isinstance(node, cst.Call) and self.values.get(node, UNKNOWN).kind is not Kind.TENSOR:
                return returns  # a call of something that is not a torch operation on tensors
        why = Evidence(call, f"from `{self._short(call)}`, computed from the graph given to `{given[0]}`")
        return returns.but(grad=Grad.YES, why=why)

    def _give(self, fn: FunctionInfo, params: dict) -> None:
        """What this call gives `fn`'s parameters, joined with what the other calls give: each caller's
        from its latest analysis only (a forward first walked on its own, its input unknown, and then
        for its model's call, with a graph: the helper it calls is given the graph, not "unknown")."""
        caller = self.function
        stamp = caller.analyses if caller is not None else 0
        mine = fn.given.get(caller)
        if mine is None or mine[0] != stamp:
            mine = fn.given[caller] = (stamp, {})
        for name, v in params.items():
            old = mine[1].get(name)
            mine[1][name] = v if old is None else merge(old, v)
        joined: dict = {}
        for _, values in fn.given.values():
            for name, v in values.items():
                old = joined.get(name)
                joined[name] = v if old is None else merge(old, v)
        fn.param_values = joined

    def _backwards_through(self, fn: FunctionInfo, call: cst.Call) -> None:
        """What `fn` back-propagates, it back-propagates at this call, in the caller's loops: a loop
        that calls `one_step(net, opt, x, y)` is a training loop, and the loss it returns was already
        back-propagated (the summary of a call, applied where it is made)."""
        for b in fn.backwards:
            self._record_backward(Backward(call, b.origins, self.frame.loops, self.function, b.value, through=fn,
                                           real=b.at))

    def _context_of(self, fn: FunctionInfo) -> tuple:
        if fn.decorated_mode is not None:
            mode = fn.decorated_mode
        elif not fn.call_modes:
            outside = self.outside_of(fn)  # the other files' calls, where they agree
            mode = outside.mode if outside is not None and outside.mode is not None else GradMode.ON
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
        # `*args` and `**kwargs` bind the rest: a tuple of the extra positional values (its length
        # unknown where the call unpacks `*xs`), a dict of the extra keywords
        if isinstance(p.star_arg, cst.Param):
            extra = pos[len(names):]
            unpacked = [v for a, v in rest if a.star == "*"]
            items = extra + [v.item or UNKNOWN if v.kind is Kind.CONTAINER else UNKNOWN for v in unpacked]
            values[p.star_arg.name.value] = self._container(items, None if unpacked else tuple(extra))
        if isinstance(p.star_kwarg, cst.Param):
            extra_kw = [(a.keyword.value, v) for a, v in rest if a.keyword is not None and a.keyword.value not in kw_names]
            if not any(a.star == "**" for a, _ in rest):
                values[p.star_kwarg.name.value] = self._container([v for _, v in extra_kw]).but(keyed=tuple(extra_kw))
        return values

    def _analyse(self, fn: FunctionInfo, at: Optional[tuple] = None) -> None:
        """Walk the body of `fn` in its current context, replacing earlier results; `at` is the
        (call, caller) it is walked for, the caller's walk still open."""
        if fn.analyses:
            self._drop({fn})
        fn.analyses += 1
        fn.walked_at = at
        fn.dirty = False
        fn.backwards = []
        fn.makes_graph = False
        fn.kept = []
        fn.freezes = set()
        fn.bound = {}
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
            elif (told := self.told_param(fn, param, None if any(param is k for k in p.kwonly_params) else
                                          i - (self_value is not None))) is not None:
                v = told  # what every call in the other files of the project passes
            elif param.annotation is not None and not name[:1].isupper():
                # `Model: nn.Module` named like a class holds one (`model = Model(envs)` constructs).
                v = self._annotation(param.annotation.annotation)
            elif _default_holds(param, fn):
                v = NUMBER
            else:
                v = UNKNOWN
            # (its identity names the parameter: a sum the function returns of it - `total = total + loss`,
            # `total += loss` - carries it, and a caller that passes its running sum reads the call as an addition)
            scope.env[name] = Binding(v, (), param, token=param_token(fn, name))
            fn.bound[name] = v
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                scope.env[star.name.value] = Binding(fn.param_values.get(star.name.value, UNKNOWN), (), star)
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
        fn.yields = None
        try:
            self._block(fn.node.body)
            for inner in [f for f in self.functions if f.scope is scope and f.analyses == 0]:
                self._analyse(inner)
        finally:
            fn.in_progress = False
            self.frame = outer
            self.top = outer_top
            self.statement = outer_statement
        if fn.yields is not None:
            # calling a generator function gives an iterator of what it yields (`for probs in stream(...)`)
            fn.returns = self._container([fn.yields])
        elif not fn.returned:
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
        self.sinks = [u for u in self.sinks if u.function not in fns]
        self.escapes = [u for u in self.escapes if u.function not in fns]
        if self.outgoing:
            self.outgoing = [c for c in self.outgoing if c[0] not in fns]
        for cb in self.on_drop:
            cb(fns)

    def _kept_by_call(self, fn: FunctionInfo, call: cst.Call, args: list, bound_self: Optional[Value]) -> None:
        """Stores a call in a loop makes through a function that keeps its argument; outside a loop,
        what this function keeps through it (its summary: `meter.update(loss)` in a helper that was
        given `meter` keeps `loss` in what its caller passed)."""
        if not any(v.has_graph for _, v in args) or not self._keeps(fn):
            return
        if not self.frame.loops or all(self._sorting_arguments(v) for _, v in args if v.has_graph):
            # (in a loop over what this function was given - `for k, v in stats.items(): meters[k].update(v)` -
            # what the call keeps is this function's summary too, applied in each caller's loop)
            self._keeps_through(fn, call, args, bound_self)
            return
        if isinstance(call.func, cst.Attribute) and self.outlives_iteration(call.func.value) is None:
            return  # `Meter().update(loss)` on an object of this iteration
        by_name = self._arguments(fn, args, bound_self)
        params = set(evidence.named_params(fn.node))
        for name, (where, kept_at) in fn.keeps.items():
            a, v = by_name.get(name, (None, UNKNOWN))
            if a is None or not v.has_graph:
                continue
            root = where.split("[", 1)[0].split(".", 1)[0]
            if root in params and root not in ("self", "cls"):
                # kept in a container the caller passed: the caller's place, if it outlives the iteration
                holder = by_name.get(root, (None, None))[0]
                place = self.outlives_iteration(holder.value) if holder is not None else None
                if place is None:
                    continue
                where, token = place
            else:
                token = self._place_token(fn, where)
                if root == "self" and isinstance(call.func, cst.Attribute):
                    where = self.code_for(call.func.value) + where[len("self"):]  # `meter.sum`, not `self.sum`
            s = Store(a.value, v, where, token, self.frame.loops[-1], "append", self.function, loops=self.frame.loops,
                      via=fn.name, kept_at=kept_at)
            self.stores.append(s)
            for hook in self.hooks.get("store", ()):
                hook(s)

    def _keeps_through(self, fn: FunctionInfo, call: cst.Call, args: list, bound_self: Optional[Value]) -> None:
        """_kept_by_call outside any loop: each kept argument becomes part of this function's summary,
        kept on the call's receiver (`meter`, suffix `.sum`) or in the container the caller passed."""
        by_name = self._arguments(fn, args, bound_self)
        for name, (where, kept_at) in fn.keeps.items():
            a, v = by_name.get(name, (None, UNKNOWN))
            if a is None or not v.has_graph:
                continue
            root, _, rest = where.partition(".")
            if root == "self" and rest and isinstance(call.func, cst.Attribute):
                # (the receiver's path below its root: `meters[key].update(v)` keeps `v` in `meters[key].sum`)
                holder = call.func.value
                self._keep_past_call(holder, a.value, v, "append", kept_at, self._below_root(holder) + "." + rest)
            elif root in by_name and root not in ("self", "cls"):
                self._keep_past_call(by_name[root][0].value, a.value, v, "append", kept_at)

    def _kept_through(self, fn: FunctionInfo, call: cst.Call, args: list, bound_self: Optional[Value]) -> None:
        """Apply what `fn` keeps past a call (FunctionInfo.kept) at this call: a store in this loop,
        if the place outlives its iteration, or, outside any loop, part of this function's summary."""
        if not fn.kept:
            return
        by_name = self._arguments(fn, args, bound_self)
        for kept in fn.kept:
            if kept.how == "assign":
                continue  # `self.alpha = self.log_alpha.exp()` each call: one graph at a time, not a pile
            kind, name = kept.holder
            if kind == "param":
                holder = by_name.get(name, (None, None))[0]
                target = holder.value if holder is not None else None
            elif kind == "self":  # on the object the method was called on: the place is an attribute of it
                # (`as_dict(self.stats)["out"].collect(loss=loss)` is called on `self.stats`: handed on)
                target = self.handed_on(call.func.value) if isinstance(call.func, cst.Attribute) else None
            else:
                # (the global itself; or, kept by a method of an object the global holds - `meters[key].update(v)`
                # summing `v` into `meters[key].sum` - the global, with that path as the suffix)
                target = None if not self.lookup(name) else kept.kept_at if isinstance(kept.kept_at, cst.Name) else (
                    cst.Name(name) if kept.suffix else None)
            if target is None or not isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
                continue
            given = by_name.get(kept.stored.value) if isinstance(kept.stored, cst.Name) else None
            if given is not None and not holds_graph(given[1]):
                continue  # a parameter kept as it is, given no graph here (`output` after its loss was detached)
            # the argument kept, if one is (`meter.update(loss)` keeps `loss` as `self.sum += val * n`)
            graphs = {o for o in kept.value.origins if isinstance(o, cst.CSTNode)}
            stored = next((a.value for a, v in args if v is kept.value or graphs and graphs <= v.origins), kept.stored)
            suffix = (f".{name}" if kind == "self" else "") + kept.suffix
            if kind == "param" and kept.how in ("append", "item") and not kept.suffix:
                # the caller's container now holds it (`torch.stack(losses)` after `extracted(losses, ...)`)
                self._add_item(target, given[1] if given is not None else kept.value)
            if not self.frame.loops:
                self._keep_past_call(target, stored, kept.value, kept.how, kept.kept_at, suffix)
                continue
            if self._sorting_arguments(given[1] if given is not None else kept.value):
                # (in a loop over what this function was given, one call's work: its summary too)
                below = self._below_root(target) if kind == "self" else ""
                self._keep_past_call(target, stored, kept.value, kept.how, kept.kept_at, below + suffix)
                continue
            place = self.outlives_iteration(target) if kind != "self" or not (
                isinstance(target, cst.Name) and target.value == "self") else self.outlives_iteration(target)
            if place is None:
                continue
            where, token = place
            if suffix:
                where, token = f"{where}{suffix}", ("attr", token, suffix)
            if self.reset_each_iteration(where):
                continue  # `reporter.observation = {}` first in every iteration: one graph at a time
            # a place of this scope (`norms` made afresh each call of the caller) lives as a local does
            base, _, local = self._root(target)
            s = Store(stored, kept.value, where, token, self.frame.loops[-1], kept.how, self.function, loops=self.frame.loops,
                      via=fn.name, kept_at=kept.kept_at, made_in=self._made_in(target),
                      local=local and isinstance(base, cst.Name) or self._fresh_attribute(base))
            self.stores.append(s)
            for hook in self.hooks.get("store", ()):
                hook(s)

    def _below_root(self, holder: cst.BaseExpression) -> str:
        """`[key]` of `meters[key]`: the path from a place's root to the object a method is called on."""
        base = self._root(holder)[0]
        return self.code_for(holder)[len(self.code_for(base)):] if base is not holder else ""

    def _keeps(self, fn: FunctionInfo) -> dict:
        """parameter -> (where, the store) `fn` keeps it past the call (computed on first need)."""
        if fn.keeps is None:
            fn.keeps = {name: (self.code_for(t), t) for name, t in evidence.kept_params(fn.node).items()}
        return fn.keeps

    def _arguments(self, fn: FunctionInfo, args: list, bound_self: Optional[Value]) -> dict:
        """parameter name -> (argument, value) of a call of `fn`."""
        p = fn.node.params
        names = [x.name.value for x in (*p.posonly_params, *p.params)]
        if bound_self is not None:
            names = names[1:]
        by_name = dict(zip(names, [(a, v) for a, v in args if a.keyword is None and not a.star]))
        by_name.update({a.keyword.value: (a, v) for a, v in args if a.keyword is not None})
        return by_name

    def _place_token(self, fn: FunctionInfo, where: str) -> object:
        """The identity of the place `fn` keeps things in, as outlives_iteration() names it
        (a later backward that reads the place excuses the store)."""
        root = where.split("[", 1)[0].split(".")
        if root[0] == "self" and len(root) > 1:
            return ("attr", fn.cls, root[1])
        b = self.lookup(root[0])
        return b.token if b is not None else ("kept", fn, where)
