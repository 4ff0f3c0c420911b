"""What a name is from how the code uses it (evidence from use, rules.md), for names whose
origin says nothing: a module, a graph, an instance of a class of the file."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine import evidence, handing
from gradguard.engine.evidence import dotted
from gradguard.engine.model import GradMode
from gradguard.engine.syntax import string_value
from gradguard.engine.typequestions import knows_nothing
from gradguard.engine.values import (
    UNKNOWN,
    Evidence,
    Grad,
    Kind,
    Value,
)


def _entry_backpropagated(call: cst.Call, key: str) -> Optional[str]:
    """"mse" for `terms["mse"].backward()` where `key` is `terms`."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript)):
        return None
    sub = func.value
    if dotted(sub.value) != key or len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    index = sub.slice[0].slice.value
    return string_value(index.value) if isinstance(index, cst.SimpleString) else None


class FromUse:
    """Evidence from use, applied to the values the walk reads."""

    def _from_use(self, node: cst.BaseExpression, v: Value) -> Value:
        """What the uses of a name left unknown by its origin tell (evidence.py)."""
        key = dotted(node)
        if key is None:
            return v
        if self.mentions is None:
            self.own_methods = frozenset(evidence.class_methods(self.module))
            self.mentions = (evidence.mentioned(self.source)
                             | evidence.member_receivers(self.source, self.own_methods)
                             | evidence.call_shape_receivers(self.source, evidence.forward_signatures(self.module))
                             | evidence.submodule_receivers(self.source, self._file_submodules())
                             | evidence.interface_receivers(self.source, self.module))
            self.scalar_backwards = evidence.scalar_backwards(self.source)
            self.plain_methods = evidence.plain_class_methods(self.module)
        if key not in self.mentions or v.has_graph and key not in self.scalar_backwards and (v.scalar or not self.scalar_backwards):
            return v  # (a graph not known 0-dim may be an operand of a back-propagated scalar: backprop.Chains.zero_dim)
        for uses in self._uses_around(key):
            if knows_nothing(v):
                call = uses.module_evidence(key)
                if call is not None and self._plain_method(call):
                    call = None  # micrograd's `n.parameters()`: the file's own class has that method
                if call is not None:
                    # `x.state_dict()` alone says a stateful module, not one with parameters (a torchrl
                    # transform, a scheduler): its calls are not known to build graphs.
                    weights = not (isinstance(call.func, cst.Attribute) and call.func.attr.value in ("state_dict", "load_state_dict"))
                    said = " takes its output as a prediction" if uses.predicts.get(key) is call else ""
                    fed = uses.feeders.get(key)
                    if fed is not None and fed[0] is call and fed[1] is not None:
                        said = f" computes what `{self._short(fed[1])}` back-propagates"
                    return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=weights, why=self._evidence(call, said))
                loss = uses.losses.get(key)
                if loss is not None:
                    # `l = loss(net(X, w, b), y).sum(); l.backward()`: a callable given a computed prediction
                    # and a target, whose result was back-propagated, is a loss - differentiable in what
                    # it is given, training nothing itself
                    return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=False, loss=True,
                                 why=self._evidence(loss[0], f" computes what `{self._short(loss[1])}` back-propagates"))
                # a name imported from elsewhere is not an instance of a class this file defines
                # (composer's `infer_target_type(input, target)` beside a loss's `forward(input, target)`)
                inst = None if v.qualname is not None else \
                    self._instance_by_members(key, uses) or self._instance_by_call(key, uses)
                if inst is not None:
                    return inst
            call = uses.graph_evidence(key)
            if v.grad is Grad.UNKNOWN and v.why is not None:
                call = None  # unknown for a stated reason (a graph entry replaced): not for a use to decide
            if call is not None and v.grad is Grad.NO and uses.backwards.get(key) is not call:
                call = None  # what a backward was computed from: not what is known to have no graph (no_grad)
            if call is not None and self._plain_method(call):
                call = None  # micrograd's `o.backward()` on its own `Value`
            if call is not None and v.has_graph:
                # Known to carry a graph already (from `model(x)`): the backward adds only that the
                # value is 0-dim - PyTorch creates the gradient implicitly only for a scalar.
                zero_dim = not call.args and dotted(call.func) == f"{key}.backward" or uses.zero_dim.get(key) is call
                return v.but(scalar=True) if zero_dim else v
            if call is not None and self.frame.mode is not GradMode.OFF:
                # `loss.backward()` with no gradient argument also says 0-dim: PyTorch only
                # creates the gradient implicitly for a scalar.
                scalar = v.scalar or (not call.args and dotted(call.func) == f"{key}.backward")
                said = " needs one" if uses.backwards.get(key) is call else f" back-propagates what `{key}` is part of"
                graph = v.but(kind=Kind.TENSOR, grad=Grad.YES, leaf=False, origins=v.origins | {call}, scalar=scalar,
                              why=self._evidence(call, said))
                entry = _entry_backpropagated(call, key)
                if entry is not None and v.kind in (Kind.UNKNOWN, Kind.CONTAINER):
                    # `terms["mse"].backward()`: a dict whose "mse" entry has a graph - its other entries
                    # likely too (a model's or a helper's dict of losses)
                    item = graph.but(scalar=False)
                    return Value(kind=Kind.CONTAINER, grad=Grad.YES, why=graph.why, origins=graph.origins,
                                 keyed=((entry, graph.but(scalar=True)),), item=item)
                return graph
        return v

    def _plain_method(self, call: cst.Call) -> bool:
        return isinstance(call.func, cst.Attribute) and call.func.attr.value in self.plain_methods

    def _instance_by_members(self, key: str, uses: "evidence.Uses") -> Optional[Value]:
        """`decoder.init_hidden_state(...)`, `p.attribution(x)`: a name on which the code uses only
        members of one class of this file, one of them a method no other class of the file defines
        and that other objects do not share (evidence.COMMON_METHODS: `tokenizer.encode(s)` is not a
        VAE's `encode`), is an instance of that class - duck typing, as the code's author meant it,
        whatever the name is called."""
        used = {**self._members_used_by_helpers(key, uses), **uses.members.get(key, {})}
        if not used or not self.classes:
            return None
        for info in self.classes:
            if info not in self.class_members:
                self.class_members[info] = evidence.class_members(info.node)
        fits = [c for c in self.classes if used.keys() <= self.class_members[c]]
        if len(fits) > 1:
            # a base class whose methods used here are no-op hooks (`def on_epoch_end(...): pass`) beside
            # the one class that fills them in: what the calls can run is that class's code
            filled = [c for c in fits if not all(m in c.methods and evidence.no_op(c.methods[m].node) for m in used)]
            fits = filled if len(filled) == 1 else fits
        if len(fits) != 1:
            return None
        info = fits[0]
        own = [m for m in used if m in info.methods and m in self.own_methods]
        # `model.module.encoder(x)`, `.decoder(...)`, `.projection(...)`: two submodules or more that its
        # `__init__` builds, where no other class of the file has every member used (attribute names
        # like `encoder` are common: one alone says nothing)
        if not own and info.module_like and len(used) >= 2 and all(m in info.methods for m in used) and not any(
                m in self.class_members[c] for c in self.classes if c is not info for m in used):
            # `vae.encode(x)` and `vae.decode(z)`: two methods or more, each defined by one nn.Module class of
            # the file and by no other class of it - its interface, though each name alone is common
            own = list(used)
        subs = [] if own or not info.module_like else [m for m in used if m in self._submodules(info)]
        # (one is enough behind `.module`, the attribute DataParallel / DistributedDataParallel keep the
        # wrapped model in: `net.module.encoder(x)` is a submodule of a model, not any object's `encoder`)
        if not own and len(subs) < (1 if key.endswith(".module") else 2):
            return None
        node = used[own[0] if own else subs[0]]
        why = self.evidences.get((node, info.name))
        if why is None:
            what = ("an nn.Module of " if info.module_like else "a class of ") + self._file_of(info)
            has = "has that method" if own else "builds the submodules " + ", ".join(f"`{m}`" for m in subs)
            why = self.evidences[(node, info.name)] = Evidence(
                node, f"`{self._short(node)}`: only `{info.name}`, {what}, {has};")
        kind = Kind.MODULE if info.module_like else Kind.OBJECT
        return Value(kind=kind, grad=Grad.NO, cls=info, parameterized=info.parameterized, why=why)

    def _file_of(self, cls) -> str:
        """"this file", or the other file of the project a class (ClassInfo or name) was joined from."""
        node = cls.node if hasattr(cls, "node") else next((c.node for c in self.classes if c.name == cls), None)
        where = self.foreign.get(node)
        return where if where else "this file"

    def _submodules(self, info) -> frozenset:
        found = self.class_submodules.get(info)
        if found is None:
            modules = frozenset(c.name for c in self.classes if c.module_like)
            found = self.class_submodules[info] = evidence.init_submodules(info.node, modules)
        return found

    def _file_submodules(self) -> frozenset:
        """Every attribute some class of the file sets to a new module in its `__init__`."""
        classes = [s for s in self.module.body if isinstance(s, cst.ClassDef)]
        names = frozenset(c.name.value for c in classes)
        return frozenset().union(*(evidence.init_submodules(c, names) for c in classes))

    def _instance_by_call(self, key: str, uses: "evidence.Uses") -> Optional[Value]:
        """`model(input_ids, state=state)` and `outputs["state"]`: a name called the way the `forward()`
        of one nn.Module class of this file is declared and returns is an instance of that class.
        Two agreements at least (evidence.call_agreements: keywords it declares, its results unpacked
        by the number it returns and used as tensors, keys of the dict it returns read), and no other
        class fits. What anything is called plays no part (rules.md: names are never the only reason)."""
        call = uses.called.get(key)
        if call is None or "." in key or not self.classes:
            return None
        outer = self._handed_back_to(key)
        fit_key = (call, outer[0] if outer is not None else None)
        if fit_key in self.call_fits:
            return self.call_fits[fit_key]
        # only classes whose forward takes one of the call's keywords, or returns what is unpacked or read
        named = {a.keyword.value for a in call.args if a.keyword is not None}
        unpacked = uses.unpacked.get(call)
        keys = frozenset(uses.keys_read.get(call, ()))
        tensors = frozenset(n for n in unpacked or () if n in uses.tensors)
        keys |= self._keys_read_by_helpers(call, uses)
        if outer is not None:  # what the caller does with the helper's result, it does with the call's
            at, there = outer
            unpacked = unpacked or there.unpacked.get(at)
            keys |= frozenset(there.keys_read.get(at, ()))
            tensors |= frozenset(n for n in there.unpacked.get(at) or () if n in there.tensors)
        fits = []
        for info in self.classes:
            forward = info.methods.get("forward")
            # (a class of no torch base with a forward() - pytorch-grad-cam's RefineCAM - is not an nn.Module)
            if forward is None or not (info.is_module or info.unknown_base) \
                    or named.isdisjoint(evidence.named_params(forward.node)) and not unpacked and not keys:
                continue
            agree = evidence.call_agreements(call, forward.node, unpacked, keys, tensors)
            if agree is not None and len(agree) >= 2:
                fits.append((info, agree))
        found = None
        if len(fits) == 1:
            info, agree = fits[0]
            why = Evidence(call, f"`{self._short(call)}`: the call fits `{info.name}.forward()` ({', '.join(agree)}), "
                                 f"an nn.Module of {self._file_of(info)};")
            found = Value(kind=Kind.MODULE, grad=Grad.NO, cls=info, parameterized=info.parameterized, why=why)
        self.call_fits[fit_key] = found
        return found

    def _members_used_by_helpers(self, key: str, uses: "evidence.Uses") -> dict:
        """The members functions of the file use on the parameter `key` is passed to (`encode(vae, x)`
        calling `vae.encode(x)`): what a helper does with what it is given, its caller does."""
        found: dict = {}
        calls = [(passed, key) for passed in uses.given.get(key, ())] if "." not in key else []
        for fn, param in self._helper_parameters(calls):
            for name, node in self._scope_uses(fn).members.get(param, {}).items():
                found.setdefault(name, node)
        return found

    def _keys_read_by_helpers(self, call: cst.Call, uses: "evidence.Uses") -> frozenset:
        """The keys functions of the file read of the parameter the call's result is passed to
        (`outputs = model(points, cage)`, then `stop(outputs)` reading `outputs["weight"]`): what a helper
        does with what it is given, its caller does (evidence through helpers)."""
        found: set = set()
        for fn, param in self._helper_parameters(uses.passed.get(call, ())):
            found |= self._scope_uses(fn).param_keys.get(param, set())
        return frozenset(found)

    def _helper_parameters(self, calls) -> list:
        """(function, parameter) for each (call, name) where the call is of a function the file defines
        at its top level and gives it the name for that parameter (`stop(outputs)`: `stop`'s first)."""
        found = []
        helpers = self._file_helpers()
        for passed, name in calls:
            fn = helpers.defs.get(passed.func.value) if isinstance(passed.func, cst.Name) else None
            if not isinstance(fn, cst.FunctionDef):
                continue
            for param in evidence.named_params(fn):
                arg = handing.argument(fn, passed, param, (), bound=False)
                if type(arg) is cst.Name and arg.value == name:
                    found.append((fn, param))
        return found

    def _handed_back_to(self, key: str) -> Optional[tuple]:
        """(the call, its scope's Uses) of the call this analysis of the function walks it for, when the
        function hands back what it calls `key` for (`outputs = model(ids, state=state); return outputs`,
        handing.returned_callee): the caller reads `outputs["state"]` of the helper's result, and so of
        the call's (evidence through helpers, whichever is defined first)."""
        fn = self.function
        if fn is None or fn.walked_at is None or handing.returned_callee(fn.node) != key:
            return None
        at, caller = fn.walked_at
        return at, self._scope_uses(caller.node if caller is not None else self.module)

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
            yield self._uses_cache(fn.cls.node, lambda node: evidence.class_uses(node, self._file_helpers()))
        scope = self.frame.scope
        while scope is not None:
            if scope.kind == "function" and scope.function is not None:
                yield self._scope_uses(scope.function.node)
                if key.split(".", 1)[0] in scope.env:
                    return  # bound here: outer scopes' uses are of another variable
            elif scope.kind == "module":
                yield self._scope_uses(self.module)
            scope = scope.parent

    def _uses_cache(self, node: cst.CSTNode, compute) -> "evidence.Uses":
        found = self.uses.get(node)
        if found is None:
            found = self.uses[node] = compute(node)
        return found

    def _file_helpers(self) -> handing.FileHelpers:
        helpers = self.__dict__.get("_helpers")
        if helpers is None:
            helpers = self.__dict__["_helpers"] = handing.FileHelpers(self.module)
        return helpers

    def _scope_uses(self, node: cst.CSTNode) -> "evidence.Uses":
        """The uses in one function's body (or the module's top level), knowing the file's imports."""
        found = self.uses.get(node)
        if found is None:
            if self.imported is None:
                self.imported = evidence.imported_names(self.module)
            found = self.uses[node] = evidence.uses_of(node, self.imported, self._file_helpers())
        return found

    def _file_parameter(self, node: cst.Attribute, attr: str) -> Value:
        """`model.W` of a model from elsewhere, where the one class of this file that sets `self.W`
        makes it an `nn.Parameter` (see evidence.parameter_attributes)."""
        if self.parameter_attrs is None:
            self.parameter_attrs = evidence.parameter_attributes(self.module, self.source)
        found = self.parameter_attrs.get(attr)
        if found is None:
            return Value(kind=Kind.UNKNOWN)
        cls, made = found
        why = Evidence(made, f"`.{attr}` is an `nn.Parameter` in `{cls}`, the only class of {self._file_of(cls)} with a `.{attr}`,")
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
        why = Evidence(made, f"`.{sub}` is an `nn.{layer}` in `{cls}`, the only class of {self._file_of(cls)} with a `.{sub}`,")
        return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=why)
