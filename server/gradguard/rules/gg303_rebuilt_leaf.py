from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.evidence import named_params
from gradguard.engine.handing import argument
from gradguard.engine.model import GradMode
from gradguard.engine.syntax import is_self_attribute, keyword, literal_bool, place_key
from gradguard.engine.values import Evidence, Grad, Kind
from gradguard.engine.walk import descendants
from gradguard.engine.walk import walk as walk_tree
from gradguard.findings import Severity
from gradguard.rules._build import short
from gradguard.rules.base import Invalid, Rule, Valid
from gradguard.rules.gg104_state_carried_across_forward import derived_names

# Calls that make a new tensor from data: with `requires_grad=True` they make a leaf.
REBUILDERS = ("torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.autograd.Variable", "torch.autograd.variable.Variable")
# Calls that make a fresh tensor (a leaf): what a loss module may rightly make require grad.
FRESH = ("torch.tensor", "torch.zeros", "torch.ones", "torch.full", "torch.empty", "torch.scalar_tensor", "torch.as_tensor")
# Methods that collect or report a value, not a model's: `losses.append(x)`, `writer.add_scalar(...)`.
NOT_MODELS = frozenset("append extend insert add update put write log log_dict add_scalar set format".split())
# Wrappers that keep the rebuilt leaf's identity: `torch.tensor(...).to(device)`.
PASS_THROUGH = ("to", "cuda", "cpu", "float", "double", "half", "type", "requires_grad_")
# Methods that keep a value's graph (`loss.squeeze()`, `out.view_as(x)`, `loss.float()`).
KEEPS_GRAPH = K.VIEW_METHODS | K.SAME_GRAD_METHODS_RETURN_SELF_KIND


# Ops that end a graph: what a leaf made from their results lost (a cut), if there was one.
ENDS = K.ENDS_GRAPH_METHODS | {"detach"}
NON_LEAF = "you can only change requires_grad flags of leaf variables."


@dataclass(eq=False)
class Rebuilt:
    """A fresh leaf made from a value whose graph was cut, followed through the code after it."""

    node: cst.CSTNode  # what made the leaf (the call, or `x.requires_grad = True`)
    source: cst.CSTNode  # the value it was made from
    cuts: frozenset  # where that value's graph was cut
    names: set = field(default_factory=set)  # names holding the leaf, or values computed from it
    backward: Optional[cst.CSTNode] = None  # a `.backward()` that reaches it
    intended: bool = False  # optimised on purpose (an optimizer, `.grad` read) or fed to a model
    stamp: tuple = ()
    graph: Optional[Evidence] = None  # the copy itself left this graph behind (`Variable(loss, requires_grad=True)`)
    setter: bool = False  # `loss.requires_grad = True` on a value computed with a graph: raises, or the graph was cut
    unsized: bool = False  # computed by a callable of unknown result: a loss only if a `.backward()` proves it 0-dim
    # the cut is where a graph would end (`.argmax()`, `.item()` of a value of unknown grad), not a
    # proved one: reported only when the leaf itself is back-propagated, which then reaches nothing else
    presumed: bool = False
    module_message: object = None  # the setter in a loss module's forward(): its message where no backward is followed


class RebuiltLeaf(Rule):
    """
    ## What it does
    Finds a new leaf tensor made from a value whose graph was cut, and then
    back-propagated: `torch.tensor(loss.item(), requires_grad=True)`,
    `torch.tensor(out.detach().cpu().numpy(), requires_grad=True)`,
    `loss.requires_grad = True` or `loss.requires_grad_()` on a loss computed
    from a detached prediction or under `torch.no_grad()`, and
    `Variable(loss, requires_grad=True)` (or `torch.tensor(...)`) of a loss that
    still has its graph: the copy is a new leaf and leaves that graph behind.
    A copy or the setter on a value computed through an op that ends any graph
    (`.argmax()`, `.item()`, `.numpy()`, `.detach()`) is reported when the leaf
    itself is back-propagated, even where nothing shows what that op was given:
    that `.backward()` reaches the leaf alone.
    `loss.requires_grad = True` on a loss computed from a model is reported too:
    the setter raises `you can only change requires_grad flags of leaf
    variables.` on any value with a graph, so where it runs, the graph was
    already cut (every parameter frozen, a detach, no_grad). So is the setter in
    the `forward()` of a loss module on the loss it computes from its inputs
    (the prediction arrived cut, or the line raises). A loss is told by what
    computed it, not by its name: a torch loss, or any callable the code holds
    whose result a `.backward()` without a gradient proves 0-dim (`err =
    fn(net(x), y) * 1.0`), and a loss module by the 0-dim value its `forward()`
    returns.

    ## Why is this bad?
    It is the usual "fix" for `RuntimeError: element 0 of tensors does not
    require grad and does not have a grad_fn`: the error goes away because the
    new tensor is a leaf that requires grad, but the graph back to the model was
    already cut (by `.item()`, `.detach()`, `.numpy()` or `no_grad`). `backward()`
    then runs without error, reaches only the new leaf, and the model's
    parameters never receive a gradient: training silently does nothing.

    ## Example
    ```python
    loss = criterion(model(x), y)
    loss = torch.tensor(loss.item(), requires_grad=True)
    loss.backward()
    ```

    ## Use instead
    ```python
    loss = criterion(model(x), y)
    loss.backward()
    ```

    ## Fix safety
    There is no automatic fix: the cut (named in the message, and a related
    location) must go, and only the author knows what it was for. A leaf that
    is optimised on purpose - given to an optimizer, its `.grad` read, or fed
    to a model (an adversarial input, a latent code) - is not reported; nor is
    a tensor (not a loss) made a leaf and passed to a callee the analysis cannot
    see (`decoder.run(z)`), which may be a model that learns from it.
    """

    code = "GG303"
    name = "rebuilt-leaf"
    severity = Severity.ERROR
    summary = "A new leaf made from a value whose graph was cut: `backward()` runs, the model never learns"

    def __init__(self, flow, settings, reports):
        super().__init__(flow, settings, reports)
        self.open: dict = {}  # creation node -> Rebuilt (the latest analysis of its function)
        self.pending: dict = {}  # call node -> Rebuilt, until the statement holding it binds a name
        self.bound: dict = {}  # name -> the expression last assigned to it (in the walk's order)
        self.bound_in: dict = {}  # name -> the function (its FunctionInfo, None at module level) that assigned it
        self.off: dict = {}  # call node -> the `torch.no_grad()` block it ran in (an unknown callee's cut)

    # ------------------------------------------------------------- creation
    def visit_Call(self, node: cst.Call) -> None:
        self._note_no_grad(node)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            self._backward(node, func.value)
            return
        if self.flow._qualname(func) == "torch.autograd.backward" and node.args:
            self._backward(node, node.args[0].value)
            return
        self._uses(node)
        self._setter_by_helper(node)
        if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
            flag = literal_bool(self.flow.handed_on(node.args[0].value)) if node.args else True
            if flag is not False:
                # (the tensor itself, however it reached the call: `as_pair(loss)[0].requires_grad_()`)
                self._made(node, self.flow.handed_on(func.value), self.flow.value(func.value))
            return
        if (self.flow._qualname(func) or "") in REBUILDERS and node.args:
            rg = keyword(node, "requires_grad")
            if rg is not None and literal_bool(self.flow.handed_on(rg.value)) is True:
                self._made(node, node.args[0].value, self.flow.value(node.args[0].value), copies=True)

    def _note_no_grad(self, node: cst.Call) -> None:
        """A call that ran inside a `torch.no_grad()` block: the cut of what it computed, even when
        the callee is unknown (`model.head(feature)`), so the flow recorded no graph to lose."""
        frame = self.flow.frame
        at = frame.mode_nodes[-1]
        if at is not None and frame.mode is GradMode.OFF and self.flow.value(node).grad is Grad.NO:
            self.off[node] = Evidence(at, f"`{short(self.code_of(at))}`")

    def _made(self, node: cst.CSTNode, source: cst.BaseExpression, v, copies: bool = False, setter: bool = False) -> None:
        # Only a value proved to have had a graph that was cut on the way: a tensor with a
        # graph of its own cannot be made a leaf (PyTorch raises), and data never had one -
        # except by a copy (`copies`), which leaves the graph behind.
        graph, setter_asked = None, setter
        key = place_key(source)
        if key in self.bound:
            # `loss.backward()` below is evidence that `loss` has a graph - unless, as here, the
            # code made it a leaf first: what it was computed from decides.
            expr = self.bound[key]
            cuts = self._cuts(expr, whole=copies or setter)
        else:
            expr = None if key is not None else source
            cuts = _cuts_of(v) if v.grad is Grad.NO else frozenset()
        if not cuts and (copies or setter) and expr is not None:
            # A copy leaves the graph behind. The `requires_grad` setter raises on any non-leaf
            # ("you can only change requires_grad flags of leaf variables."): on a value computed
            # with a graph it either raises or runs because something already cut that graph.
            graph = self._graph(expr)
            cuts = frozenset((Evidence(node, f"`{short(self.code_of(node))}`"),)) if graph is not None else cuts
        else:
            setter = False
        presumed = False
        if not cuts and (copies or setter_asked):
            # No graph proved before the cut - but a leaf computed through an op that ends any graph
            # (`Variable(dice, requires_grad=True)` of a dice of `pred.argmax(-1)`, a tensor of `.item()`
            # values): a copy leaves any graph behind, and the setter runs only where no operand had one
            # (it raises on a graph), so the leaf's own `.backward()` reaches that leaf alone.
            # (`requires_grad_()` is a no-op on a graph: there an operand may still carry one.)
            cuts = self._ends(source)
            presumed, graph, setter = bool(cuts), None, False
        if not cuts:
            return
        r = Rebuilt(node, source, cuts, stamp=self.stamp(), graph=graph, setter=setter and graph is not None,
                    presumed=presumed)
        if expr is not None and self.flow.value(expr).grad is Grad.UNKNOWN and not self.flow.value(expr).scalar:
            r.unsized = True  # (what `_computed_by` found: a loss only once it is back-propagated as one)
        self.open[node] = r
        self.pending[node] = r
        in_place = isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "requires_grad_"
        if in_place and key is not None:
            r.names.add(key)  # `loss.requires_grad_()` makes `loss` itself the leaf

    def _cuts(self, expr: cst.BaseExpression, whole: bool = False) -> frozenset:
        """Where the graph of what `expr` computes was cut, if it has none left. `whole`: the leaf is
        made by the setter (or a copy): where `x.requires_grad = True` runs, no operand of `x` had a
        graph, so any cut operand is where it was lost; `requires_grad_()` is a no-op on a graph, so
        only a cut prediction (the first argument) counts there."""
        v = self.flow.value(expr)
        if v.grad is Grad.NO:
            return _cuts_of(v) or (self._no_grad_blocks(expr) if v.scalar else frozenset())
        call = self._computed_by(expr) if v.grad is Grad.UNKNOWN else None
        if call is None:
            return frozenset()
        # `criterion(out, y)`, `loss_fn(out, y) * 1.0`: a callable given a cut prediction (and targets)
        args = [a.value for a in call.args if a.keyword is None]
        if not args or any(self.flow.value(a).grad is Grad.YES for a in args):
            return frozenset()
        operands = args if whole else args[:1]
        return frozenset().union(*(_cuts_of(self.flow.value(a)) for a in operands)) \
            or frozenset().union(*(self._no_grad_blocks(a) for a in operands)) or self._no_grad_blocks(call, own=True)

    def _ends(self, expr: cst.BaseExpression) -> frozenset:
        """Where what `expr` computes went through an op that ends a graph (`.item()`, `.argmax()`,
        `.numpy()`, `.detach()`, ...) applied to a value that may have had one (not known to be
        without a graph, nor a number or array), following the names it reads to what they were last
        bound to in the same function, and a parameter to the argument of the call the function was
        analysed for (up the calls: a helper given the loss)."""
        found, seen, todo = set(), set(), [(expr, self.flow.function)]
        while todo and len(seen) < 64:
            e, fn = todo.pop()
            for n in descendants(e, stop=(cst.Lambda, cst.FunctionDef)):
                if isinstance(n, cst.Name) and (n.value, fn) not in seen:
                    seen.add((n.value, fn))
                    todo.extend(self._bound_to(n.value, fn))
                elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in ENDS:
                    receiver = self.flow.value(n.func.value)
                    if receiver.grad is not Grad.NO and receiver.kind not in (Kind.NUMBER, Kind.NDARRAY, Kind.CONTAINER):
                        found.add(Evidence(n, f"`.{n.func.attr.value}()`"))
        return frozenset(found)

    def _bound_to(self, name: str, fn) -> list:
        """[(expression, its function)] `name` holds in `fn`: what `fn` last assigned it, or, for a
        parameter of `fn`, the argument of the call `fn` was analysed for."""
        if name in self.bound and self.bound_in.get(name) is fn:
            return [(self.bound[name], fn)]
        passed = fn.passed(name) if fn is not None and name in named_params(fn.node) else None
        return [passed] if passed is not None else []

    def _computed_by(self, expr: cst.BaseExpression) -> Optional[cst.Call]:
        """The call that computed `expr`, through ops that keep its graph (`* 1.0`, `+ 0`, `[...]`,
        `.squeeze()`, `.view_as(x)`), when it is a loss's or may be one: a torch loss, or a callable the
        code holds whose result nothing tells (`criterion`, `p4`, `self.loss_fn` - whatever the name)."""
        while True:
            if isinstance(expr, cst.Subscript):
                expr = expr.value
            elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _SCALING) \
                    and isinstance(expr.right, (cst.Integer, cst.Float)):
                expr = expr.left
            elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in KEEPS_GRAPH:
                expr = expr.func.value
            else:
                break
        if not isinstance(expr, cst.Call):
            return None
        q = self.flow._qualname(expr.func) or ""
        callee = self.flow.value(expr.func)
        if self.flow.is_loss_call(expr):
            return expr
        held = isinstance(expr.func, cst.Name) or isinstance(expr.func, cst.Attribute) and is_self_attribute(expr.func)
        return expr if held and callee.kind is Kind.UNKNOWN and not q else None

    def _no_grad_blocks(self, expr: cst.BaseExpression, own: bool = False) -> frozenset:
        """The `torch.no_grad()` blocks that computed the operands of `expr`, a loss without a graph:
        `F.cross_entropy(output, label)` of an `output = model.head(feature)` computed inside one.
        Only for a loss (a scalar, or a loss callable's result): a tensor made a leaf may go on into
        a model the code trains on purpose (`z.requires_grad = True; decoder(z)`)."""
        found = set()
        for n in [expr] if own else [expr, *_names(expr)]:
            why = self.flow.value(n).why
            if why is not None and why.node in self.off:
                found.add(self.off[why.node])
        return frozenset(found)

    def _graph(self, expr: cst.BaseExpression) -> Optional[Evidence]:
        """Evidence that `expr` carries a graph: a value computed with one, or a loss callable given
        one (`loss_op(output, y)` of an `output = model(x)`). Not a bare name: its evidence may be the
        `.backward()` of the very leaf made from it."""
        if isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        v = self.flow.value(expr)
        if v.has_graph:
            return v.why or Evidence(expr, f"`{short(self.code_of(expr))}`")
        call = self._computed_by(expr) if v.grad is Grad.UNKNOWN else None
        if call is None:
            return None
        return next((a.why for a in map(self.flow.value, (arg.value for arg in call.args)) if a.has_graph and a.why), None)

    def leave_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            key = place_key(t.target)
            if key is not None and not self._keeps(node.value, key):
                self.bound[key] = node.value
                self.bound_in[key] = self.flow.function
        target = node.targets[0].target
        if len(node.targets) == 1 and isinstance(target, cst.Attribute) and target.attr.value == "requires_grad" \
                and place_key(target.value) is not None and literal_bool(self.flow.handed_on(node.value)) is True:
            before = self.flow.value(target.value)
            self._made(node, target.value, before, setter=True)
            made = self.open.get(node)
            made = made if made is not None and made.stamp == self.stamp() else None  # (this analysis's)
            if isinstance(target.value, cst.Name) or is_self_attribute(target.value):
                message = self._loss_module_setter(node, target.value)
                if message is not None and made is None:
                    self.report(node, message)
                elif message is not None:
                    # the leaf may still be back-propagated where this analysis follows it (the cut and
                    # the backward, finish()); where it does not (a caller's `loss.backward()` on what
                    # forward() returned), the loss module's own message stands
                    made.module_message = message
            if made is not None:
                made.names.add(place_key(target.value))
            self.pending.pop(node, None)
            return
        self._flows(node.value, [t.target for t in node.targets])

    @staticmethod
    def _keeps(value: cst.BaseExpression, key: str) -> bool:
        """`loss = loss.view_as(loss)`, `loss = loss.float()`: the name still holds what it was computed from."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in KEEPS_GRAPH:
            value = value.func.value
        return place_key(value) == key

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._flows(node.value, [node.target])

    def _flows(self, value: cst.BaseExpression, targets: list) -> None:
        """Names bound from the leaf (or from values computed from it) follow it."""
        if not self.open:
            return  # nothing rebuilt yet (nearly every file): no walk of the value
        made = self._outer_rebuild(value)
        names = {k for t in targets if isinstance(t, (cst.Name, cst.Tuple, cst.List)) or place_key(t) for k in _keys(t)}
        reaching = self._reaching(value)
        for r in self.open.values():
            if r is made or r in reaching:
                r.names |= names
            else:
                r.names -= names  # rebound to something else
        # this function's statement is done (a callee's, walked in the middle of its caller's statement -
        # `Record(out=Variable(...))` runs `__init__` - leaves the caller's pending)
        self.pending = {n: r for n, r in self.pending.items() if r.stamp[0] is not self.flow.function}

    def _outer_rebuild(self, value: cst.BaseExpression) -> Optional[Rebuilt]:
        """The rebuilt leaf a statement's value is (`torch.tensor(...).to(device)` too)."""
        node = self.flow.handed_on(value)
        while True:
            if node in self.pending:
                return self.pending[node]
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in PASS_THROUGH:
                node = node.func.value
                continue
            return None

    # ---------------------------------------------------------------- uses
    def _reaching(self, expr: cst.BaseExpression) -> list:
        if not self.open:
            return []
        mentioned = _keys(expr)
        found = [r for r in self.open.values() if r.names & mentioned and self.current(r.stamp)]
        # the leaf returned by a function of the file (`err = as_trainable(loss)`): the value says where it was made
        why = self.flow.value(expr).why
        made = self.open.get(why.node) if why is not None and self.flow.value(expr).leaf else None
        if made is not None and made not in found and self.current(made.stamp):
            found.append(made)
        return found

    def _uses(self, node: cst.Call) -> None:
        """An optimizer or `autograd.grad` given the leaf, or a model fed with it: optimised on purpose."""
        if not self.open:
            return
        q = self.flow._qualname(node.func) or ""
        callee = self.flow.value(node.func)
        model = callee.kind is Kind.MODULE and callee.parameterized and not callee.loss
        if q.startswith("torch.optim.") or q == "torch.autograd.grad" or model:
            for arg in node.args:
                for r in self._reaching(arg.value):
                    r.intended = True
        elif callee.kind is Kind.UNKNOWN and not q.startswith("torch."):
            # `decoder.run(z)` on features made a leaf: an unknown callee may be a model that learns
            # from them (a frozen encoder's output fed to a decoder; `criterion(feats, y)` may be a margin
            # head with weights, whatever it is called). A 0-dim loss made a leaf stays reported.
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in NOT_MODELS:
                return
            for arg in node.args:
                if place_key(arg.value) is not None:  # the tensor itself, not a number computed from it
                    for r in self._reaching(arg.value):
                        if not self.flow.value(r.source).scalar:
                            r.intended = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "grad" and place_key(node.value) is not None:
            for r in self._reaching(node.value):
                r.intended = True

    def _backward(self, node: cst.Call, receiver: cst.BaseExpression) -> None:
        for r in self._reaching(receiver):
            if r.backward is None:
                r.backward = node

    # -------------------------------------------------------------- report
    def _setter_by_helper(self, node: cst.Call) -> None:
        """`make_leaf(mean_losses)` in a loss module's forward, a function of the file that sets
        `requires_grad = True` on the parameter the argument binds: the setter runs at the call (the
        function's summary, applied where it is called, whichever is defined first)."""
        f = self.flow.value(node.func)
        fn = f.cls if f.kind is Kind.FUNCTION and not f.callees else None
        if not isinstance(getattr(fn, "node", None), cst.FunctionDef):
            return
        for stmt in descendants(fn.node.body, stop=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            target = stmt.targets[0].target if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 else None
            if not (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"
                    and isinstance(target.value, cst.Name) and literal_bool(stmt.value) is True):
                continue
            bound = fn.cls is not None and isinstance(node.func, cst.Attribute)
            arg = argument(fn.node, node, target.value.value, (), bound=bound)
            if arg is not None and (isinstance(arg, cst.Name) or is_self_attribute(arg)):
                message = self._loss_module_setter(node, arg, via=node)
                if message is not None:
                    self.report(node, message)
                return

    def _loss_module_setter(self, node: cst.Assign, place: cst.BaseExpression, via: Optional[cst.Call] = None):
        """`mean_losses.requires_grad = True` in the `forward()` of a loss module, on a value it computed
        from the prediction it was given: with a graph the setter raises; where it runs, the
        prediction arrived already cut from its model (the triplet-loss thread's no_grad), and the
        backward of this loss reaches no parameter. No legitimate loss makes its result a leaf.
        A loss module is one whose forward returns a 0-dim value (`losses.mean()`), whatever its name;
        the value may be kept on `self` on the way (`self.loss = losses.mean()`). The message to report,
        or None."""
        fn = self.flow.function
        cls = fn.cls if fn is not None else None
        key = place_key(place)
        if cls is None or fn.name != "forward" or not cls.module_like or not self.flow.value(place).scalar \
                or not any(r.value is not None and place_key(r.value) == key for r in _returns(fn.node)):
            return None
        params = {p.name.value for p in fn.node.params.params[1:]}
        derived = derived_names(fn.node, params)[0]
        if isinstance(place, cst.Name):
            if key in params or key not in derived:
                return None  # a parameter itself, or not computed from the inputs
            b = self.flow.lookup(key)
            made = b.node if b is not None else None
        else:
            made = self.bound.get(key)
            if made is None or not _keys(made) & derived:
                return None
        if isinstance(made, cst.Call) and (self.flow._qualname(made.func) or "").startswith(FRESH):
            return None  # `loss = torch.tensor(0.0, device=pred.device)`: a fresh leaf (an empty batch's zero loss)
        first = next(iter(p.name.value for p in fn.node.params.params[1:2]), "its input")
        made = f"`{self.code_of(place)}.requires_grad = True`"
        if via is not None:  # (a helper of the file sets it: `make_leaf(mean_losses)`)
            made = f"`{short(self.code_of(via))}`, which sets {made},"

        def message(line_of):
            return (
                f"{made} in `{cls.name}.forward()`, on a loss computed from `{first}`: if that has a graph, this "
                f"line raises \"{NON_LEAF}\"; if it runs, the prediction arrived already cut from its model (a "
                "detach or no_grad upstream), and back-propagating this loss reaches no parameter - the model never "
                "learns; remove the line and find the cut"
            )

        return message

    def finish(self) -> None:
        for r in self.open.values():
            if not self.current(r.stamp):
                continue
            if r.backward is None or r.intended or (r.unsized or r.presumed) and not self._scalar_backward(r):
                if r.module_message is not None:
                    self.report(r.node, r.module_message)
                continue
            self._report(r)

    def _scalar_backward(self, r: Rebuilt) -> bool:
        """`loss.backward()` with no gradient, on the leaf itself (the place made a leaf, or bound to
        the copy): PyTorch creates the gradient implicitly only for one element, so the leaf is a
        0-dim loss, whatever computed it."""
        func = r.backward.func
        if r.backward.args or not isinstance(func, cst.Attribute):
            return False
        key = place_key(func.value)
        if key is None:
            return False
        v = self.flow.value(func.value)
        if v.leaf and v.why is not None and v.why.node is r.node:
            return True  # the leaf a function of the file returned (`loss = self.compute_objectives(...)`)
        made = self.flow.handed_on(self.bound[key]) if key in self.bound else None
        while isinstance(made, cst.Call) and isinstance(made.func, cst.Attribute) and made.func.attr.value in PASS_THROUGH:
            made = made.func.value  # `Variable(...).to(device)`
        return key == place_key(r.source) or made is r.node

    def _report(self, r: Rebuilt) -> None:
        if isinstance(r.node, cst.Assign):
            made = f"{self.code_of(r.node.targets[0].target)} = True"
        elif isinstance(r.node.func, cst.Attribute) and r.node.func.attr.value == "requires_grad_":
            made = f"{short(self.code_of(r.node.func.value))}.requires_grad_()"
        else:
            made = f"{self.code_of(r.node.func)}(..., requires_grad=True)"
        source = short(self.code_of(r.source))
        backward = r.backward

        def first_cut(line_of) -> Evidence:
            return min(r.cuts, key=lambda e: line_of(e.node))

        def message(line_of) -> str:
            cut = first_cut(line_of)
            where = f"({cut.text} on line {line_of(cut.node)})"
            if r.setter:
                return (
                    f"`{made}` on `{source}`, computed with a graph ({r.graph.text} on line {line_of(r.graph.node)}): "
                    f"if that graph is there, this line raises \"{NON_LEAF}\"; if it runs, something already cut "
                    f"the graph (frozen parameters, a detach, no_grad) and `.backward()` on line {line_of(backward)} "
                    "reaches no parameter, so the model never learns; remove the line and find the cut"
                )
            if r.graph is not None:
                return (
                    f"`{made}` makes a new leaf from `{source}` ({r.graph.text} on line {line_of(r.graph.node)}), "
                    f"without its graph: `.backward()` on line {line_of(backward)} runs without error, but no "
                    f"gradient reaches what computed it, so the model never learns; back-propagate `{source}` itself"
                )
            if r.presumed:
                how = f"a new leaf from `{source}`" if made.endswith("requires_grad=True)") else f"`{source}` a new leaf"
                leaf = f"`{made}` makes {how}, computed through {cut.text} (line {line_of(cut.node)}), which leaves no graph"
                return (
                    f"{leaf}: `.backward()` on line {line_of(backward)} reaches only that leaf, so no gradient reaches "
                    "what computed it and the model never learns; remove the cut and back-propagate the original tensor"
                )
            if made.endswith("requires_grad=True)"):
                leaf = f"`{made}` makes a new leaf from `{source}`, whose graph was cut {where}"
            else:
                leaf = f"`{made}` makes `{source}` a new leaf, but its graph was cut {where}"
            return (
                f"{leaf}: `.backward()` on line {line_of(backward)} runs without error, but no gradient reaches "
                "what computed it, so the model never learns; remove the cut and back-propagate the original tensor"
            )

        cuts = sorted(r.cuts, key=lambda e: self.code_of(e.node))
        related = [(e.node, "the graph is cut here") for e in cuts] + [(backward, "back-propagated here")]
        if r.graph is not None:
            related = [(r.graph.node, "the graph is created here"), (backward, "back-propagated here")]
        self.report(r.node, message, related=related)

    VALID = [
        Valid(
            """
import torch.nn.functional as F


def align_step(out, opt):
    hard = out.argmax(-1).float()
    err = F.mse_loss(out.sum(-1), hard)
    err.requires_grad_()
    opt.zero_grad()
    err.backward()
    opt.step()
""",
            runtime="net = torch.nn.Linear(4, 3)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "align_step(net(torch.randn(5, 4)), opt)\nassert net.weight.grad is not None",
            note="issue 33: an argmax target, and `requires_grad_()`, a no-op on the prediction's graph: the backward "
            "reaches the model",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
criterion = nn.CrossEntropyLoss()
x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
x_adv = x.clone()
for _ in range(3):
    x_adv.requires_grad_()
    loss = criterion(model(x_adv), y)
    loss.backward()
    x_adv = (x_adv + 0.01 * x_adv.grad.sign()).detach()
""",
            runtime='assert all(p.grad is not None for p in model.parameters())',
            note='an adversarial input made a leaf on purpose (its .grad is read), fed to the model',
        ),
        Valid(
            """
import torch
from torch import nn

encoder, decoder = nn.Linear(6, 2), nn.Linear(2, 6)
images = torch.randn(4, 6)
z = encoder(images).detach().requires_grad_()
opt = torch.optim.Adam([z], lr=0.1)
for _ in range(3):
    loss = (decoder(z) - images).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime='assert z.grad is not None',
            note='a latent code optimised on purpose: given to an optimizer',
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
criterion = nn.MSELoss()
history = []
for step in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = criterion(model(x), y)
    history.append(torch.tensor(loss.item()))
    loss.backward()
""",
            runtime='assert model.weight.grad is not None',
            note='a logged copy without requires_grad; the loss itself is back-propagated',
        ),
        Valid(
            """
import numpy as np
import torch

weights = np.random.randn(3, 2).astype("float32")
w = torch.tensor(weights, requires_grad=True)
loss = (torch.randn(5, 3) @ w).pow(2).mean()
loss.backward()
""",
            runtime='assert w.grad is not None',
            note='a leaf from plain data, never a graph',
        ),
            Valid(
            """
import torch
from torch import nn


def feature_saliency(extractor, head, images, labels):
    with torch.no_grad():
        feats = extractor.body(images)
    feats.requires_grad = True
    loss = nn.functional.cross_entropy(head(feats), labels)
    loss.backward()
    return feats.grad.abs().mean(0)


extractor = nn.Module()
extractor.body = nn.Linear(6, 4)
head = nn.Linear(4, 3)
feature_saliency(extractor, head, torch.randn(5, 6), torch.tensor([0, 1, 2, 0, 1]))
""",
            runtime="assert head.weight.grad is not None",
            note="features made a leaf on purpose under no_grad, fed to a model, their .grad read",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.autograd import Variable

encoder, head = nn.Linear(4, 3), nn.Linear(3, 2)
x, y = torch.randn(6, 4), torch.randn(6, 2)
hidden = encoder(x)
cut = Variable(hidden, requires_grad=True)
loss = nn.functional.mse_loss(head(cut), y)
loss.backward()
hidden.backward(cut.grad)
""",
            runtime="assert encoder.weight.grad is not None and head.weight.grad is not None",
            note="a copy of a graph made a leaf on purpose (split back-propagation): fed to a model, its .grad read",
        ),
            Valid(
            """
import torch
from torch import nn


def finetune_decoder(model, batches, opt):
    model.train()
    for batch in batches:
        with torch.no_grad():
            z = model.encoder(batch)
        z.requires_grad = True
        loss = nn.functional.mse_loss(model.decoder(z), batch)
        opt.zero_grad()
        loss.backward()
        opt.step()


ae = nn.Module()
ae.encoder, ae.decoder = nn.Linear(4, 2), nn.Linear(2, 4)
finetune_decoder(ae, [torch.randn(3, 4)], torch.optim.SGD(ae.decoder.parameters(), lr=0.1))
""",
            runtime="assert ae.decoder.weight.grad is not None and ae.encoder.weight.grad is None",
            note="a code computed under no_grad made a leaf and fed on to a submodule that learns (not a loss)",
        ),
        Valid(
            """
import torch
from torch import nn

encoder = nn.Linear(3, 2)


def finetune_decoder(decoder, batches, opt):
    for batch in batches:
        with torch.no_grad():
            z = encoder(batch)
        z.requires_grad = True
        recon = decoder.run(z)
        loss = nn.functional.mse_loss(recon, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            runtime='class Decoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(2, 3)\n\n    def run(self, z):\n        return self.net(z)\n\n\ndec = Decoder()\nfinetune_decoder(dec, [torch.randn(4, 3)], torch.optim.SGD(dec.parameters(), lr=0.1))\nassert dec.net.weight.grad is not None',
            note="a frozen encoder's features made a leaf and fed to an unknown callee (`decoder.run`), which may be a model that learns from them",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
x = torch.randn(8, 4)
x.requires_grad = True
model(x).sum().backward()
saliency = x.grad.abs()
""",
            runtime='assert x.grad is not None',
            note='an input made a leaf for its gradient (saliency): not computed with a graph',
        ),
        Valid(
            """
import torch
from torch import nn


class MaskedMSELoss(nn.Module):
    def forward(self, pred, target, mask):
        if mask.sum() == 0:
            loss = torch.tensor(0.0, device=pred.device)
            loss.requires_grad = True
            return loss
        return ((pred - target) ** 2 * mask).sum() / mask.sum()
""",
            note="a loss module's zero loss for an empty batch: a fresh tensor made a leaf, not a loss computed from the prediction",
            runtime="loss = MaskedMSELoss()(torch.randn(3), torch.randn(3), torch.zeros(3))\nloss.backward()\nassert loss.item() == 0.0",
        ),
        Valid(
            """
import torch
from torch import nn


class MaskedMSELoss(nn.Module):
    def forward(self, pred, target, mask):
        if mask.sum() == 0:
            loss = torch.tensor(0.0, device=pred.device)
            loss.requires_grad = True
            return loss
        return ((pred - target) ** 2 * mask).sum() / mask.sum()


net = nn.Linear(4, 3)
criterion = MaskedMSELoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 3)
for mask in (torch.zeros(5, 3), torch.ones(5, 3)):
    loss = criterion(net(x), y, mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            note="issue 33: the same loss module analysed for its caller in the file: the prediction comes with its graph, the leaf is a fresh zero",
            runtime="assert net.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


model = nn.Linear(3, 1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
loss = nn.functional.mse_loss(model(x), y)
tagged(loss, "loss")[0].requires_grad_()
loss.backward()
""",
            note="`requires_grad_()` through a helper's tuple on a loss that kept its graph: a no-op",
            runtime="assert model.weight.grad is not None",
        ),
        Valid(
            """
import torch


def distill_step(student_out, teacher, xb, fn, opt):
    soft = torch.softmax(teacher(xb), -1).detach()
    err = fn(student_out, soft)
    err.requires_grad_()
    opt.zero_grad()
    err.backward()
    opt.step()
""",
            runtime='student, teacher = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)\nx = torch.randn(4, 3)\ndistill_step(torch.log_softmax(student(x), -1), teacher, x, torch.nn.KLDivLoss(reduction="batchmean"), torch.optim.SGD(student.parameters(), lr=0.1))\nassert student.weight.grad is not None and teacher.weight.grad is None',
            note='`requires_grad_()` is a no-op on a graph: a loss whose prediction (the first argument) came in with one, the detached teacher only its target',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def tune_head(net, proj, batches, opt):
    for xb, yb in batches:
        with torch.no_grad():
            z = net.body(xb)
        code = proj(z, yb)
        code.requires_grad = True
        err = F.mse_loss(net.head(code), yb)
        opt.zero_grad()
        err.backward()
        opt.step()
""",
            runtime='net = torch.nn.Module()\nnet.body, net.head = torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)\ntune_head(net, lambda z, y: z * 2, [(torch.randn(5, 4), torch.randn(5, 2))], torch.optim.SGD(net.head.parameters(), lr=0.1))\nassert net.head.weight.grad is not None and net.body.weight.grad is None',
            note='features computed under no_grad, passed through a given callable and made a leaf on purpose, then fed to a submodule that learns (not a loss)',
        ),
        Valid(
            """
import torch
from torch import nn


class Saliency(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, images):
        x = images * 1.0
        x.requires_grad = True
        self.x = x
        return self.net(x)
""",
            runtime='s = Saliency(nn.Linear(4, 2))\ns(torch.randn(3, 4)).sum().backward()\nassert s.x.grad is not None and s.net.weight.grad is not None',
            note="a module's forward makes its input copy a leaf for its gradient (saliency) and feeds it to the net: not a 0-dim value it returns",
        ),
        Valid(
            """
import torch


def train_head(backbone, criterion, batches, opt):
    for xb, yb in batches:
        with torch.no_grad():
            feats = backbone(xb)
        feats.requires_grad = True
        loss = criterion(feats, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            runtime='class MarginHead(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(4, 3)\n\n    def forward(self, feats, labels):\n        return torch.nn.functional.cross_entropy(self.fc(feats), labels)\n\n\nbackbone, head = torch.nn.Linear(5, 4), MarginHead()\ntrain_head(backbone, head, [(torch.randn(6, 5), torch.tensor([0, 1, 2, 0, 1, 2]))], torch.optim.SGD(head.parameters(), lr=0.1))\nassert head.fc.weight.grad is not None and backbone.weight.grad is None',
            note='features of a frozen backbone made a leaf and given to a callable named `criterion` that has weights of its own (a margin head): it learns; the name does not make it a plain loss',
        ),
        Valid(
            """
import torch
from torch import nn


class MaskedL1(nn.Module):
    def forward(self, pred, target, mask):
        if mask.sum() == 0:
            self.value = torch.zeros((), device=pred.device)
            self.value.requires_grad = True
            return self.value
        self.value = ((pred - target).abs() * mask).sum() / mask.sum()
        return self.value
""",
            runtime='loss = MaskedL1()(torch.randn(3), torch.randn(3), torch.zeros(3))\nloss.backward()\nassert loss.item() == 0.0',
            note="a loss module's zero loss for an empty batch kept on `self`: a fresh tensor made a leaf, not a loss computed from the prediction",
        ),
        Valid(
            """
import torch
from torch import nn


class EmptyBatchLoss(nn.Module):
    def forward(self, pred):
        loss = torch.tensor(0.0)
        make_trainable(loss)
        return loss


def make_trainable(loss):
    loss.requires_grad = True
""",
            runtime="loss = EmptyBatchLoss()(torch.randn(3))\nloss.backward()\nassert loss.grad is not None",
            note="a helper that makes a fresh zero loss a leaf (an empty batch's): nothing was cut",
        ),
    ]
    INVALID = [
        Invalid(
            """
import torch
from torch.autograd import Variable


def fit_batch(net, x, y, opt):
    hits = (net(x).argmax(-1) == y).float()
    loss = as_leaf(1 - hits.mean())
    opt.zero_grad()
    loss.backward()
    opt.step()


def as_leaf(value):
    return Variable(value, requires_grad=True)
""",
            range=(15, 11, 15, 46),
            message="`Variable(..., requires_grad=True)` makes a new leaf from `value`, computed through `.argmax()` "
            "(line 7), which leaves no graph: `.backward()` on line 10 reaches only that leaf, so no gradient reaches "
            "what computed it and the model never learns; remove the cut and back-propagate the original tensor",
            runtime="net = torch.nn.Linear(4, 3)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "fit_batch(net, torch.randn(5, 4), torch.randint(0, 3, (5,)), opt)\nassert net.weight.grad is None",
            note="issue 33: the leaf made by a helper defined after its caller, from the argument that call gives it",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch.autograd import Variable


def fit_batch(net, x, y, opt):
    hard = F.one_hot(net(x).argmax(-1), 3).float()
    dice = 1 - (2 * (hard * F.one_hot(y, 3)).sum() + 1) / (hard.sum() + y.numel() + 1)
    loss = Variable(dice, requires_grad=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            range=(10, 11, 10, 45),
            message="`Variable(..., requires_grad=True)` makes a new leaf from `dice`, computed through `.argmax()` (line 8), "
            "which leaves no graph: `.backward()` on line 12 reaches only that leaf, so no gradient reaches what computed "
            "it and the model never learns; remove the cut and back-propagate the original tensor",
            runtime="net = torch.nn.Linear(4, 3)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "w = net.weight.detach().clone()\nfit_batch(net, torch.randn(5, 4), torch.randint(0, 3, (5,)), opt)\n"
            "assert net.weight.grad is None and torch.equal(net.weight, w)",
            note="issue 33: a dice of hard (argmax) predictions made a leaf (speechbrain#735): whatever `net` is, the "
            "copy's own backward reaches the copy alone",
        ),
        Invalid(
            """
import torch


def ppo_update(policy, opt, states, actions, old_log_probs, advantages):
    dist = policy(states)
    new_log_probs = torch.tensor([dist.log_prob(a)[i].item() for i, a in enumerate(actions)])
    ratio = torch.exp(new_log_probs - old_log_probs)
    loss = -(ratio * advantages).mean()
    loss.requires_grad = True
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            range=(10, 4, 10, 29),
            message="`loss.requires_grad = True` makes `loss` a new leaf, computed through `.item()` (line 7), which "
            "leaves no graph: `.backward()` on line 12 reaches only that leaf, so no gradient reaches what computed it "
            "and the model never learns; remove the cut and back-propagate the original tensor",
            runtime="net = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "policy = lambda s: torch.distributions.Categorical(logits=net(s))\n"
            "ppo_update(policy, opt, torch.randn(5, 4), torch.randint(0, 2, (5,)), torch.zeros(5), torch.randn(5))\n"
            "assert net.weight.grad is None",
            note="issue 33: the setter runs only on a value without a graph, so the loss's own backward reaches it "
            "alone; the `.item()` values are where the policy's graph went (exploring_meta#16)",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
criterion = nn.MSELoss()
x, y = torch.randn(8, 4), torch.randn(8, 1)
loss = criterion(model(x), y)
loss = torch.tensor(loss.item(), requires_grad=True)
loss.backward()
""",
            range=(9, 7, 9, 52),
            message='`torch.tensor(..., requires_grad=True)` makes a new leaf from `loss.item()`, whose graph was cut (`.item()` on line 9): `.backward()` on line 10 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor',
            runtime='assert model.weight.grad is None and loss.grad is not None',
            note="the usual answer to 'element 0 of tensors does not require grad'",
        ),
        Invalid(
            """
import torch
from torch import nn


def train_epoch(model, loader, optimizer, criterion):
    model.train()
    for inputs, targets in loader:
        optimizer.zero_grad()
        outputs = model(inputs)
        preds = torch.tensor(outputs.detach().cpu().numpy(), requires_grad=True)
        loss = criterion(preds, targets)
        loss.backward()
        optimizer.step()


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
batches = [(torch.randn(5, 4), torch.randn(5, 2)) for _ in range(2)]
train_epoch(net, batches, torch.optim.SGD(net.parameters(), lr=0.1), nn.MSELoss())
""",
            range=(11, 16, 11, 80),
            message='`torch.tensor(..., requires_grad=True)` makes a new leaf from `outputs.detach().cpu().numpy()`, whose graph was cut (`.detach()` on line 11): `.backward()` on line 13 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor',
            runtime='assert all(p.grad is None for p in net.parameters())',
            note='a NumPy round trip of the predictions, in a training function',
        ),
        Invalid(
            """
import torch
from torch import nn


def fit(model, loader, opt, loss_fn):
    model.train()
    for x, y in loader:
        with torch.no_grad():
            logits = model(x)
        loss = loss_fn(logits, y)
        loss.requires_grad = True
        opt.zero_grad()
        loss.backward()
        opt.step()


clf = nn.Linear(3, 4)
data = [(torch.randn(6, 3), torch.randint(0, 4, (6,))) for _ in range(2)]
fit(clf, data, torch.optim.Adam(clf.parameters()), nn.CrossEntropyLoss())
""",
            range=(12, 8, 12, 33),
            message='`loss.requires_grad = True` makes `loss` a new leaf, but its graph was cut (`torch.no_grad()` on line 9): `.backward()` on line 14 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor',
            runtime='assert all(p.grad is None for p in clf.parameters())',
            note='the forward under no_grad, then requires_grad set on the loss',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

encoder = nn.Linear(6, 3)
batch = torch.randn(4, 6)
code = encoder(batch).detach()
recon_loss = F.mse_loss(code, torch.zeros(4, 3)).requires_grad_()
recon_loss.backward()
""",
            range=(9, 13, 9, 65),
            message='`F.mse_loss(code, torch.zeros(4, 3)).requires_grad_()` makes `F.mse_loss(code, torch.zeros(4, 3))` a new leaf, but its graph was cut (`.detach()` on line 8): `.backward()` on line 10 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor',
            runtime='assert encoder.weight.grad is None and recon_loss.grad is not None',
            note='requires_grad_() on a loss of a detached code',
        ),
            Invalid(
            """
import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer):
    model.train()
    for images, labels in loader:
        with torch.no_grad():
            logits = model.classifier(model.backbone(images))
        loss = F.cross_entropy(logits, labels)
        loss.requires_grad = True
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


net = torch.nn.Module()
net.backbone, net.classifier = torch.nn.Linear(4, 6), torch.nn.Linear(6, 3)
train_epoch(net, [(torch.randn(2, 4), torch.tensor([0, 2]))], torch.optim.SGD(net.parameters(), lr=0.1))
""",
            range=(12, 8, 12, 33),
            message="`loss.requires_grad = True` makes `loss` a new leaf, but its graph was cut (`torch.no_grad()` on line 9): `.backward()` on line 14 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor",
            runtime="assert all(p.grad is None for p in net.parameters())",
            note="the forward under no_grad through submodules of a model the function receives",
        ),
        Invalid(
            """
import torch
from torch import nn
from torch.autograd import Variable


def fit(model, loss_op, optimizer, batches):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        output = model(x)
        loss = loss_op(output, y)
        loss = Variable(loss, requires_grad=True)
        loss.backward()
        optimizer.step()


net = nn.Linear(4, 1)
fit(net, nn.MSELoss(), torch.optim.Adam(net.parameters()), [(torch.randn(3, 4), torch.randn(3, 1))])
""",
            range=(13, 15, 13, 49),
            message="`Variable(..., requires_grad=True)` makes a new leaf from `loss` (from `loss_op(output, y)` on line 12), without its graph: `.backward()` on line 14 runs without error, but no gradient reaches what computed it, so the model never learns; back-propagate `loss` itself",
            runtime="assert net.weight.grad is None",
            note="Variable(t, requires_grad=True) copies a tensor that has a graph: the copy is a new leaf",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
for p in model.parameters():
    p.requires_grad = False
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.requires_grad = True
    loss.backward()
    optimizer.step()
""",
            range=(13, 4, 13, 29),
            message='`loss.requires_grad = True` on `loss`, computed with a graph (from `criterion(model(x), y)` on line 12): if that graph is there, this line raises "you can only change requires_grad flags of leaf variables."; if it runs, something already cut the graph (frozen parameters, a detach, no_grad) and `.backward()` on line 14 reaches no parameter, so the model never learns; remove the line and find the cut',
            runtime='assert model.weight.grad is None',
            note='regression (finetune-SAM): every parameter frozen, the setter runs and hides the error; nothing learns',
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
loss = nn.functional.mse_loss(model(x), y)
loss.requires_grad = True
loss.backward()
""",
            range=(8, 0, 8, 25),
            message='`loss.requires_grad = True` on `loss`, computed with a graph (from `nn.functional.mse_loss(model(x), y)` on line 7): if that graph is there, this line raises "you can only change requires_grad flags of leaf variables."; if it runs, something already cut the graph (frozen parameters, a detach, no_grad) and `.backward()` on line 9 reaches no parameter, so the model never learns; remove the line and find the cut',
            raises=NON_LEAF,
            note='the loss still has its graph: the setter itself raises',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class TripletLoss(nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        losses = F.relu((anchor - positive).pow(2).sum(1) - (anchor - negative).pow(2).sum(1) + self.margin)
        loss = losses.mean()
        loss.requires_grad = True
        return loss
""",
            range=(15, 8, 15, 33),
            message='`loss.requires_grad = True` in `TripletLoss.forward()`, on a loss computed from `anchor`: if that has a graph, this line raises "you can only change requires_grad flags of leaf variables."; if it runs, the prediction arrived already cut from its model (a detach or no_grad upstream), and back-propagating this loss reaches no parameter - the model never learns; remove the line and find the cut',
            runtime="encoder = nn.Linear(4, 4)\nwith torch.no_grad():\n    a, p, n = (encoder(torch.randn(3, 4)) for _ in range(3))\nTripletLoss()(a, p, n).backward()\nassert encoder.weight.grad is None",
            note="the triplet-loss thread's workaround inside the loss module: the embeddings came through a no_grad regulariser, the setter hides it, backward() runs and the encoder never learns",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class TripletLoss(nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        losses = F.relu((anchor - positive).pow(2).sum(1) - (anchor - negative).pow(2).sum(1) + self.margin)
        loss = losses.mean()
        make_trainable(loss)
        return loss


def make_trainable(loss):
    loss.requires_grad = True
""",
            range=(15, 8, 15, 28),
            message='`make_trainable(loss)`, which sets `loss.requires_grad = True`, in `TripletLoss.forward()`, on a loss computed from `anchor`: if that has a graph, this line raises "you can only change requires_grad flags of leaf variables."; if it runs, the prediction arrived already cut from its model (a detach or no_grad upstream), and back-propagating this loss reaches no parameter - the model never learns; remove the line and find the cut',
            runtime="encoder = nn.Linear(4, 4)\nwith torch.no_grad():\n    a, p, n = (encoder(torch.randn(3, 4)) for _ in range(3))\nTripletLoss()(a, p, n).backward()\nassert encoder.weight.grad is None",
            note="the same setter in a helper of the file defined after the module (issue 33's extract variants of triplet_kws): the call sets it",
        ),
        Invalid(
            """
import torch


def as_trainable(value):
    return torch.tensor(value.item(), requires_grad=True)


def step(net, x, y, opt):
    err = as_trainable(((net(x) - y) ** 2).mean())
    opt.zero_grad()
    err.backward()
    opt.step()
""",
            range=(6, 11, 6, 57),
            message='`torch.tensor(..., requires_grad=True)` makes a new leaf from `value.item()`, whose graph was cut (`.item()` on line 6): `.backward()` on line 12 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor',
            note="a helper's summary: it returns a fresh leaf made from a cut of its argument, which the caller back-propagates",
            runtime='net = torch.nn.Linear(2, 1)\nstep(net, torch.randn(4, 2), torch.randn(4, 1), torch.optim.SGD(net.parameters(), lr=0.1))\nassert net.weight.grad is None',
        ),
        Invalid(
            """
import torch
from torch import nn


class Trainer:
    def train_step(self, model, x, label):
        pred = model(x).argmax(dim=1).float()
        self.loss = nn.functional.mse_loss(pred, label)
        self.loss.requires_grad = True
        self.loss.backward()
""",
            range=(10, 8, 10, 38),
            message="`self.loss.requires_grad = True` on `self.loss`, computed with a graph (from "
            "`nn.functional.mse_loss(pred, label)` on line 9): if that graph is there, this line raises \"you can only "
            "change requires_grad flags of leaf variables.\"; if it runs, something already cut the graph (frozen "
            "parameters, a detach, no_grad) and `.backward()` on line 11 reaches no parameter, so the model never "
            "learns; remove the line and find the cut",
            runtime="model = nn.Linear(4, 3)\nTrainer().train_step(model, torch.randn(5, 4), torch.randn(5))\n"
                    "assert model.weight.grad is None",
            note="the loss kept on `self`: its backward is evidence about what it was computed from, as for a local",
        ),
        Invalid(
            """
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


model = nn.Linear(3, 1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
loss = nn.functional.mse_loss(model(x).detach(), y)
tagged(loss, "loss")[0].requires_grad_()
loss.backward()
""",
            range=(13, 0, 13, 40),
            message='`tagged(loss, "loss")[0].requires_grad_()` makes `loss` a new leaf, but its graph was cut '
            "(`.detach()` on line 12): `.backward()` on line 14 runs without error, but no gradient "
            "reaches what computed it, so the model never learns; remove the cut and back-propagate "
            "the original tensor",
            note="the loss handed through a helper's tuple is the loss itself: `requires_grad_()` makes it the leaf",
            runtime="assert model.weight.grad is None",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F


def run_epoch(net, batches, opt):
    net.train()
    for xb, yb in batches:
        with torch.no_grad():
            out = net.head(net.body(xb))
        err = F.cross_entropy(out, yb)
        err.requires_grad = True
        opt.zero_grad()
        err.backward()
        opt.step()
""",
            range=(12, 8, 12, 32),
            message='`err.requires_grad = True` makes `err` a new leaf, but its graph was cut (`torch.no_grad()` on line 9): `.backward()` on line 14 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor',
            note='the targets named by nothing (`yb`): where the setter runs, no operand had a graph, so the no_grad forward is where it was lost',
            runtime='net = torch.nn.Module()\nnet.body, net.head = torch.nn.Linear(4, 6), torch.nn.Linear(6, 3)\nrun_epoch(net, [(torch.randn(2, 4), torch.tensor([0, 2]))], torch.optim.SGD(net.parameters(), lr=0.1))\nassert all(p.grad is None for p in net.parameters())',
        ),
        Invalid(
            """
import torch


def train_step(net, crit, opt, xb, yb):
    net.train()
    opt.zero_grad()
    err = crit(net(xb), yb) * 1.0
    err.requires_grad = True
    err.backward()
    opt.step()
""",
            range=(9, 4, 9, 28),
            message='`err.requires_grad = True` on `err`, computed with a graph (from `crit(net(xb), yb)` on line 8): if that graph is there, this line raises "you can only change requires_grad flags of leaf variables."; if it runs, something already cut the graph (frozen parameters, a detach, no_grad) and `.backward()` on line 10 reaches no parameter, so the model never learns; remove the line and find the cut',
            note="a loss callable the function is given, its result scaled: `err.backward()` proves it 0-dim, a loss computed from the model's graph whatever it is called",
            runtime='net = torch.nn.Linear(3, 1)\nfor p in net.parameters():\n    p.requires_grad = False\ntrain_step(net, torch.nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(4, 3), torch.randn(4, 1))\nassert net.weight.grad is None',
        ),
        Invalid(
            """
import torch


def step(net, fn, opt, xb, mask):
    net.train()
    probs = torch.sigmoid(net(xb)).detach()
    err = fn(probs, mask).squeeze()
    err.requires_grad_()
    opt.zero_grad()
    err.backward()
    opt.step()
""",
            range=(9, 4, 9, 24),
            message='`err.requires_grad_()` makes `err` a new leaf, but its graph was cut (`.detach()` on line 7): `.backward()` on line 11 runs without error, but no gradient reaches what computed it, so the model never learns; remove the cut and back-propagate the original tensor',
            note='`requires_grad_()` on what a given callable computed from a detached prediction (its first argument), then back-propagated as a 0-dim loss',
            runtime='net = torch.nn.Linear(3, 2)\nstep(net, torch.nn.BCELoss(), torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(4, 3), torch.rand(4, 2).round())\nassert net.weight.grad is None',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Triplets(nn.Module):
    def forward(self, a, p, n):
        v = F.relu((a - p).pow(2).sum(1) - (a - n).pow(2).sum(1) + 1.0).mean()
        v.requires_grad = True
        return v
""",
            range=(10, 8, 10, 30),
            message='`v.requires_grad = True` in `Triplets.forward()`, on a loss computed from `a`: if that has a graph, this line raises "you can only change requires_grad flags of leaf variables."; if it runs, the prediction arrived already cut from its model (a detach or no_grad upstream), and back-propagating this loss reaches no parameter - the model never learns; remove the line and find the cut',
            note='a module named for nothing whose forward returns a 0-dim value it made a leaf: a loss by what it computes, the setter hides the cut upstream',
            runtime='encoder = nn.Linear(4, 4)\nwith torch.no_grad():\n    a, p, n = (encoder(torch.randn(3, 4)) for _ in range(3))\nTriplets()(a, p, n).backward()\nassert encoder.weight.grad is None',
        ),
        Invalid(
            """
import torch
from torch.autograd import Variable


def fit(net, fn, opt, batches):
    net.train()
    for xb, yb in batches:
        opt.zero_grad()
        err = Variable(fn(net(xb), yb), requires_grad=True)
        err.backward()
        opt.step()
""",
            range=(10, 14, 10, 59),
            message='`Variable(..., requires_grad=True)` makes a new leaf from `fn(net(xb), yb)` (from `net(xb)` on line 10), without its graph: `.backward()` on line 11 runs without error, but no gradient reaches what computed it, so the model never learns; back-propagate `fn(net(xb), yb)` itself',
            note="a copy of what a given callable computed from the model's output, back-propagated as a 0-dim loss: the copy leaves the graph behind, whatever the callable is called",
            runtime='net = torch.nn.Linear(3, 1)\nfit(net, torch.nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), [(torch.randn(4, 3), torch.randn(4, 1))])\nassert net.weight.grad is None',
        ),
        Invalid(
            """
import torch
from torch import nn


class Contrast(nn.Module):
    def forward(self, a, b):
        self.value = torch.norm(a - b, dim=1).mean()
        self.value.requires_grad = True
        return self.value
""",
            range=(9, 8, 9, 39),
            message='`self.value.requires_grad = True` in `Contrast.forward()`, on a loss computed from `a`: if that has a graph, this line raises "you can only change requires_grad flags of leaf variables."; if it runs, the prediction arrived already cut from its model (a detach or no_grad upstream), and back-propagating this loss reaches no parameter - the model never learns; remove the line and find the cut',
            note="the loss module's 0-dim result kept on `self` on its way out, made a leaf: the embeddings came cut (no_grad), the setter hides it",
            runtime='encoder = nn.Linear(4, 3)\nwith torch.no_grad():\n    a, b = encoder(torch.randn(5, 4)), encoder(torch.randn(5, 4))\nContrast()(a, b).backward()\nassert encoder.weight.grad is None',
        ),
        Invalid(
            """
import torch
from torch import nn


class MarginLoss(nn.Module):
    def forward(self, embeddings, target):
        losses = (embeddings - target).pow(2).sum(1)
        mean_losses = losses.mean()
        mean_losses.requires_grad = True
        return mean_losses


encoder = nn.Linear(4, 3)
criterion = MarginLoss()
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 3)
for _ in range(2):
    with torch.no_grad():
        embeds = encoder(x)
    loss = criterion(embeds, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            range=(10, 8, 10, 40),
            message='`mean_losses.requires_grad = True` in `MarginLoss.forward()`, on a loss computed from `embeddings`: if that has a graph, this line raises "you can only change requires_grad flags of leaf variables."; if it runs, the prediction arrived already cut from its model (a detach or no_grad upstream), and back-propagating this loss reaches no parameter - the model never learns; remove the line and find the cut',
            note="issue 33: the loss module with its caller in the file: analysed for that call, forward() sees the cut (the no_grad embeddings), and the caller's backward of the returned loss is not followed into forward(); the loss module's own finding stands (it vanished when a caller proved the cut)",
            runtime="assert encoder.weight.grad is None",
        ),
    ]


_SCALING = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)


def _cuts_of(v) -> frozenset:
    """The cuts of a value, and those of the prediction of a loss (`F.mse_loss(out.detach(), y)`)."""
    return v.cuts | frozenset(cut for cut, _ in v.pred_cuts)




def _returns(fn: cst.FunctionDef) -> list:
    """The `return` statements of a function (not of functions nested in it)."""
    collect = _Returns(fn)
    walk_tree(fn, collect)
    return collect.found


def _keys(node: cst.CSTNode) -> set:
    """The places (`_key`) read in an expression or bound by a target."""
    collect = _Names()
    walk_tree(node, collect)
    return {n.value for n in collect.found} | collect.own


def _names(node: cst.CSTNode) -> list:
    """The Name nodes read in an expression (or bound by a target)."""
    collect = _Names()
    walk_tree(node, collect)
    return collect.found


class _Names(cst.CSTVisitor):
    def __init__(self):
        self.found: list = []
        self.own: set = set()  # `self.x` keys

    def visit_Name(self, n: cst.Name) -> None:
        self.found.append(n)

    def visit_Attribute(self, n: cst.Attribute) -> bool:
        if is_self_attribute(n):
            self.own.add(place_key(n))  # a method's `self.x`, not `self`
        else:
            walk_tree(n.value, self)  # `x.grad` reads `x`, not `grad`
        return False


class _Returns(cst.CSTVisitor):
    def __init__(self, fn: cst.FunctionDef):
        self.fn = fn
        self.found: list = []

    def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
        return n is self.fn

    def visit_Return(self, n: cst.Return) -> None:
        self.found.append(n)
