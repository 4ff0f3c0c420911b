"""Calls: torch functions, tensor and module methods, nn classes, builtins, losses, backward."""

from __future__ import annotations

import re

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.evidence import dotted
from gradguard.engine.handing import names_in
from gradguard.engine.model import Backward, GradMode
from gradguard.engine.sinks import SINK_BUILTINS, SINK_LIBRARIES
from gradguard.engine.summaries import (
    MAX_ANALYSES_PER_FUNCTION,
    ClassInfo,
    FunctionInfo,
)
from gradguard.engine.syntax import keyword, literal_bool, positional, reduces_to_scalar
from gradguard.engine.typequestions import knows_nothing
from gradguard.engine.values import (
    NUMBER,
    UNKNOWN,
    Evidence,
    Grad,
    Kind,
    Value,
    all_origins,
    combined_cuts,
    holds_graph,
    join_grad,
    merge,
    reach,
)



BUILTIN_NUMBER_CALLS = frozenset("float int bool len str repr print isinstance hasattr id abs format".split())


# The standard library's random numbers: plain Python numbers, never a graph.
_RANDOM_NUMBERS = frozenset(f"random.{f}" for f in """random randint uniform randrange gauss normalvariate
    betavariate expovariate gammavariate lognormvariate triangular vonmisesvariate paretovariate
    weibullvariate getrandbits""".split())


def _shaped(t: Value, shape) -> Value:
    """A torch layer's tuple result (K.LAYER_RESULTS), each tensor in it like `t`."""
    if shape == "t":
        return t
    elements = tuple(_shaped(t, s) for s in shape)
    return Value(kind=Kind.CONTAINER, grad=t.grad, why=t.why, origins=t.origins, elements=elements, item=t)


# Module methods that give it a submodule (or, for a container, a layer): what it holds now has parameters.
_ADDS_A_SUBMODULE = frozenset({"add_module", "register_module", "append", "extend", "insert"})


class Calls:
    """What a call returns and what it does to its arguments."""

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
        if v is UNKNOWN and knows_nothing(fv) and fv.qualname is None and self._volatile_input(args):
            # `net(Variable(x, volatile=True))`: a model (no-grad intent says its call builds a graph),
            # and since torch 0.4 it does build one
            fv = Value(kind=Kind.MODULE, grad=Grad.NO, why=Evidence(node, "given a `volatile=True` input"))
            self.values[func] = fv
            v = self._module_call(node, fv, args)
        self._maybe_filled(func, fv, args)
        if self.strict and v is UNKNOWN and knows_nothing(fv) and not isinstance(func, cst.Attribute):
            graphs = [a for _, a in args if a.has_graph]
            if graphs:
                why = Evidence(node, f"from `{self._short(node)}`, which is given a graph,")
                origins = frozenset().union(*(a.origins for a in graphs)) | {node}
                v = self._made(Value(kind=Kind.TENSOR, grad=Grad.YES, why=why, origins=origins), node)
        if knows_nothing(fv) and isinstance(func, cst.Name) and not getattr(self.summarized.get(node), "through", ()):
            # Handed to a function of another file (`update(loss)`), which may train on it (not one whose
            # summary says it returns their graphs and does nothing else with them: outside.Returns.through).
            self.escaped |= reach([a for _, a in args])
            if not self._python_builtin(func):
                self._opaque_call(node, args)
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

    @staticmethod
    def _volatile_input(args: list):
        """The `Variable(..., volatile=True)` the first positional argument was made by, if any."""
        first = next((v for a, v in args if a.keyword is None and not a.star), None)
        return first.volatile if first is not None else None

    def _maybe_filled(self, func: cst.BaseExpression, fv: Value, args: list) -> None:
        """A list or dict handed to a function that may fill it (`fill(losses, ...)` imported, or a
        function of the file that appends to that parameter) holds what it was given and more, which
        the analysis may not see: what it holds is no longer known to carry no graph."""
        if fv.kind is Kind.FUNCTION and fv.cls is not None:
            fills = self.facts_of(fv.cls.node).filled
            named = self._arguments(fv.cls, args, fv.elements[0] if fv.elements else None)
            filled = [(a, v) for p, (a, v) in named.items() if p in fills]
        elif knows_nothing(fv) and isinstance(func, cst.Name) and not self._python_builtin(func) and fv.qualname is not None:
            filled = args
        else:
            return
        for a, _ in filled:
            b = self.lookup(a.value.value) if isinstance(a.value, cst.Name) and not a.star else None
            v = b.value if b is not None else UNKNOWN  # as the call left it (a summary may have filled it)
            if v.kind is Kind.CONTAINER and not holds_graph(v.item or UNKNOWN):
                item = UNKNOWN if v.item is None else merge(v.item, UNKNOWN)
                self._rebind_mutated(a.value.value, v.but(item=item, grad=Grad.UNKNOWN, closed=False))

    def _unknown_receiver(self, node: cst.Call, name: str, args: list) -> None:
        """Stores through an object syntax cannot see: `history.append(loss)` on a list the caller
        passed in, and `meter.update(loss)` where the only class of the file with an `update` keeps
        its argument (`self.sum += val`)."""
        func = node.func
        if name in ("append", "extend", "appendleft", "insert") and args:
            a, v = args[-1]
            if v.has_graph:
                self._store(func.value, a.value, v, "extend" if name == "extend" else "append")
                self._add_item(func.value, v)  # now a list of graphs: a later backward of it excuses the store
            return
        owners = [f for f in self.functions if f.name == name and f.cls is not None]
        if len(owners) == 1:
            self._called_by_name(owners[0])
            self._kept_by_call(owners[0], node, args, UNKNOWN)
        elif owners and self._all_keep(owners, args):
            # the receiver is an instance of one of them, whichever: each keeps what it is given, so the
            # call does (the join of their summaries); the first one's place names where
            self._kept_by_call(owners[0], node, args, UNKNOWN)

    def _all_keep(self, owners: list, args: list) -> bool:
        """Does every one of the methods `owners` (one name, defined by several classes of the file)
        keep past the call each argument of this call that carries a graph? Where one of them does
        not, the call may keep nothing: silent."""
        given = [a for a, v in args if v.has_graph]
        if not given:
            return False
        for fn in owners:
            by_name = self._arguments(fn, args, UNKNOWN)
            kept = {id(by_name[n][0]) for n in self._keeps(fn) if n in by_name}
            if any(id(a) not in kept for a in given):
                return False
        return True

    def _called_by_name(self, fn: FunctionInfo) -> None:
        """`model.predict(batch)` on an object syntax cannot see, where `predict` is defined by one
        class of the file: that method runs in this call's grad mode (mt-dnn's `predict()`, reached
        only under the entry point's `no_grad`, builds no graph). Only the mode is taken: the
        receiver may be another object (an sklearn model's `predict`), so only a call under
        no_grad counts, and only for a method that does not use autograd itself: then the mode
        can only silence findings."""
        if self.frame.mode is not GradMode.OFF or self.facts_of(fn.node).all_names & K.AUTOGRAD_NAMES:
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
        if self.outgoing is not None or self.callee_summaries:
            built = self._border_call(node, fv, args)
            if built is not None:
                return built
        if fv.qualname:
            return self._call_qualified(node, fv.qualname, args)
        if isinstance(func, cst.Name) and func.value == "super" and not node.args and self.lookup("super") is None:
            return self._super()
        if fv.kind is Kind.MODULE:  # model(x), self.encoder(x)
            return self._module_call(node, fv, args)
        if fv.kind is Kind.OBJECT and isinstance(fv.cls, ClassInfo) and "__call__" in fv.cls.methods:
            # `actor(data)`, `self.actor(data)` on an instance of a class of the file: its `__call__` runs
            return self._call_function(fv.cls.methods["__call__"], node, args, fv)
        if fv.kind is Kind.CLASS and fv.cls is None and fv.item is not None:
            return fv.item  # a class the type layer knows (an nn.Module subclass from another file)
        if fv.kind is Kind.CLASS and fv.layer == "record" and not any(a.star for a, _ in args):
            # `LIFState(z=z, v=v, i=i)`: a tuple of what it is given (in field order when all positional)
            positional = all(a.keyword is None for a, _ in args)
            return self._container([v for _, v in args], tuple(v for _, v in args) if positional else None)
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
                out = self._call_function(fv.cls, node, args, bound)
                if name == "forward" and bound is not None and bound.kind is Kind.MODULE and bound.parameterized \
                        and out.kind is Kind.CONTAINER and (out.elements is not None or out.keyed):
                    # `rnn.forward(x, h)` is `rnn(x, h)`: each item of its tuple carries the call's graph
                    return self._made_each(out, node)
                return out
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
            if recv.kind is Kind.OBJECT and recv.layer == "distribution" and name in K.DISTRIBUTION_NEVER_GRAD:
                self._sink(node, [recv], f"`.{name}()`")
                return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"`.{name}()` of a distribution"))
            if recv.kind is Kind.OBJECT and recv.layer == "distribution" and name in K.DISTRIBUTION_GRAD:
                tensors = [recv] + [v for _, v in args if v.kind is not Kind.NUMBER]
                g, why, origins = join_grad(tensors)
                return self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins), node)
            if recv.kind is Kind.OBJECT and recv.cls is None:
                self._opaque_call(node, args)
                return UNKNOWN  # an instance the type layer knows is no tensor: its own clone(), detach()...
            # Unknown receiver: only what holds whatever it is.
            if recv.volatile is not None and (name in K.SAME_GRAD_METHODS_RETURN_SELF_KIND or name in K.VIEW_METHODS):
                return recv  # `Variable(x, volatile=True).cuda()`, `.unsqueeze(0)`: the same input, moved or reshaped
            if name == "item":
                return Value(kind=Kind.NUMBER, grad=Grad.NO, why=Evidence(node, "`.item()`"))
            if name in ("argmax", "argmin"):
                # indices, of a tensor or of an array: never a graph (not known to be a tensor: NumPy's
                # `a.argmax()` is a number `torch.tensor()` copies without a warning)
                return Value(kind=Kind.UNKNOWN, grad=Grad.NO, why=Evidence(node, f"`.{name}()`"))
            if name == "tolist":
                return Value(kind=Kind.CONTAINER, grad=Grad.NO, why=Evidence(node, "`.tolist()`"), item=NUMBER)
            if name in K.SHAPE_QUERIES:
                # `target.size(0)` of a tensor, an array or anything else: a size, never a graph, and asking
                # it hands the receiver to nothing that trains (an accuracy helper's `* 100.0 / target.size(0)`)
                return Value(kind=Kind.UNKNOWN, grad=Grad.NO, why=Evidence(node, f"`.{name}()`"))
            if name == "detach":
                return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, "`.detach()`"),
                             alias=self._alias(func.value, "detach", node, UNKNOWN))
            if name == "from_pretrained" and self._looks_like_model_class(func.value):
                return Value(kind=Kind.MODULE, grad=Grad.NO)
            if name not in ("append", "extend", "appendleft", "insert"):  # stores are tracked as stores
                self._opaque_call(node, args, recv)
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
            built_from = reach([v for _, v in args])
            if built_from and not info.is_module:
                # `DecoderOutput(last_hidden_state=h, ...)`: the object holds the graphs it was given, and a
                # forward() returning it hands them to its caller
                inst = inst.but(grad=Grad.UNKNOWN, origins=built_from)
            return inst
        if fv.kind is Kind.FUNCTION and isinstance(fv.cls, FunctionInfo):
            return self._call_function(fv.cls, node, args, fv.elements[0] if fv.elements else None)
        if fv.kind is Kind.FUNCTION and fv.callees:
            results = [self._call_function(fn, node, args, bound) for fn, bound in fv.callees if isinstance(fn, FunctionInfo)]
            out = results[0] if results else UNKNOWN
            for r in results[1:]:
                out = merge(out, r)
            return out
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
        self._record_backward(Backward(node, v.origins, self.frame.loops, self.function, v))

    def _unfreeze_candidates(self, name: str) -> None:
        """`for phase, module, opt in (("G", G, opt_G), ("D", D, opt_D)): module.requires_grad_(True)`:
        the loop variable may be any model the literal it iterates names, so none of them stays frozen
        (a GAN's phases unfreeze each network in turn)."""
        for n in names_in(self.loop_literals.get(name)):
            held = self.lookup(n)
            if held is not None and held.value.kind is Kind.MODULE and held.value.frozen:
                self._rebind_mutated(n, held.value.but(frozen=False, parameterized=True))

    def _super(self) -> Value:
        """`super()` in a method of a class of the file whose base is one too: the instance, as that
        base (`super().__init__(weights=w)` runs the base's `__init__`, `super().forward(x)` its
        forward); else unknown (torch's `nn.Module.__init__`)."""
        fn = self.function
        if fn is None or fn.cls is None or not fn.cls.bases:
            return UNKNOWN
        base = fn.cls.bases[0]
        return Value(kind=Kind.MODULE if base.is_module else Kind.OBJECT, grad=Grad.NO, cls=base,
                     parameterized=base.parameterized)

    def _record_backward(self, b: Backward) -> None:
        self.backwards.append(b)
        if self.function is not None:
            self.function.backwards.append(b)

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
        inner = frozenset()
        if isinstance(m.cls, ClassInfo) and "forward" in m.cls.methods:
            # Analyse forward() with these arguments; a module with parameters makes a new graph here.
            out = self._call_function(m.cls.methods["forward"], node, args, m)
            if not m.parameterized:
                return out
            if out.kind is Kind.CONTAINER and (out.elements is not None or out.keyed):
                # a tuple/list output keeps its shape (`pred, inputs_list = net(x)`), a dict its entries
                return self._made_each(out, node)
            inner = all_origins(out) if out.grad is not Grad.NO else frozenset()  # (what forward() computed it from)
        if m.parameterized and self.function is not None:
            self.function.makes_graph = True
        # (a model whose every weight was frozen still computes a graph here: what the file freezes
        # it may partly unfreeze again - BERT's last layer - and its inputs may require grad)
        if m.parameterized:
            # A new graph from this call, on top of whatever graphs its inputs carry.
            inputs = reach(vals)  # (an input that may carry a graph passes its graphs on too)
            out = self._made(Value(kind=Kind.TENSOR, grad=Grad.YES, why=Evidence(node, f"from `{self._short(node)}`"),
                                   origins=inputs | inner | {node}), node)
            shape = K.LAYER_RESULTS.get(m.layer) if m.layer is not None else None
            return _shaped(out, shape) if shape is not None else out
        g, why, origins = join_grad(vals) if vals else (Grad.NO, None, frozenset())
        return self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins), node)

    def _loss_operands(self, node: cst.Call, args: list) -> list:
        """What a loss's graph comes from: its prediction, and its target unless the target is a
        name nothing is known about that holds what the code was given - a parameter, a loop's
        batch, an item read from them - not what a call of this scope computed (which may be a
        graph): where the prediction was cut, `F.mse_loss(out, y)` then has no graph (and
        `.backward()` raises)."""
        out = []
        for i, (a, v) in enumerate(args):
            target = (a.keyword is None and i > 0) or (a.keyword is not None and a.keyword.value == "target")
            if target and v.grad is Grad.UNKNOWN and self._handed_in(a.value):
                continue
            out.append(v)
        return out

    def _handed_in(self, node: cst.BaseExpression) -> bool:
        """A name bound by a parameter, a `for` target, an unpacking or a read - not by a call's result."""
        b = self.place_binding(node) if isinstance(node, cst.Name) else None
        return b is not None and not isinstance(b.node, cst.Call)

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

    def _module_method(self, node: cst.Call, m: Value, name: str, args: list) -> Value:
        func = node.func
        if name in K.MODULE_SELF_METHODS:
            new = m
            if name == "requires_grad_":
                flag = literal_bool(args[0][0].value) if args else True
                # (`frozen`: weights the code froze - what another file may unfreeze - not a module without any)
                new = m.but(parameterized=flag is not False and m.parameterized,
                            frozen=m.frozen or (flag is False and m.parameterized))
                if isinstance(func.value, cst.Name):
                    self._rebind_mutated(func.value.value, new)
                    if flag is not False:
                        self._unfreeze_candidates(func.value.value)
            elif name in ("eval", "train"):
                # The mode travels with the module: a helper it is handed to runs it in eval mode too.
                flag = literal_bool(args[0][0].value) if args and name == "train" else name == "train"
                new = m.but(evaluated=node if flag is False and not (name == "eval" and args) else None)
                b = self.place_binding(func.value)
                if b is not None and any(b is x for x in self.frame.scope.env.values()):
                    b.value = new  # (a name of this scope, or this method's `self.x`: not a global's binding)
            return new
        if name == "forward":
            return self._module_call(node, m, args)
        if name in _ADDS_A_SUBMODULE:
            # `nn.Sequential()` filled by `add_module("head", nn.Linear(6, 2))`: it has what it was given
            given = [v for _, v in args if v.kind is not Kind.NUMBER]
            if not m.parameterized and any(v.kind is not Kind.MODULE or v.parameterized for v in given):
                new = m.but(parameterized=True)
                if isinstance(func.value, cst.Name):
                    self._rebind_mutated(func.value.value, new)
                elif isinstance(func.value, cst.Attribute):
                    self._replace_attribute(func.value, new)
            return NUMBER
        if name in ("parameters",):
            return Value(kind=Kind.PARAMS, grad=Grad.NO, item=self._param(node) if m.parameterized else UNKNOWN)
        if name == "named_parameters":
            p = self._param(node) if m.parameterized else UNKNOWN
            return Value(kind=Kind.PARAMS, grad=Grad.NO, item=Value(kind=Kind.CONTAINER, elements=(NUMBER, p), item=UNKNOWN))
        if name in ("zero_grad", "load_state_dict", "register_buffer", "register_forward_hook"):
            return NUMBER
        if m.cls is None and m.parameterized and (K.forward_like(name) or name in m.forwards):
            # `model.encode(x)`, `critic.get_value(obs)` on a model from elsewhere: a forward pass
            # (for a model of another file of the project, its methods that run it say so by what they do).
            return self._module_call(node, m, args)
        return UNKNOWN

    def _param(self, node) -> Value:
        return Value(kind=Kind.TENSOR, grad=Grad.YES, leaf=True, why=Evidence(node, "a parameter"))

    def _tensor_method(self, node: cst.Call, t: Value, name: str, args: list) -> Value:
        func = node.func
        vals = [v for _, v in args]
        if name in K.ENDS_GRAPH_METHODS:
            self._sink(node, [t], f"`.{name}()`")
        if name.startswith("register_"):
            return UNKNOWN  # `p.register_hook(fn)`: a handle, not a tensor
        if name in ("values", "items", "keys") and not args and t.has_graph:
            # a model's output of unknown structure read as a mapping (`terms.values()`): its entries
            # carry the output's graph, the view of them is no tensor
            entry = t.but(alias=None, fresh=False, scalar=False, elements=None)
            item = Value(kind=Kind.CONTAINER, elements=(NUMBER, entry), item=UNKNOWN) if name == "items" else (
                NUMBER if name == "keys" else entry)
            return Value(kind=Kind.CONTAINER, grad=item.grad, why=t.why, origins=t.origins, item=item)
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
        # a dim (`x.max(1)`), not another tensor (`a.max(b)`, elementwise)
        at = 1 if name in K.ORDER_FIRST else 0
        has_dim = keyword(node, "dim") is not None or len(positional(node)) > at and vals[at].kind is Kind.NUMBER
        items = K.TUPLE_RESULTS.get(name)
        if items is not None and (name not in K.TUPLE_NEEDS_DIM or has_dim):
            return self._tuple_result(node, items, [t] + vals, f"`.{name}()`")
        if name in ("split", "chunk", "unbind", "tensor_split"):
            part = t.but(alias=self._view_alias(t, func.value, node), fresh=False, leaf=False)
            return Value(kind=Kind.CONTAINER, grad=t.grad, item=self._made(part, node), origins=t.origins, why=t.why)
        if K.is_inplace_method(name):
            if name in K.ACCUMULATING_INPLACE and self.frame.mode is not GradMode.OFF:
                for a, v in args:  # `running.add_(loss)`: a running sum kept in place, as `running += loss`
                    if v.has_graph and a.keyword is None:
                        self._store(func.value, a.value, v, "accumulate")
                        break
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

    def is_loss_call(self, node: cst.Call) -> bool:
        """A torch loss computed, by what the callee is: an nn.*Loss module called (`criterion(out, y)`)
        or a loss of torch.nn.functional (`F.cross_entropy(out, y)`, however the file imports it)."""
        q = self._qualname(node.func) or ""
        if q.startswith("torch.nn.functional.") and q.rsplit(".", 1)[-1] in K.FUNCTIONAL_LOSSES:
            return True
        f = self.values.get(node.func, UNKNOWN)
        return f.kind is Kind.MODULE and f.loss

    def _call_qualified(self, node: cst.Call, q: str, args: list) -> Value:
        vals = [v for _, v in args]
        last = q.rsplit(".", 1)[-1]
        if q in K.RECORD_CLASSES:  # `LIFState = namedtuple("LIFState", ["z", "v", "i"])`: a class of tuples
            return Value(kind=Kind.CLASS, grad=Grad.NO, layer="record")
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
            volatile = keyword(node, "volatile")
            if volatile is not None and literal_bool(volatile.value):
                return vals[0].but(volatile=node)  # asks for no graph downstream, which it no longer does
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
        if q.startswith(K.DISTRIBUTIONS) and last[:1].isupper():
            # `Categorical(probs)`: an object carrying the graph of the tensors it is built from
            tensors = [v for v in vals if v.kind is not Kind.NUMBER]
            g, why, origins = join_grad(tensors) if tensors else (Grad.UNKNOWN, None, frozenset())
            return Value(kind=Kind.OBJECT, grad=g, why=why, origins=origins, layer="distribution")
        if q.startswith("torch."):
            return self._torch_function(node, q, last, args)
        if q.startswith("numpy."):
            self._sink(node, vals, f"`{q.replace('numpy.', 'np.', 1)}()`")
            return Value(kind=Kind.NDARRAY, grad=Grad.NO, why=Evidence(node, f"`{q}`"))
        if q in _RANDOM_NUMBERS:
            return NUMBER  # `random.randint(0, 1)`: a Python number (an epsilon-greedy action)
        if q.startswith(SINK_LIBRARIES):
            self._sink(node, vals, f"`{q.rsplit('.', 1)[-1]}()`")
        elif not q.startswith(("torch.", "builtins.", "math.")):
            self._opaque_call(node, args)
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
        for flag in ("affine", "elementwise_affine"):  # `nn.BatchNorm1d(n, affine=False)`: no weight, no bias
            k = keyword(node, flag)
            if k is not None and literal_bool(k.value) is False and "Norm" in last:
                return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=False, layer=last)
        if last in K.MODULE_CONTAINERS:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=Value(kind=Kind.MODULE, grad=Grad.NO), layer=last)
        if last in K.PARAM_CONTAINERS:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=self._param(node))
        if q in K.MODULE_WRAPPERS and vals:
            return vals[0]
        if last == "Sequential":
            p = any(v.kind is not Kind.MODULE or v.parameterized for v in vals)
            return Value(kind=Kind.MODULE, grad=Grad.NO, parameterized=p)
        if last[0].isupper() and "." not in q[len("torch.nn."):].replace("modules.", "", 1).rstrip(last).strip("."):
            return Value(kind=Kind.MODULE, grad=Grad.NO, layer=last)
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
                self._sink(node, [v for _, v in args], f"`torch.{last}()`")
                return Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"`torch.{last}`"))
            tensors = []
            for _, v in args:
                if v.kind is Kind.CONTAINER and v.item is not None:
                    tensors.append(v.item.but(origins=v.origins))
                elif v.kind is not Kind.NUMBER:
                    tensors.append(v)
            g, why, origins = join_grad(tensors) if tensors else (Grad.UNKNOWN, None, frozenset())
            # a dim: `torch.max(x, 1)`, not the other tensor of the elementwise `torch.min(q1, q2)`
            at = 2 if last in K.ORDER_FIRST else 1
            second = args[at][1] if len(positional(node)) > at else None
            has_dim = keyword(node, "dim") is not None or second is not None and second.kind is Kind.NUMBER
            items = K.TUPLE_RESULTS.get(q[len("torch."):])
            if items is not None and (last not in K.TUPLE_NEEDS_DIM or has_dim):
                return self._tuple_result(node, items, tensors, f"`{q}`")
            scalar = last in K.SCALAR_REDUCTIONS and not has_dim or (
                last in K.ELEMENTWISE and bool(tensors) and all(t.scalar for t in tensors)  # `torch.abs(loss)`
            )
            cuts, pred = combined_cuts(tensors) if tensors else (frozenset(), frozenset())
            return self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins, scalar=scalar, cuts=cuts,
                                    pred_cuts=pred), node)
        return UNKNOWN

    def _tuple_result(self, node: cst.Call, items: tuple, inputs: list, what: str) -> Value:
        """A tuple result (K.TUPLE_RESULTS): its differentiable items carry the inputs' graph, made here;
        the others (indices, pivots) never require grad."""
        g, why, origins = join_grad(inputs) if inputs else (Grad.UNKNOWN, None, frozenset())
        grad = self._made(Value(kind=Kind.TENSOR, grad=g, why=why, origins=origins), node)
        none = Value(kind=Kind.TENSOR, grad=Grad.NO, why=Evidence(node, f"an item of {what} that never requires grad"))
        elements = tuple(grad if i == "grad" else none for i in items)
        return Value(kind=Kind.CONTAINER, grad=grad.grad, elements=elements, item=grad, why=grad.why,
                     origins=grad.origins)

    def _builtin(self, node: cst.Call, name: str, args: list) -> Value:
        vals = [v for _, v in args]
        if name in SINK_BUILTINS:
            self._sink(node, vals, f"`{name}()`")
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
            if vals and vals[0].kind is Kind.TENSOR and name != "reversed" and not vals[0].guessed:
                # `list(torch.split(w, sizes))`, `list(t)`: its rows, each a tensor (`reversed(t)` is a tensor)
                row = self._element_of(vals[0], node)
                return Value(kind=Kind.CONTAINER, grad=row.grad, item=row, origins=row.origins, why=row.why,
                             leaf=row.leaf)
            return Value(kind=Kind.CONTAINER, grad=Grad.NO) if not vals else UNKNOWN
        if name == "dict" and not vals:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO)
        if name == "dict" and len(args) == 1 and not args[0][0].keyword and not args[0][0].star \
                and vals[0].kind is Kind.CONTAINER and vals[0].keyed:
            return vals[0].but(alias=None)  # `dict(metrics)`: a shallow copy holds the same entries
        if name in ("sum", "max", "min") and len(vals) == 1 and vals[0].kind is Kind.CONTAINER and vals[0].item:
            item = vals[0].item
            return self._made(item.but(origins=vals[0].origins | item.origins, alias=None, leaf=False, scalar=item.scalar)
                              if item.grad is Grad.YES else item, node)
        if name == "sum" and len(vals) == 1 and vals[0].kind is Kind.TENSOR and vals[0].has_graph and not vals[0].guessed:
            # the sum of its rows (not of an item of a model's output of unknown structure: `decode_lengths`
            # unpacked from `decoder(imgs, caps, caplens)` may be a list of ints)
            return self._made(self._element_of(vals[0], node).but(leaf=False), node)
        if name == "enumerate" and vals:
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=Value(kind=Kind.CONTAINER, elements=(NUMBER, self._element_of(vals[0], node))))
        if name == "zip" and len(args) == 1 and args[0][0].star == "*":
            # `columns = zip(*rows)`: its tuples are columns, each holding one item of every row (a collate
            # function's examples, one column per field)
            cell = self._element_of(self._element_of(vals[0], node), node)
            column = self._container([cell])
            return Value(kind=Kind.CONTAINER, grad=column.grad, item=column, why=column.why, origins=column.origins)
        if name == "zip" and vals:
            # tuples of one element of each: a pair holds the graph its tensor does
            parts = [self._element_of(v, node) for v in vals]
            pair = self._container(parts, tuple(parts))
            return Value(kind=Kind.CONTAINER, grad=pair.grad, item=pair, why=pair.why, origins=pair.origins)
        if name == "map" and len(args) == 2 and isinstance(args[0][0].value, cst.Name) \
                and self.lookup(args[0][0].value.value) is None:
            # `map(sum, zip(a, b))`: a builtin applied to each element
            item = self._builtin(node, args[0][0].value.value, [(args[1][0], self._element_of(vals[1], node))])
            return Value(kind=Kind.CONTAINER, grad=item.grad, item=item, why=item.why, origins=item.origins)
        if name == "range":
            return Value(kind=Kind.CONTAINER, grad=Grad.NO, item=NUMBER)
        if name == "round" and vals and vals[0].kind is Kind.TENSOR:
            return vals[0].but(alias=None)
        return UNKNOWN

