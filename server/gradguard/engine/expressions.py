"""Expressions: names, attributes, subscripts, operators; where a result is made (grad mode applies)
and what storage it shares."""

from __future__ import annotations

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.describe import short
from gradguard.engine.model import ClassInfo, GradMode
from gradguard.engine.syntax import literal_key
from gradguard.engine.typequestions import knows_nothing
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
)


# Expressions that may hand on another's value unchanged (`as_pair(x)[0]`, `Record(out=x).fields`, `keep(x)`)
_HANDING = (cst.Subscript, cst.Attribute, cst.Call)


class Expressions:
    """Evaluation of every expression but calls."""

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
        if v.kind is Kind.CONTAINER and (v.keyed or v.item is not None):
            # a dict a forward() returns (`{"mse": ..., "l1": ...}`): each entry made here
            item = self._made_each(v.item, node) if v.item is not None else None
            made = v.but(keyed=tuple((k, self._made_each(e, node)) for k, e in v.keyed), item=item)
            return made.but(origins=made.origins | {node}) if v.grad is Grad.YES else made
        if v.grad is Grad.YES and not v.leaf:
            v = v.but(origins=v.origins | {node})
        return self._made(v, node)

    def _eval(self, node: cst.BaseExpression) -> Value:
        t = type(node)  # (exact types: see function_facts)
        method = self._EVAL.get(t)
        v = method(self, node) if method is not None else self._eval_children(node)
        if t in _HANDING:
            v = self._handed_value(node, v)
        if (t is cst.Call and v.grad is Grad.UNKNOWN and v.kind in (Kind.UNKNOWN, Kind.TENSOR)
                and self.frame.mode is GradMode.OFF):
            # Whatever a call computes under no_grad carries no graph (`teacher(x)` of an unknown teacher).
            v = v.but(grad=Grad.NO, why=self._off_why(node), origins=frozenset())
        elif t is cst.Call and v.kind is Kind.CONTAINER and self.frame.mode is GradMode.OFF:
            v = self._computed_off(v, self._off_why(node))  # its items too (`outputs, losses = process(batch)`)
        if (t is cst.Name or t is cst.Attribute) and (
            knows_nothing(v) or v.grad is Grad.UNKNOWN and v.kind is Kind.TENSOR or v.has_graph and not v.scalar
        ):
            v = self._from_use(node, v)
        if self.facts and knows_nothing(v):
            v = self.facts.get(node, v)
        self.values[node] = v
        self.top_of[node] = self.top
        hooks = self.hooks.get(t)
        if hooks:
            for hook in hooks:
                hook(node)
        return v

    def _computed_off(self, v: Value, why: Evidence) -> Value:
        """A tuple, list or dict a call returns under no_grad: what it holds was computed under no_grad
        too - a helper's `(outputs, losses)` walked for callers in both modes (unknown there), or a
        forward's dict - and carries no graph; a parameter it holds (a leaf that requires grad) still
        requires grad."""
        if v.kind in (Kind.TENSOR, Kind.UNKNOWN):
            return v.but(grad=Grad.NO, why=why, origins=frozenset()) if v.grad is Grad.UNKNOWN else v
        if v.kind is not Kind.CONTAINER or v.grad is Grad.YES:
            return v
        return v.but(grad=Grad.NO if v.grad is Grad.UNKNOWN else v.grad, origins=frozenset(),
                     elements=tuple(self._computed_off(e, why) for e in v.elements) if v.elements is not None else None,
                     item=self._computed_off(v.item, why) if v.item is not None else None,
                     keyed=tuple((k, self._computed_off(e, why)) for k, e in v.keyed))

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
        parts = [self.values.get(p.expression, UNKNOWN) for p in node.parts if isinstance(p, cst.FormattedStringExpression)]
        self._sink(node, parts, "string formatting")
        return NUMBER

    def _e_name(self, node: cst.Name) -> Value:
        b = self.lookup(node.value)
        if b is not None:
            return b.value
        if node.value in ("True", "False", "None"):
            return NUMBER
        star = self.star_name(node.value)
        return Value(qualname=star) if star else UNKNOWN

    def _e_attribute(self, node: cst.Attribute) -> Value:
        base = self._eval(node.value)
        attr = node.attr.value
        own = self._own_attribute(node)
        if own is not None:
            return own
        if base.qualname:
            return Value(qualname=f"{base.qualname}.{attr}")
        kind = base.kind
        if kind is Kind.TENSOR:
            if attr == "data":
                if base.has_graph:  # reading the values past autograd - the pre-0.4 way to look at an output
                    self._sink(node, [base], "`.data`")  # (not the `.data` of what is already cut)
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
            if isinstance(base.cls, ClassInfo) and base.cls.method(attr) is not None:
                return Value(kind=Kind.FUNCTION, grad=Grad.NO, cls=base.cls.method(attr), elements=(base,))
            if attr in ("weight", "bias") and base.parameterized:
                return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, f"parameter `{self.code_for(node)}`"))
            if base.cls is None and base.parameterized:
                return self._file_parameter(node, attr)
            return Value(kind=Kind.UNKNOWN)
        if kind is Kind.OBJECT and isinstance(base.cls, ClassInfo):
            if attr in base.cls.attrs:
                return base.cls.attrs[attr]
            if base.cls.method(attr) is not None:  # (its own, or inherited from a class of the file)
                return Value(kind=Kind.FUNCTION, grad=Grad.NO, cls=base.cls.method(attr), elements=(base,))
            if attr == K.OPTIMIZER_GROUPS and base.cls.unknown_base:
                return self._param_groups(node)  # `self.param_groups` of an optimizer subclass
            if base.origins and base.grad is not Grad.NO:
                return Value(grad=Grad.UNKNOWN, origins=base.origins)  # a field of an output built from graphs
            return UNKNOWN
        if kind is Kind.OBJECT and base.cls is None and base.keyed:
            # an object another file of the project passes, with the tensor attributes it said it has
            return dict(base.keyed).get(attr, UNKNOWN)
        if kind is Kind.CLASS and isinstance(base.cls, ClassInfo):
            return base.cls.attrs.get(attr, UNKNOWN)
        if kind is Kind.NDARRAY:
            return Value(kind=Kind.UNKNOWN, grad=Grad.NO)
        if attr in ("weight", "bias") and isinstance(node.value, cst.Attribute):
            owner = self.values.get(node.value.value, UNKNOWN)
            if owner.kind is Kind.MODULE and owner.parameterized and owner.cls is None:
                # `model.out.weight`: the parameter of a submodule of a model from elsewhere.
                return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, f"parameter `{self.code_for(node)}`"))
            if knows_nothing(owner):
                return self._file_layer_weight(node.value.attr.value, attr)
        if attr == K.OPTIMIZER_GROUPS and kind is Kind.UNKNOWN:
            return self._param_groups(node)
        return UNKNOWN

    def _param_groups(self, node: cst.Attribute) -> Value:
        """`opt.param_groups`: a list of dicts whose `"params"` are the parameters it updates."""
        param = Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, "a parameter of `param_groups`"))
        group = Value(kind=Kind.CONTAINER, grad=Grad.NO,
                      keyed=(("params", Value(kind=Kind.PARAMS, grad=Grad.NO, item=param)),), item=UNKNOWN)
        return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=group)

    def _alias(self, base_node: cst.BaseExpression, how: str, node: cst.CSTNode, base: Value) -> Alias:
        binding = self.place_binding(base_node)
        return Alias(self._name_of(base_node), how, node, binding, base.leaf)

    def _cut(self, v: Value, node: cst.CSTNode, how: str) -> frozenset:
        """Cutting a graph here (GG301 reports it if a loss built on it is back-propagated)."""
        if not v.has_graph:
            return v.cuts
        self.cut_from[node] = v.origins  # what was cut: a sink after the cut still ends those graphs
        return v.cuts | {Evidence(node, how)}

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
                picked = base.elements[i]
            except (ValueError, IndexError):
                pass
            else:
                made = self.values.get(picked.why.node) if picked.why is not None else None
                if picked.grad is Grad.NO and base.has_graph and made is not None and made.elements is base.elements:
                    # `out.max(dim=-1)[1]`: the indices of a tuple result computed from the graph (an item the
                    # call itself made with no grad) end it, as `.argmax()` does
                    self._sink(node, [base], f"`{self._short(picked.why.node.func)}(...)[{i}]`")
                return picked
        key = literal_key(node)
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
        self._sink(node, vals, "a comparison")
        kind = Kind.TENSOR if any(v.kind is Kind.TENSOR for v in vals) else Kind.NUMBER
        return Value(kind=kind, grad=Grad.NO, why=Evidence(node, "a comparison"))

    def _e_ifexp(self, node: cst.IfExp) -> Value:
        """`torch.tensor(w) if not isinstance(w, torch.Tensor) else w`: a tensor guard holds in its branch
        (flow._enter_branch, as for an `if` statement)."""
        self._eval(node.test)
        guard = self._tensor_guard(node.test)  # (name, is a tensor in the body?)
        depth = self._enter_branch(guard, body=True, rebind=False)
        body = self._eval(node.body)
        del self.not_tensors[depth:]
        self._enter_branch(guard, body=False, rebind=False)
        orelse = self._eval(node.orelse)
        del self.not_tensors[depth:]
        return merge(body, orelse)

    def _e_lambda(self, node: cst.Lambda) -> Value:
        return Value(kind=Kind.UNKNOWN, grad=Grad.NO)

    def _e_named(self, node: cst.NamedExpr) -> Value:
        v = self._eval(node.value)
        if isinstance(node.target, cst.Name):
            self._bind(node.target, v, node.value)
        return v

    def _e_yield(self, node: cst.Yield) -> Value:
        """`yield v` (and `yield from g`): what the generator gives its caller's loop."""
        given = NUMBER
        if isinstance(node.value, cst.From):
            it = self._eval(node.value.item)
            given = self._element_of(it, node.value.item)
        elif node.value is not None:
            given = self._eval(node.value)
        fn = self.function
        if fn is not None:
            fn.yields = given if fn.yields is None else merge(fn.yields, given)
        return UNKNOWN  # what the caller sends back

    def _e_await(self, node: cst.Await) -> Value:
        self._eval(node.expression)
        return UNKNOWN

    def _short(self, node: cst.CSTNode) -> str:
        return short(self.code_for(node))
