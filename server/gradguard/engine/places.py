"""Where values go: names bound, attributes and items written, and the stores that outlive a
loop iteration (with the backwards that may excuse them)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine.evidence import dotted
from gradguard.engine.handing import argument
from gradguard.engine.model import Binding, ClassInfo, FunctionInfo, GradMode, Kept, Store, param_token
from gradguard.engine.scratch import scratch_attributes
from gradguard.engine.walk import descendants
from gradguard.engine.syntax import SELF_PREFIX, is_self_attribute, literal_bool, literal_key, place_key
from gradguard.engine.values import (
    UNKNOWN,
    Evidence,
    Grad,
    Kind,
    Value,
    all_origins,
    join_grad,
    merge,
    reach,
)

_EMPTY_CONTAINERS = frozenset({"list", "dict", "set", "collections.OrderedDict", "OrderedDict",
                               "collections.deque", "deque", "collections.defaultdict", "defaultdict"})

# Builtins that add values item by item, making nothing of their own: `tuple(map(sum, zip(a, b)))`.
_ITEMWISE = frozenset(("tuple", "list", "map", "zip", "sum"))


def _itemwise(e: cst.BaseExpression, lookup, leaves: list) -> bool:
    """Is `e` made of Python's item-by-item builtins over names (appended to `leaves`)? (A function of
    the module, not a closure: a recursive closure is a reference cycle.)"""
    if isinstance(e, (cst.Name, cst.Attribute)):
        leaves.append(e)
        return True
    if not (isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value in _ITEMWISE
            and lookup(e.func.value) is None and all(not a.keyword and not a.star for a in e.args)):
        return False
    args = [a.value for a in e.args]
    if e.func.value == "map":  # `map(sum, pairs)`: the builtin it applies is no operand
        if len(args) != 2 or not (isinstance(args[0], cst.Name) and args[0].value == "sum" and lookup("sum") is None):
            return False
        args = args[1:]
    return all(_itemwise(a, lookup, leaves) for a in args)


def _joined(old: Optional[Value], v: Value) -> Value:
    """An attribute assigned in two places: a number first (`self.h = None`, `= 0`) gives way to what follows."""
    return v if old is None or old.kind is Kind.NUMBER and old.grad is Grad.NO and v.kind is not Kind.NUMBER else merge(old, v)


def _same_place(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """The same name, or the same `self.x`."""
    key = place_key(a)
    return key is not None and key == place_key(b)



def _starts_afresh(rhs) -> bool:
    """`{}`, `[]`, `dict()`, `defaultdict(list)`, `0`, `None`: a place (re)started empty."""
    if isinstance(rhs, (cst.List, cst.Dict)):
        return not rhs.elements
    if isinstance(rhs, (cst.Integer, cst.Float)) or isinstance(rhs, cst.Name) and rhs.value == "None":
        return True  # `self.loss = 0` before the decoding steps add to it
    func = dotted(rhs.func) if isinstance(rhs, cst.Call) else None  # `dict()`, `defaultdict(list)`: no items given
    return func in _EMPTY_CONTAINERS and (not rhs.args or func.endswith("defaultdict"))

class Places:
    """Assignment and stores."""

    def place_binding(self, node: cst.BaseExpression) -> Optional[Binding]:
        """What a place reads here: a name's binding, or `self.x` as this method last assigned it (a
        method's `self.x` is a place like a local until a call of another method may change it)."""
        if isinstance(node, cst.Name):
            return self.lookup(node.value)
        if self.function is not None and is_self_attribute(node):
            return self.frame.scope.env.get(SELF_PREFIX + node.attr.value)
        return None

    def _root(self, target: cst.BaseExpression) -> tuple:
        """The root of a place (`losses` of `losses[k].items`, `self.<attr>`), the binding of a root
        name, and whether this scope bound it."""
        base = target
        while isinstance(base, (cst.Subscript, cst.Attribute)) and not is_self_attribute(base):
            base = base.value
        b = self.lookup(base.value) if isinstance(base, cst.Name) else None
        return base, b, b is not None and any(v is b for v in self.frame.scope.env.values())

    def outlives_iteration(self, target: cst.BaseExpression) -> Optional[tuple[str, object]]:
        """If `target` (a name, attribute or item) lives past the innermost loop's
        iteration, return (its code, an identity token); else None."""
        if not self.frame.loops:
            return None
        if self.frame.reset_in_loop and not isinstance(target, cst.Name) and self.reset_each_iteration(self.code_for(target)):
            return None  # made afresh first in every iteration (`reporter.observation = {}`)
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

    # --------------------------------------------------------------- binding
    def _bind(self, name_node, value: Value, node=None) -> None:
        name = name_node.value if isinstance(name_node, cst.Name) else name_node
        self.frame.scope.env[name] = Binding(value, self.frame.loops, node or name_node)

    def _ended_by_unpacking(self, elems: list, v: Value) -> None:
        """`_, preds = torch.max(out, 1)`: the indices of a tuple result computed from a graph (an item the
        call itself made with no grad), bound to a name, end that graph as `.argmax()` does - the
        unpacked form of `out.max(1)[1]` (a sink; the values bound beside them are followed as usual)."""
        if not v.has_graph:
            return
        for e, part in zip(elems, v.elements):
            if part.grad is not Grad.NO or part.why is None or not isinstance(e, cst.Name) or e.value == "_":
                continue
            made = self.values.get(part.why.node)
            if made is not None and made.elements is v.elements and isinstance(part.why.node, cst.Call):
                self._sink(e, [v], f"the indices of `{self._short(part.why.node.func)}()`")

    def _assign(self, target: cst.BaseExpression, v: Value, rhs: Optional[cst.BaseExpression]) -> None:
        t = type(target)
        if t is cst.Name:
            if self._maybe_reassign_store(target, v, rhs):
                return
            self._bind(target, self.added_to_parameter(rhs, v), rhs)
        elif t in (cst.Tuple, cst.List):
            elems = [e.value for e in target.elements]
            if v.elements is not None and len(v.elements) == len(elems):
                # The tuple's own identity (the list it was read from: `for r, prob in self.data`)
                # goes to each part, as a loop's element carries its container's.
                own = v.origins.difference(*(e.origins for e in v.elements))
                parts = [e.but(origins=e.origins | own) if own and e.grad is not Grad.NO else e for e in v.elements]
                self._ended_by_unpacking(elems, v)
            elif v.kind is Kind.CONTAINER and v.item is not None:
                parts = [v.item] * len(elems)
            elif v.kind is Kind.TENSOR and v.grad is not Grad.UNKNOWN:
                parts = [v.but(elements=None, alias=None, guessed=True)] * len(elems)  # model outputs: (out, hidden)
            elif v.kind is Kind.UNKNOWN and v.grad is Grad.NO and v.why is not None:
                parts = [Value(grad=Grad.NO, why=v.why)] * len(elems)  # unpacked from a call under no_grad
            else:
                parts = [UNKNOWN] * len(elems)
            for i, (e, part) in enumerate(zip(elems, parts)):
                if isinstance(e, cst.StarredElement):
                    e = e.value
                elif type(rhs) is cst.Call and type(e) is cst.Name and part.kind is Kind.UNKNOWN:
                    self.unpacked_from[e] = (rhs, i)
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
            if is_self_attribute(target) and self.function is not None and self._maybe_reassign_store(target, v, rhs):
                return  # `self.total = self.total + loss`
            if v.has_graph and rhs is not None and not self._fresh_attribute(target):
                # (a scratch or fresh `self.x` is rebound like a local name: the previous graph is dropped)
                v = self._slot(self._store(target, rhs, v, "assign"), v)
            self._note_fresh_attribute(target, rhs)
            self._note_reset_in_loop(target, rhs)
            self._set_attribute(target, v)
            if is_self_attribute(target) and self.function is not None:
                # what this method reads of `self.x` from here on (merged over branches like a name); the
                # class keeps every method's assignments merged for the others
                self.frame.scope.env[SELF_PREFIX + target.attr.value] = Binding(v, self.frame.loops, rhs or target)
        elif t is cst.Subscript:
            base = self._eval(target.value)
            for el in target.slice:
                if isinstance(el.slice, cst.Index):
                    self._eval(el.slice.value)
            key = literal_key(target)
            if base.kind is Kind.TENSOR and isinstance(key, str) and isinstance(target.value, cst.Name):
                # A string key: not a tensor but a model's output dict. `output["loss"] = output["loss"].detach()`
                # drops the graph we knew of; what its other items hold is not known.
                if base.has_graph and v.grad is Grad.NO:
                    # unknown for a reason: the backward that told of its graph came before the detach
                    self._rebind_mutated(target.value.value, base.but(
                        grad=Grad.UNKNOWN, origins=frozenset(), why=Evidence(target, f"`{key}` replaced by a value with no graph")))
                return
            if base.kind is Kind.TENSOR:  # `outs[t] = h` writes into the buffer: it now carries h's graph
                root = target.value
                while isinstance(root, cst.Subscript):  # `fx2[i][j] = f(x[i][j])` writes into `fx2` too
                    root = root.value
                if isinstance(root, cst.Name):
                    whole = self.values.get(root, base) if root is not target.value else base
                    self._rebind_mutated(root.value, self._written(whole, v, self.token_of(root)))
                return
            if v.has_graph and rhs is not None:
                # `state["y_pred"] = out` overwrites one slot each iteration, like `self.out = out`;
                # `buf[i] = out` fills a new one.
                v = self._slot(self._store(target, rhs, v, "item" if key is None else "assign"), v)
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
        self._mutate_own_attribute(target, v)

    def _mutate_own_attribute(self, target: cst.Attribute, v: Value) -> None:
        """`self.losses.append(x)`, `self.loss.requires_grad = True`: the object this method bound to
        `self.x` changed in place, and its later reads here see it."""
        b = self.place_binding(target)
        if b is not None:
            b.value = v

    def _set_attribute(self, target: cst.Attribute, v: Value) -> None:
        obj = self.values.get(target.value, UNKNOWN)
        if obj.frozen and isinstance(target.value, cst.Name):
            # `model.fc = nn.Linear(...)` after freezing the backbone: a part that trains again
            self._rebind_mutated(target.value.value, obj.but(frozen=False))
        info = obj.cls if obj.kind in (Kind.OBJECT, Kind.MODULE) and isinstance(obj.cls, ClassInfo) else None
        if info is not None:
            name = target.attr.value
            fn = self.function
            own = fn is not None and fn.cls is info and is_self_attribute(target)
            # who assigned it: a method of the class (one entry per method), or code outside it (None)
            source, analysis = (fn, fn.analyses) if own else (None, 0)
            sources = info.attr_sources.setdefault(name, {})
            if name in info.attrs and not sources:
                sources[None] = (0, info.attrs[name])  # set before sources were kept (a container's append)
            seen = sources.get(source)
            sources[source] = (analysis, _joined(seen[1], v) if seen is not None and seen[0] == analysis else v)
            values = [x for _, x in sources.values()]
            joined = values[0]
            for x in values[1:]:
                joined = _joined(joined, x)
            info.attrs[name] = joined

    def _own_attribute(self, node: cst.Attribute) -> Optional[Value]:
        """`self.x` as this method last assigned it, if it did."""
        b = self.place_binding(node)
        return b.value if b is not None else None

    def _forget_own_attributes(self) -> None:
        env = self.frame.scope.env
        for key in [k for k in env if k.startswith(SELF_PREFIX)]:
            del env[key]

    def _note_fresh_attribute(self, target: cst.Attribute, rhs) -> None:
        """`self.norms = {}` or `self.loss = 0` as a statement of the method's own body (not under an `if`
        or a loop): every call starts it afresh, so what the call stores there is replaced by the next
        call - it lives like a local of the call, not like a pile on the object."""
        fn = self.function
        if not (is_self_attribute(target) and fn is not None):
            return
        name = target.attr.value
        fresh = _starts_afresh(rhs)
        top = any(isinstance(st, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Assign) and small.value is rhs for small in st.body) for st in fn.node.body.body)
        if fresh and top and not self.frame.loops:
            self.frame.fresh_attrs.add(name)
        else:
            self.frame.fresh_attrs.discard(name)

    def _note_reset_in_loop(self, target: cst.Attribute, rhs) -> None:
        """`reporter.observation = {}` as a statement of a loop's own body (not under an `if`): every
        iteration starts the place afresh, so what the iteration stores there (`reporter.report(...)`
        writing `self.observation[key]`) is dropped by the next one - one graph at a time, not a pile."""
        code = self.code_for(target)
        loop = self.frame.loops[-1] if self.frame.loops else None
        body = getattr(getattr(loop, "body", None), "body", ())
        if loop is not None and _starts_afresh(rhs) and any(s is self.statement for s in body):
            self.frame.reset_in_loop[code] = loop
        else:
            self.frame.reset_in_loop.pop(code, None)

    def reset_each_iteration(self, where: str) -> bool:
        """Is the place `where` (`reporter.observation`, `reporter.observation["loss"]`) made afresh
        by every iteration of the innermost loop running (_note_reset_in_loop)?"""
        if not self.frame.loops or not self.frame.reset_in_loop:
            return False
        code = where.split("[", 1)[0]
        return self.frame.reset_in_loop.get(code) is self.frame.loops[-1]

    def _fresh_attribute(self, base: cst.BaseExpression) -> bool:
        """`self.x` made afresh by this call (`self.x = {}` at the top) or only this method's scratch
        (scratch.py): it lives like a local of the call."""
        if not is_self_attribute(base):
            return False
        if base.attr.value in self.frame.fresh_attrs:
            return True
        if self.function is None:
            return False
        if self.scratch is None:
            self.scratch = scratch_attributes(self.module)
        return base.attr.value in self.scratch.get(self.function.node, ())

    def _maybe_reassign_store(self, target: cst.BaseExpression, v: Value, rhs) -> bool:
        """`total = total + loss` (or `self.total = self.total + loss`) is `total += loss` written out:
        the same loop-carried place, now holding the graph; so is `total = loss if total is None else
        total + loss` (RecBole's first batch starts the sum), however handed on (`as_pair(total + loss)[0]`).
        Returns True if handled."""
        rhs = whole = self.handed_on(rhs) if rhs is not None else rhs
        if isinstance(rhs, cst.IfExp):
            rhs = next((b for b in (rhs.orelse, rhs.body) if isinstance(b, (cst.BinaryOperation, cst.Call))), None)
        if not (v.has_graph and self.frame.loops):
            return False
        pair = self._pure_combination(rhs, target)
        items = self._summed_items(rhs, target)
        summed = self._summed_by_call(rhs, target, v)
        if pair is not None:  # `total = accumulate(total, loss)`: a helper that only adds them
            rhs = whole = pair[1]
            operands = (pair,)
        elif summed is not None:  # `total = step(total, batch)`: a helper that returns `total + loss`
            operands = (summed,)
        elif items is not None:  # the whole sum is stored (a tuple of sums: no `.detach()` of one term fixes it)
            rhs = items[1]
            operands = (items,)
        elif isinstance(rhs, cst.BinaryOperation):
            operands = ((rhs.left, rhs.right), (rhs.right, rhs.left))
        else:
            return False
        for own, other in operands:
            if _same_place(own, target):
                ov = self.values.get(other, UNKNOWN)
                b = self.place_binding(target)
                if not ov.has_graph or b is None:
                    return False
                # The stored expression: the added term, or the whole conditional (each branch is detached)
                store = self._store(target, other if whole is rhs else whole, ov, "accumulate")
                # (the place's identity: a backward of what is read back from it - `self.loss.backward()` after
                # callbacks added to `self.loss` - needs what it keeps)
                new = v.but(origins=v.origins | {b.token} | ({store.token} if store is not None else set()))
                if isinstance(target, cst.Name):
                    self._rebind_mutated(target.value, new)
                else:
                    self._set_attribute(target, new)
                    self._mutate_own_attribute(target, new)
                return True
        return False

    def _summed_by_call(self, rhs, target: cst.BaseExpression, v: Value):
        """`total = step(total, batch)`, a function of the file that returns what it was given for `total`
        added to (`total = total + loss; return total`: the value carries its parameter's token,
        model.param_token): (the argument, the call) - the call adds a graph to the running sum."""
        if not isinstance(rhs, cst.Call):
            return None
        fv = self.values.get(rhs.func, UNKNOWN)
        fn = fv.cls if fv.kind is Kind.FUNCTION else None
        if not isinstance(fn, FunctionInfo):
            return None
        bound = fn.cls is not None and isinstance(rhs.func, cst.Attribute)
        for o in all_origins(v):
            if type(o) is tuple and len(o) == 3 and o == param_token(fn, o[2]):
                own = argument(fn.node, rhs, o[2], (), bound=bound)
                if own is not None and _same_place(own, target):
                    return own, rhs
        return None

    def added_to_parameter(self, expr, v: Value) -> Value:
        """`total + loss` where `total` holds what a parameter of the function was given: outside the
        function's loops, the sum holds the parameter's value (its token, as `total += loss` writes it), and
        what the function returns of it is its caller's running sum added to (_summed_by_call)."""
        if self.frame.loops or self.function is None or not v.has_graph or not isinstance(expr, cst.BinaryOperation) \
                or not isinstance(expr.operator, (cst.Add, cst.Subtract)):
            return v
        for side in (expr.left, expr.right):
            b = self.place_binding(side) if isinstance(side, cst.Name) else None
            if b is not None and isinstance(b.node, cst.Param):
                return v.but(origins=v.origins | {b.token})
        return v

    def _pure_combination(self, rhs, target: cst.Name):
        """`accumulate(total, loss)`, a function of the file that makes no graph of its own (no model
        call: arithmetic on its arguments), given the target and one other value: (that argument of the
        target, the other argument)."""
        if not isinstance(rhs, cst.Call):
            return None
        fv = self.values.get(rhs.func, UNKNOWN)
        fn = fv.cls if fv.kind is Kind.FUNCTION else None
        if fn is None or fn.makes_graph or len(rhs.args) != 2 or any(a.keyword or a.star for a in rhs.args):
            return None
        a, b = (arg.value for arg in rhs.args)
        for own, other in ((a, b), (b, a)):
            if _same_place(own, target):
                return own, other
        return None

    def _summed_items(self, rhs, target: cst.Name):
        """`tuple(map(sum, zip(total, losses)))`: Python's builtins adding the target and one other value
        item by item (RecBole's tuple of running sums), making no graph of their own: (the target, the
        other value)."""
        leaves: list = []
        if not isinstance(rhs, cst.Call) or not _itemwise(rhs, self.lookup, leaves) or len(leaves) != 2:
            return None
        for own, other in ((leaves[0], leaves[1]), (leaves[1], leaves[0])):
            if _same_place(own, target):
                return own, other
        return None

    def _store(self, target: cst.BaseExpression, stored: cst.BaseExpression, v: Value, how: str) -> Optional[Store]:
        """Record a store of `v` into `target` where it outlives the loop iteration (or, outside a loop,
        in the function's summary); the Store recorded, if any."""
        if not self.frame.loops or self._sorting_arguments(v):
            self._keep_past_call(target, stored, v, how)
            return None
        where = self.outlives_iteration(target)
        if where is None:
            return None
        code, token = where
        base, _, local = self._root(target)
        s = Store(stored, v, code, token, self.frame.loops[-1], how, self.function, made_in=self._made_in(target), loops=self.frame.loops,
                  local=local and isinstance(base, cst.Name) or self._fresh_attribute(base))
        self.stores.append(s)
        for hook in self.hooks.get("store", ()):
            hook(s)
        return s

    @staticmethod
    def _slot(store: Optional[Store], v: Value) -> Value:
        """What a one-value place (`self.out = out`, `state["y_pred"] = out`) holds after a store into it
        that outlives the iteration: the value, marked with the place's identity, so that what is read back
        from the place carries it. A backward of something computed from that read (`loss =
        criterion(state["y_pred"], y)`) shows the place is the step's working slot, which the training needs
        as it is (GG101: "retention a later backward depends on"); a place no backward reads through is a
        record of the step, and the graph it holds outlives the step."""
        if store is None or store.how != "assign":
            return v
        return v.but(origins=v.origins | {store.token})

    def _sorting_arguments(self, v: Value) -> bool:
        """`def collect(self, **stats): for k, s in stats.items(): self.stats[k].append(s)`: loops that
        only run over what the call was given, storing what came in with it, are one call's work - what
        they keep is the function's summary, a store of each caller's loop (reported there), not a
        pile-up across this function's own iterations."""
        fn = self.function
        if fn is None or not v.origins:
            return False
        params = {n for n in fn.param_values if n not in ("self", "cls")}
        if all(loop is fn.node for loop in self.frame.loops):
            return False
        for loop in self.frame.loops:
            if loop is fn.node:
                continue
            if not isinstance(loop, cst.For) or not params & _names_in(loop.iter):
                return False
        came = frozenset().union(*(_given(p) for n, p in fn.param_values.items() if n in params))
        made = {o for o in v.origins if isinstance(o, cst.CSTNode)}
        return bool(made) and made <= came

    def _keep_past_call(self, target: cst.BaseExpression, stored: cst.BaseExpression, v: Value, how: str,
                        kept_at: Optional[cst.CSTNode] = None, suffix: str = "") -> None:
        """A store outside any loop of a function, into a place that outlives the call (what a
        parameter holds, `self`, a global): part of the function's summary, which its callers apply
        in their loops (`extracted(history, loss)` doing `history.append(loss)`)."""
        fn = self.function
        if fn is None:
            return
        base, b, local = self._root(target)
        if self._fresh_attribute(base):
            how = "assign"  # made afresh by each call: the next call replaces what this one keeps
        if isinstance(base, cst.Attribute):
            if self._held_by_instance(v):
                return
            holder = ("self", base.attr.value)
        elif isinstance(base, cst.Name) and b is not None and local and isinstance(b.node, cst.Param) \
                and base.value not in ("self", "cls"):
            holder = ("param", base.value)
        elif isinstance(base, cst.Name) and b is not None and not local:
            holder = ("global", base.value)
        else:
            return
        fn.kept.append(Kept(holder, stored, v, kept_at if kept_at is not None else target, how, suffix))

    def _held_by_instance(self, v: Value) -> bool:
        """Is `v`, kept on `self` by the constructor of a plain class of the file (`def __init__(self,
        **fields): self.fields = fields`), something the call gave it? The object built holds it then,
        and lives as long as the object does: the instance the call makes carries the graphs it was
        given (calls.py), so a store, return or read of the object is one of them. `Record(out=y)
        .fields["out"]` keeps nothing past the statement."""
        fn = self.function
        if fn.name != "__init__" or not isinstance(fn.cls, ClassInfo) or fn.cls.is_module:
            return False
        came = frozenset().union(*(_given(p) for n, p in fn.param_values.items() if n not in ("self", "cls")))
        return v.origins <= came

    def _made_in(self, target: cst.BaseExpression) -> tuple:
        """The loops a local name at the root of `target` was bound in (`loss_list = []` each outer iteration)."""
        _, b, local = self._root(target)
        return b.loops if local else ()

    def token_of(self, expr: cst.BaseExpression) -> object:
        if isinstance(expr, cst.Name):
            b = self.lookup(expr.value)
            return b.token if b is not None else None
        if is_self_attribute(expr):
            return ("attr", self.function.cls if self.function else None, expr.attr.value)
        return None

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
            self._mutate_own_attribute(target, new)  # `self.loss += part`: what this method reads next

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


def _names_in(node: cst.BaseExpression) -> set:
    """The names an expression reads (`stats` and `k` in `zip(stats.items(), k)`)."""
    return {n.value for n in descendants(node) if isinstance(n, cst.Name)}


def _given(v: Value) -> frozenset:
    """The graph identities an argument brings in, with those of the items and entries it holds."""
    parts = [v.item] if v.item is not None else []
    parts += [e for _, e in v.keyed or ()]
    return all_origins(v).union(*(_given(p) for p in parts))
