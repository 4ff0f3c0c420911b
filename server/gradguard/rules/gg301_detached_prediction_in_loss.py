from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Optional

import libcst as cst

from gradguard.engine.evidence import dotted
from gradguard.engine.syntax import is_self_attribute
from gradguard.engine.values import Evidence, Grad, Kind, all_origins
from gradguard.engine.walk import descendants, walk
from gradguard.findings import Safety, Severity
from gradguard.rules._build import short
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid


def _self_attribute(node: cst.BaseExpression):
    """`self.encoder` -> "encoder"."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _known(v) -> bool:
    """Does the analysis know every part of a returned value - tensors, numbers, tuples of them -
    so that its graph origins say what reaches the outputs? An object (`ModelOutput(...)`), a dict
    or an unknown call's result may carry any submodule's output."""
    if v.kind in (Kind.TENSOR, Kind.NUMBER):
        return True
    return v.kind is Kind.CONTAINER and v.elements is not None and not v.keyed and all(_known(e) for e in v.elements)


def _strip_views(node: cst.BaseExpression) -> cst.BaseExpression:
    """`self.enc(x).view(n, -1)[0]` -> `self.enc(x)`."""
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in VIEWS:
            node = node.func.value
        else:
            return node


# Constructors that copy a list of tensors into a new one, without their graphs.
PACKING = frozenset(("torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.as_tensor",
                     "torch.cuda.FloatTensor"))
VIEWS = frozenset("view reshape flatten squeeze unsqueeze permute transpose contiguous float".split())


def _fresh_submodule(flow, cls, attr: str) -> bool:
    """Is `self.<attr>` made in `__init__` by a torch.nn layer constructor (randomly initialised,
    meant to learn) - not a pretrained backbone, whose `.detach()` is the usual way to freeze it?"""
    init = cls.methods.get("__init__")
    if init is None:
        return False
    fresh = False
    for stmt in init.node.body.body:
        if fresh and _frozen(attr).search(flow.code_for(stmt)):
            return False  # then frozen on purpose: its `.detach()` is redundant, not a cut
        if fresh or not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and any(
                _self_attribute(t.target) == attr for t in small.targets
            ):
                q = flow._qualname(small.value.func) or ""
                if not (q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper()):
                    return False
                fresh = True
    return fresh


def _frozen(attr: str) -> re.Pattern:
    """`self.emb.weight = nn.Parameter(w, requires_grad=False)` (Informer's fixed embedding),
    `self.emb.requires_grad_(False)`, `self.emb.weight.requires_grad = False`, or a loop over
    `self.emb.parameters()` that sets it."""
    a = re.escape(attr)
    return re.compile(
        rf"self\.{a}\.[\w.]+\s*=\s*(?:\w+\.)*Parameter\(.*requires_grad\s*=\s*False"
        rf"|self\.{a}(?:\.\w+)*\.requires_grad(?:_\(\s*(?:requires_grad\s*=\s*)?False|\s*=\s*False)"
        rf"|for\s+(\w+)\s+in\s+self\.{a}\.parameters\(\)\s*:\s*\n?\s*\1\.requires_grad(?:_\(\s*False|\s*=\s*False)",
        re.S,
    )


# --- a scored cut: a detached output of the trained model fed to a model the optimizer does not train


@dataclass(eq=False)
class ScoredCut:
    """`self.d(fake.detach(), f)`: a call of a model whose input was cut from the model it came from."""

    call: cst.Call  # the module call fed the cut input
    cut: Evidence  # the `.detach()` / `.data`
    cut_from: frozenset  # dotted names of the models the cut input was computed by (`self.g`)
    others_from: frozenset  # dotted names of the models its other inputs were computed by
    stamp: tuple
    cut_origins: frozenset = frozenset()  # the graph identities of the value before the cut


def _cut_input(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """`x` of the cut `x.detach()` or `x.data` (a `torch.no_grad()` block cuts no one expression)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "detach":
        return node.func.value
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        return node.value
    return None


def _callee_names(origins) -> frozenset:
    """`self.g` for the graph identity `self.g(z)`: the models whose calls a value was computed by."""
    return frozenset(k for o in origins if isinstance(o, cst.Call) and (k := dotted(o.func)) is not None)


def _related(a: str, b: str) -> bool:
    """Same model, or one a submodule of the other (`self.g` and `self.g.head` share parameters)."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


class _Calls(cst.CSTVisitor):
    """A function's own calls in source order (nested functions and classes are not its body)."""

    def __init__(self, root: cst.CSTNode):
        self.root, self.calls = root, []

    def visit_FunctionDef(self, node) -> bool:
        return node is self.root

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def _calls_of(fn_node: cst.CSTNode) -> list:
    finder = _Calls(fn_node)
    walk(fn_node, finder)
    return finder.calls


def _step_after(fn_node: cst.FunctionDef, backward: cst.CSTNode) -> Optional[tuple[str, cst.Call]]:
    """The optimizer `opt.step()` (or `scaler.step(opt)`) steps first after `backward` in the same
    function, as dotted code, and that call: what that backward's gradients are for."""
    calls = _calls_of(fn_node)
    if backward not in calls:
        return None
    for call in calls[calls.index(backward) + 1:]:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "step":
            pos = [a for a in call.args if a.keyword is None]
            name = dotted(pos[0].value) if len(pos) == 1 else dotted(func.value) if not call.args else None
            return (name, call) if name is not None else None
    return None


class _Assigns(cst.CSTVisitor):
    """`key = value` assignments (tuple targets paired with tuple values) anywhere under a node."""

    def __init__(self):
        self.pairs: list = []  # (dotted target, value node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target, value = t.target, node.value
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(
                target.elements
            ) == len(value.elements):
                self.pairs.extend((dotted(a.value), b.value) for a, b in zip(target.elements, value.elements))
            else:
                self.pairs.append((dotted(target), value))


def _assigns(node: cst.CSTNode) -> list:
    finder = _Assigns()
    walk(node, finder)
    return [(k, v) for k, v in finder.pairs if k is not None]


class _Owners(cst.CSTVisitor):
    """The `m` of every `m.parameters()` under a node."""

    def __init__(self):
        self.owners: set = set()

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value == "parameters" and (k := dotted(f.value)) is not None:
            self.owners.add(k)


def _parameter_owners(arg: cst.BaseExpression) -> frozenset:
    """`self.g` and `self.e` of `chain(self.g.parameters(), self.e.parameters())`."""
    finder = _Owners()
    walk(arg, finder)
    return frozenset(finder.owners)


def trained_models(flow, fn, optimizer: str) -> Optional[tuple[frozenset, cst.Call]]:
    """The models whose `.parameters()` the optimizer named `optimizer` was built over (evidence
    from use: `torch.optim.Adam(self.g.parameters())` in `__init__`, or in the function itself), as
    dotted code as the function reads them; `self.g` also when `__init__` built it over `g` and
    did `self.g = g`. None when that is not known, or two constructions disagree."""
    if optimizer.startswith("self."):
        scopes = [m.node for m in fn.cls.methods.values()] if fn is not None and fn.cls is not None else []
    else:
        scopes = [fn.node] if fn is not None else [flow.module]
    pairs = [p for node in scopes for p in _assigns(node)]
    if fn is not None and not optimizer.startswith("self.") and not any(k == optimizer for k, _ in pairs):
        pairs = _assigns(flow.module)  # a module-level optimizer the function steps
    found, built = set(), None
    for key, value in pairs:
        if key != optimizer or not isinstance(value, cst.Call):
            continue
        q = flow._qualname(value.func) or ""
        if not q.startswith("torch.optim.") or q.startswith("torch.optim.lr_scheduler."):
            return None
        params = next((a.value for a in value.args if a.keyword is None or a.keyword.value == "params"), None)
        owners = _parameter_owners(params) if params is not None else frozenset()
        if not owners:
            return None  # a list of tensors, a variable: which models it holds is not known
        found.add(owners)
        built = value
    if len(found) != 1:
        return None
    owners = set(next(iter(found)))
    # `self.g = g` beside `Adam(g.parameters())`: the function reads the model as `self.g`
    owners |= {key for key, value in pairs if isinstance(value, cst.Name) and value.value in owners and key.startswith("self.")}
    return frozenset(owners), built


class DetachedPredictionInLoss(Rule):
    """
    ## What it does
    Finds a prediction that was cut from its model's graph - `.detach()`,
    `.data`, `.item()`, `.numpy()`, or computed inside `torch.no_grad()` - before
    it reaches a loss that is back-propagated together with other terms. The
    finding sits on the cut; its related locations point at the loss and at the
    `.backward()`.

    ## Why is this bad?
    `backward()` runs without complaint, because another term of the loss still
    has a graph - but the part of the model behind the cut receives no
    gradient: its parameters keep `.grad` at `None` and never learn, silently.

    Also: a loss term cut from its graph and added to the loss that trains
    (`loss + aux_loss.detach().item()` is a constant to `backward()`, as is a
    NumPy function of `.detach().numpy()` outputs added to it, or a function of
    this file given only detached values; in a loss helper such as
    `compute_loss()`, the loss it returns counts as back-propagated, and a
    term added by any function of the file counts where its caller
    back-propagates the result), and a `.detach()` inside `forward()` - or in a
    helper it calls - that cuts a freshly built submodule from every output of
    the module (it never learns; a pretrained backbone frozen this way is left
    alone), or copies a model's outputs into a new tensor
    (`torch.Tensor(losses)` of a list of task losses, in `forward()` or a
    method it calls) that reach no output otherwise. And a GAN generator step that scores
    `fake.detach()`: when the `.backward()` is followed by the step of an
    optimizer built over the generator's parameters and not the
    discriminator's, the term the discriminator scores trains nothing that
    step updates.

    Detached **targets** are left alone: `F.mse_loss(q, target.detach())` (TD
    targets), `F.kl_div(student, teacher_out.detach())` (distillation), a GAN
    discriminator step on `fake.detach()` (its optimizer trains the
    discriminator), `q - target.detach()`, and
    stop-gradient in self-supervised losses, where the detached side is the
    target.

    ## Example
    ```python
    logits, boxes_pred = model(images)
    loss = F.cross_entropy(logits, labels) + F.smooth_l1_loss(boxes_pred.detach(), boxes)
    loss.backward()
    ```

    ## Use instead
    ```python
    logits, boxes_pred = model(images)
    loss = F.cross_entropy(logits, labels) + F.smooth_l1_loss(boxes_pred, boxes)
    loss.backward()
    ```

    ## Fix safety
    Removing the `.detach()` (or `.data`) is unsafe: it changes what trains. It
    is offered as a quick fix, never applied in bulk. Cuts by `.item()`,
    `.numpy()` or `torch.no_grad()` get no automatic fix.
    """

    code = "GG301"
    name = "detached-prediction-in-loss"
    severity = Severity.WARNING
    summary = "A detached prediction feeds a back-propagated loss: that part of the model gets no gradient"

    def __init__(self, *args):
        super().__init__(*args)
        self._forward_cuts: list = []  # (cut, submodule attrs, the cut's origins, forward FunctionInfo, stamp, helper call)
        self._sub_calls: dict = {}  # (class, attr) -> call nodes of self.<attr>(...) in its methods
        self._scored: list = []  # ScoredCut: a model fed a cut input
        self._packed: list = []  # (torch.Tensor(list) call, model calls packed, the cut's origins, method, stamp)
        self._as_target: set = set()  # graph identities a loss or a difference takes as its target
        self._constants: list = []  # (term, cut site, loss expression, backward call, stamp): a cut term added to the loss
        self._returned: dict = {}  # FunctionInfo -> [([(term, cut site)], the sum returned, stamp)]: its cut terms

    def visit_Call(self, node: cst.Call) -> None:
        self._note_scored_cut(node)
        self._note_loss_targets(node)
        self._note_constant_terms(node)
        fn = self.flow.function
        if fn is None or fn.cls is None or not fn.cls.module_like:
            return
        func = node.func
        attr = _self_attribute(func)
        if attr is not None:  # every call of a submodule, in any method: one elsewhere may train it
            self._sub_calls.setdefault((fn.cls, attr), []).append(node)
        if (self.flow._qualname(func) or "") in PACKING:  # in forward(), or a method it calls (_packed_submodules)
            self._forward_pack(node, fn)
        if fn.name != "forward":
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "detach" and not node.args:
            self._forward_cut(node, func.value, fn)
        elif self.flow.value(func).kind is Kind.FUNCTION:
            self._cut_by_helper(node, fn)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        fn = self.flow.function  # `torch.stack(logits, 1).data` in forward(): the same cut as .detach()
        if node.attr.value == "data" and fn is not None and fn.name == "forward" and fn.cls is not None and fn.cls.module_like:
            self._forward_cut(node, node.value, fn)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """`q - d(fake.detach())` with `q` a graph: the right side is a target, compared per element."""
        if self._scored and isinstance(node.operator, cst.Subtract):  # a scorer is called before its output is used
            a, b = self.flow.value(node.left), self.flow.value(node.right)
            for x, y in ((a, b), (b, a)):
                if y.has_graph and not x.scalar:
                    self._as_target |= all_origins(x)

    def _note_scored_cut(self, node: cst.Call) -> None:
        """`self.d(fake.detach(), f)`: a model scores an input cut from the model that computed it.
        Whether that is a bug depends on which optimizer the loss is for (see _scored_cuts)."""
        m = self.flow.value(node.func)
        scorer = dotted(node.func)
        if m.kind is not Kind.MODULE or not m.parameterized or m.loss or scorer is None:
            return
        args = [(a, self.flow.value(a.value)) for a in node.args]
        for a, v in args:
            for cut in v.cuts:
                inner = _cut_input(cut.node)
                cut_from = _callee_names(all_origins(self.flow.value(inner))) if inner is not None else frozenset()
                if cut_from:
                    others = frozenset().union(*(_callee_names(all_origins(w)) for b, w in args if b is not a))
                    self._scored.append(ScoredCut(node, cut, cut_from, others, self.stamp(),
                                                  all_origins(self.flow.value(inner))))

    def _note_loss_targets(self, node: cst.Call) -> None:
        """What a loss function takes as its target (every argument but the prediction)."""
        if not self._scored:
            return  # a scorer is called before a loss takes its output
        if not self.flow.is_loss_call(node):
            return
        pred = next((a for a in node.args if a.keyword is not None and a.keyword.value == "input"), None)
        if pred is None:
            pred = next((a for a in node.args if a.keyword is None), None)
        for a in node.args:
            if a is not pred:
                self._as_target |= all_origins(self.flow.value(a.value))

    def _note_constant_terms(self, node: cst.Call) -> None:
        """`loss = loss + target_loss.detach().item()` and then `loss.backward()`: a term of the
        back-propagated loss made only of a cut value (`.item()`, `.detach()`, `.numpy()`, `.data`)
        is a constant to `backward()`, whatever it was computed from: it changes the loss value
        and trains nothing. Only sums: a cut factor (`w.detach() * ce`) is a stop-gradient weight."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward" and (
                isinstance(func.value, cst.Name) or is_self_attribute(func.value)):
            loss = self._bound(func.value)
            if isinstance(loss, cst.Call):  # `d_loss = helper(...)`: the constant terms the helper returns
                self._returned_terms(loss, func.value, node)
            else:
                self._constant_terms_of(func.value, node)

    def leave_Return(self, node: cst.Return) -> None:
        """(After the value is evaluated: this analysis's values, not an earlier one's.)
        The constant terms of what a function returns are its summary: a caller that
        back-propagates the result back-propagates them (_returned_terms). A loss helper's
        (`compute_losses(model, batch)`, which a caller of another file back-propagates: a 0-dim
        sum with a graph, whatever the function is called, that no code of this file calls) are
        found as at a `.backward()`."""
        fn = self.flow.function
        if fn is None or node.value is None or (fn.cls is not None and fn.cls.module_like):
            return
        loss = self._bound(node.value)
        if isinstance(loss, cst.BinaryOperation):
            found = self._cut_terms(loss)
            if found:
                self._returned.setdefault(fn, []).append((found, loss, self.stamp()))
        if isinstance(node.value, (cst.Name, cst.BinaryOperation)) or is_self_attribute(node.value):
            if fn.call_sites == 0 and self.flow.value(node.value).scalar:
                self._constant_terms_of(node.value, node)

    def _bound(self, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The expression a place (a name, or a method's own `self.x`) was last bound to; for a
        parameter, its default; any other expression is itself - each through what hands it on
        unchanged (`as_pair(loss + aux.item())[0]` is the sum)."""
        if not isinstance(expr, cst.Name) and not is_self_attribute(expr):
            return self.flow.handed_on(expr)
        found = self.flow.place_binding(expr)
        node = found.node if found is not None else None
        if isinstance(node, cst.Param):
            node = node.default
        return self.flow.handed_on(node) if isinstance(node, cst.BaseExpression) else None

    def _cut_terms(self, loss: cst.BinaryOperation) -> list:
        """(term, where it was cut) for each term of the sum `loss` that is a cut value."""
        return [(term, _cut_site(term, self._bound, self.flow.value)) for term in _terms(loss)
                if _constant_cut(term, self.flow.value, self.flow._qualname, self._bound)
                and self.flow.value(term).grad is not Grad.YES]

    def _constant_terms_of(self, expr: cst.BaseExpression, backward: cst.CSTNode) -> None:
        """The constant terms of the loss `expr` (a sum, or a place bound to one)."""
        loss = self._bound(expr)
        if not isinstance(loss, cst.BinaryOperation) or not self.flow.value(expr).has_graph:
            return
        for term, site in self._cut_terms(loss):
            self._constants.append((term, site, loss, backward, self.stamp()))

    def _returned_terms(self, call: cst.Call, expr: cst.BaseExpression, backward: cst.CSTNode) -> None:
        """`loss = add_feature_loss(loss, target_loss)` and `loss.backward()`: the constant terms of
        the sum the function of the file returns (its last analysis) are constant to this backward."""
        f = self.flow.value(call.func)
        if f.kind is not Kind.FUNCTION or f.callees or not self.flow.value(expr).has_graph:
            return
        for found, loss, stamp in self._returned.get(f.cls, ()):
            if self.current(stamp):
                self._constants += [(term, site, loss, backward, self.stamp()) for term, site in found]

    def _constant_terms(self, reported: set) -> None:
        done = set()  # a loss helper's term: found at its return and at its caller's backward
        for term, site, loss, backward, stamp in self._constants:
            if not self.current(stamp) or term in done or not reported.isdisjoint(descendants(term)) \
                    or site in reported:  # the main path's cut (in the term, or where a name of it was bound)
                continue
            done.add(term)

            def message(line_of, term=term, site=site, backward=backward):
                code = short(self.code_of(term))
                to = (f"the loss returned on line {line_of(backward)}" if isinstance(backward, cst.Return)
                      else f"the `.backward()` on line {line_of(backward)}")
                if site is not term:  # the cut sits on an earlier line: `weights = out["w"].detach()`
                    cut = short(self.code_of(site))
                    if cut != self.code_of(site) and _cut_call(site):  # `F.binary_cross_entropy(...).detach()`
                        cut = f".{site.func.attr.value}()"
                    return (
                        f"`{cut}` makes `{code}` a constant to {to}: cut from its graph, "
                        "it changes the loss value and trains nothing; if it should train, pass the tensor itself"
                    )
                return (
                    f"`{code}` is a constant to {to}: cut from its graph, "
                    "it changes the loss value and trains nothing; if it should train, add the tensor itself"
                )

            where = "returned here" if isinstance(backward, cst.Return) else "back-propagated here"
            related = [(term, "the constant term")] if site is not term else []
            self.report(site, message, related=related + [(loss, "the loss"), (backward, where)])

    def _forward_cut(self, node, value: cst.BaseExpression, fn) -> None:
        inner = self.flow.value(value)
        if inner.has_graph:
            self._cuts_submodules(node, all_origins(inner), fn)

    def _cuts_submodules(self, node, cut: frozenset, fn, via: Optional[cst.Call] = None) -> None:
        """`node` cuts the graphs `cut` in forward() (or in the helper `via` that forward() calls): the
        submodules whose outputs the detached value is made of (through helpers of the class too:
        `adj = self.gen_adj(x).detach()`, gen_adj calling self.w_phi and self.w_theta)."""
        subs = sorted({a for o in cut if isinstance(o, cst.Call) and (a := _self_attribute(o.func)) is not None})
        subs = [a for a in subs if _fresh_submodule(self.flow, fn.cls, a)]
        if subs:
            self._forward_cuts.append((node, subs, cut, fn, self.stamp(), via))

    def _cut_by_helper(self, call: cst.Call, fn) -> None:
        """`adj = stop(adj)` in forward(), `stop` returning `adj.detach()`: the call's value carries a
        `.detach()` or `.data` cut that none of its arguments carried - the helper cut what it was
        given, or what it computed itself, and `flow.cut_from` says which graphs."""
        given = frozenset().union(*(self.flow.value(a.value).cuts for a in call.args))
        for c in self.flow.value(call).cuts - given:
            cut = self.flow.cut_from.get(c.node)
            if cut and c.text in ("`.detach()`", "`.data`"):
                self._cuts_submodules(c.node, cut, fn, via=call)

    def _forward_of(self, fn):
        """The forward() of a module-like class whose computation `fn` is part of: forward() itself,
        or a method of its class that forward() calls (`l = self.weigh(l)`)."""
        forward = fn.cls.methods.get("forward")
        return forward if forward is fn or forward in fn.callers else None

    def _forward_pack(self, node: cst.Call, fn) -> None:
        """`torch.Tensor([self.mse(f(x), y) for f in self.tasks])` in forward(): the values are copied
        into a new tensor without their graph - the same cut as `.detach()` on each. The models that
        computed them, called in forward() itself, are noted; _packed_submodules checks the outputs."""
        if not node.args or node.args[0].keyword is not None:
            return
        packed = self.flow.value(node.args[0].value)
        if packed.kind is not Kind.CONTAINER or not (
            (packed.item is not None and packed.item.has_graph) or any(e.has_graph for e in packed.elements or ())
        ):
            return
        cut = all_origins(packed) | (all_origins(packed.item) if packed.item is not None else frozenset())
        models = []
        for o in cut:
            if not isinstance(o, cst.Call):
                continue
            m = self.flow.value(o.func)
            attr = _self_attribute(o.func)
            if m.kind is Kind.MODULE and m.parameterized and not m.loss and (
                attr is None or _fresh_submodule(self.flow, fn.cls, attr)
            ):
                models.append(o)
        if models:
            self._packed.append((node, models, cut, fn, self.stamp()))

    def finish(self) -> None:
        self._packed_submodules()
        self._cut_submodules()
        self._scored_cuts()
        # one finding per cut: a cut this rule reported above is not reported again (the list is every rule's)
        seen = {r.node for r in self._reports if r.rule is self}
        for b in self.flow.backwards:
            v = b.value
            if not v.has_graph:
                continue  # nothing has a graph: backward raises (GG302)
            pairs = sorted(v.pred_cuts, key=lambda p: (id(p[0].node)))
            for cut, loss in pairs:
                if cut.node in seen:
                    continue
                seen.add(cut.node)
                self._report(cut, loss, b.node)
        self._constant_terms(seen)

    def _scored_cuts(self) -> None:
        """A backward followed by `opt.step()`, where `opt` trains the model `g` and not `d`: a term
        of the loss computed by `d` from `g(z).detach()` sends `g` nothing and trains nothing the
        optimizer steps (a GAN's generator step on `fake.detach()`). The discriminator's own step
        on `fake.detach()` steps `d`: silent."""
        reported = set()
        for b in self.flow.backwards if self._scored else ():
            if not b.value.has_graph or b.by_call:
                continue
            step = _step_after(b.function.node if b.function is not None else self.flow.module, b.node)
            built = trained_models(self.flow, b.function, step[0]) if step is not None else None
            if built is None:
                continue
            trained, construction = built
            for rec in self._scored:
                if rec.cut.node in reported or rec.call not in b.value.origins or rec.call in self._as_target:
                    continue
                if not self._walked_for(rec.stamp[0], b.function) or not self.current(rec.stamp):
                    continue  # a call in a helper or forward() is one node for every caller: not this loss's
                scorer = dotted(rec.call.func)
                cut = sorted(m for m in rec.cut_from if any(m == t or m.startswith(t + ".") for t in trained))
                if cut and any(_related(scorer, t) for t in trained):
                    # the scorer is trained too (a discriminator's step on `fake.detach()`), and so is the
                    # model the cut starves: a bug only if no backward of this function reaches that model
                    if not self._starved(rec, b):
                        continue
                    reported.add(rec.cut.node)
                    self._report_starved(rec, cut, step, construction, b.node)
                    continue
                if not cut:
                    continue  # the cut model is not what this step trains
                if any(_related(o, t) for o in rec.others_from for t in trained):
                    continue  # another input of the scorer reaches the trained model
                reported.add(rec.cut.node)
                self._report_scored(rec, cut, scorer, step, construction, b.node)

    @staticmethod
    def _walked_for(fn, caller) -> bool:
        """Is `fn` the function `caller`, or a method its last analysis walked for a call `self.m(...)`
        of `caller` (directly or through such calls): there `self.d` names the same submodule."""
        while fn is not caller:
            if fn is None or fn.walked_at is None or fn.cls is None:
                return False
            call, fn = fn.walked_at
            if not (is_self_attribute(call.func) and fn is not None and fn.cls is not None):
                return False
        return True

    def _starved(self, rec: ScoredCut, b) -> bool:
        """Does no backward of the function that back-propagates `b` reach what the cut value was
        computed from? (A GAN trained with one optimizer for both nets sends the generator its
        gradient through another term or another backward.)"""
        made = {o for o in rec.cut_origins if isinstance(o, cst.Call)}
        return bool(made) and not any(
            made & other.value.origins for other in self.flow.backwards if other.function is b.function)

    def _report_starved(self, rec: ScoredCut, cut: list, step, construction, backward) -> None:
        node = rec.cut.node
        names = ", ".join(f"`{m}`" for m in cut)
        optimizer, step_call = step

        def message(line_of):
            return (
                f"{rec.cut.text} cuts {names} from the loss back-propagated on line {line_of(backward)}: "
                f"`{optimizer}.step()` on line {line_of(step_call)} updates the parameters of {names} (built on line "
                f"{line_of(construction)}), but no backward reaches them - {names} never learns"
            )

        related = [(rec.call, "the cut value is used here"), (step_call, "the optimizer step"),
                   (backward, "back-propagated here")]
        self.report(node, message, fixes=self._uncut(node), related=related)

    def _report_scored(self, rec: ScoredCut, cut: list, scorer: str, step, construction, backward) -> None:
        node = rec.cut.node
        names = ", ".join(f"`{m}`" for m in cut)
        optimizer, step_call = step

        def message(line_of):
            return (
                f"{rec.cut.text} cuts {names} from the input `{scorer}` scores on line {line_of(rec.call)}, yet the "
                f"`.backward()` on line {line_of(backward)} is for `{optimizer}.step()` on line {line_of(step_call)}, "
                f"built over the parameters of {names}, not `{scorer}` (line {line_of(construction)}): this term "
                f"sends {names} no gradient"
            )

        related = [(rec.call, "scored here"), (step_call, "the optimizer step"), (backward, "back-propagated here")]
        self.report(node, message, fixes=self._uncut(node), related=related)

    def _packed_submodules(self) -> None:
        """A model's outputs copied into a new tensor in forward() (`torch.Tensor(losses)`) that reach no
        output of forward() otherwise: that model never learns (a multi-task loss module whose task
        losses lost their graph: only its own weights train)."""
        for node, models, cut, fn, stamp in self._packed:
            forward = self._forward_of(fn)
            if not self.current(stamp) or forward is None or not _known(forward.returns):
                continue
            out = all_origins(forward.returns)
            lost = []
            for call in models:
                attr = _self_attribute(call.func)
                others = self._sub_calls.get((fn.cls, attr), ()) if attr is not None else (call,)
                if all(c in cut and c not in out for c in others):
                    lost.append(call)
            if not lost:
                continue
            lost.sort(key=lambda c: self.code_of(c))
            calls = ", ".join(f"`{short(self.code_of(c))}`" for c in lost)
            models = ", ".join(dict.fromkeys(f"`{short(self.code_of(c.func))}`" for c in lost))  # (one model called twice)
            packer = f"`{short(self.code_of(node))}`"

            def message(line_of, calls=calls, models=models, lost=lost, packer=packer):
                lines = list(dict.fromkeys(line_of(c) for c in lost))
                where = ", ".join(map(str, lines))
                return (
                    f"{packer} copies what {calls} on line{'' if len(lines) == 1 else 's'} {where} computed into a new "
                    f"tensor without its graph, and no other part of `forward()`'s output comes from it: no backward "
                    f"reaches the parameters of {models}, which keep `.grad` at `None` and never learn"
                )

            self.report(node, message)

    def _cut_submodules(self) -> None:
        """`.detach()` in forward() on a submodule's output that reaches no output of the
        module: that submodule never learns - and, freshly initialised, computes noise forever."""
        seen = set()
        for node, subs, cut, fn, stamp, via in self._forward_cuts:
            if not self.current(stamp) or node in seen:
                continue
            if not _known(fn.returns):
                continue  # `return ModelOutput(...)`, an unknown call: what reaches the outputs is unknown
            if fn.returns.kind is Kind.NUMBER:
                continue  # a forward() that returns nothing (or a number): no `.detach()` is what cuts its layers
            out = all_origins(fn.returns)
            # cut: every call of the submodule (in this class: a helper's last analysis may have been for
            # another's) feeds only the detached value, and none reaches an output
            calls = {a: self._sub_calls.get((fn.cls, a), ()) for a in subs}
            subs = [a for a in subs if any(c in cut for c in calls[a]) and all(c in cut and c not in out for c in calls[a])]
            # (weights the class itself copies in - `self.fc1.weight.data.copy_(w)`, a cross-entropy-method
            # agent - are set by its code, not learned by a backward)
            cls_code = self.code_of(fn.cls.node)
            subs = [a for a in subs if not re.search(rf"self\.{re.escape(a)}\.(?:weight|bias)(?:\.data)?\.copy_\(", cls_code)]
            if not subs:
                continue  # another use of the submodule trains it
            seen.add(node)
            names = ", ".join(f"`self.{a}`" for a in subs)
            how = "`.data`" if isinstance(node, cst.Attribute) else "`.detach()`"
            if via is not None:  # the cut is in a helper others may call: the finding is where forward() calls it

                def message(line_of, names=names, one=len(subs) == 1, how=how, via=via, node=node):
                    return (
                        f"`{short(self.code_of(via))}` cuts {names} from every output of `forward()` ({how} on line "
                        f"{line_of(node)}): no backward reaches {'its' if one else 'their'} parameters, which keep "
                        "`.grad` at `None` and never learn"
                    )

                self.report(via, message, related=[(node, "cut here")])
                continue

            def message(line_of, names=names, one=len(subs) == 1, how=how):
                return (
                    f"{how} cuts {names} from every output of `forward()`: no backward reaches "
                    f"{'its' if one else 'their'} parameters, which keep `.grad` at `None` and never learn"
                )

            self.report(node, message, fixes=self._uncut(node))

    def _uncut(self, node) -> list:
        """The fix that removes the cut `x.detach()` / `x.data` (`node`) and leaves `x`: unsafe, as the
        term then trains the model it was cut from. None for another cut (`.item()`, `torch.tensor(x)`)."""
        inner = _cut_input(node)
        if inner is None:
            return []
        how = "`.detach()`" if isinstance(node, cst.Call) else "`.data`"
        return [PendingFix(f"Remove {how}: `{short(self.code_of(inner))}`", Safety.UNSAFE, [(node, inner)])]

    def _report(self, cut, loss, backward) -> None:
        node = cut.node

        what = "a term of the loss" if isinstance(loss, cst.BinaryOperation) else "the prediction of the loss"

        def message(line_of):
            return (
                f"{cut.text} cuts {what} on line {line_of(loss)} from its model: the `.backward()` "
                f"on line {line_of(backward)} sends no gradient through it"
            )

        # `x.detach().item()`: removing the detach alone leaves the cut (and the finding) in place.
        cut_again = any(f"{self.code_of(node)}.{then}" in self.code_of(loss) for then in ("item(", "numpy(", "tolist(", "data"))
        fixes = [] if cut_again else self._uncut(node)
        related = [(loss, "the loss"), (backward, "back-propagated here")]
        self.report(node, message, fixes=fixes, related=related)

    VALID = [
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn

q_net, target_net = nn.Linear(4, 2), nn.Linear(4, 2)
s, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
q = q_net(s).max(1)[0]
target = r + 0.99 * target_net(s2).max(1)[0].detach()
loss = F.mse_loss(q, target)
loss.backward()
manual = (q_net(s).max(1)[0] - target.detach()).pow(2).mean()
manual.backward()
""",
            note="TD targets, with a loss function and written out",
            runtime="assert q_net.weight.grad is not None and target_net.weight.grad is None",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn

student, teacher = nn.Linear(4, 3), nn.Linear(4, 3)
x = torch.randn(6, 4)
with torch.no_grad():
    teacher_logits = teacher(x)
loss = F.kl_div(F.log_softmax(student(x), 1), F.softmax(teacher_logits, 1), reduction="batchmean")
loss.backward()
""",
            note="distillation: the teacher's output is the target",
            runtime="assert student.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn

G, D = nn.Linear(2, 4), nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
bce = nn.BCELoss()
fake = G(torch.randn(5, 2))
d_loss = bce(D(fake.detach()), torch.zeros(5, 1))
d_loss.backward()
""",
            note="a GAN discriminator step on `fake.detach()`",
            runtime="assert D[0].weight.grad is not None and G.weight.grad is None",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn

encoder, predictor = nn.Linear(4, 4), nn.Linear(4, 4)
x1, x2 = torch.randn(3, 4), torch.randn(3, 4)
z1, z2 = encoder(x1), encoder(x2)
p1 = predictor(z1)
loss = -F.cosine_similarity(p1, z2.detach(), dim=-1).mean()
loss.backward()
""",
            note="SimSiam-style stop-gradient on the target branch",
        ),
        Valid(
            """
import torch
from torch import nn


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)

    def forward(self, a, b):
        za = self.encoder(a)
        zb = self.encoder(b).detach()
        return -(za * zb).sum(1).mean()


model = Siamese()
loss = model(torch.randn(3, 4), torch.randn(3, 4))
loss.backward()
""",
            runtime='assert model.encoder.weight.grad is not None',
            note='stop-gradient on one branch of a shared encoder (SimSiam): the other branch trains it',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn

G = nn.Sequential(nn.Linear(2, 4), nn.Tanh())
D = nn.Linear(4, 1)
d_opt = torch.optim.SGD(D.parameters(), lr=0.1)
z, real = torch.randn(6, 2), torch.randn(6, 4)
fake = G(z)
d_opt.zero_grad()
d_loss = F.binary_cross_entropy_with_logits(D(fake.detach()), torch.zeros(6, 1)) + F.binary_cross_entropy_with_logits(
    D(real), torch.ones(6, 1))
d_loss.backward()
d_opt.step()
""",
            runtime="assert D.weight.grad is not None and G[0].weight.grad is None",
            note="a GAN discriminator step: the optimizer stepped trains the scorer D, the generator is cut on purpose",
        ),
        Valid(
            """
import itertools

import torch
import torch.nn.functional as F
from torch import nn

G = nn.Sequential(nn.Linear(2, 4), nn.Tanh())
D = nn.Linear(4, 1)
opt = torch.optim.SGD(itertools.chain(G.parameters(), D.parameters()), lr=0.1)
student = nn.Linear(4, 4)
z, real = torch.randn(6, 2), torch.randn(6, 4)
fake = G(z)
opt.zero_grad()
d_loss = F.binary_cross_entropy_with_logits(D(fake.detach()), torch.zeros(6, 1))
feature_loss = F.mse_loss(fake, student(fake.detach()))
(d_loss + feature_loss).backward()
opt.step()
""",
            runtime="assert D.weight.grad is not None and G[0].weight.grad is not None",
            note="one optimizer over both models (the scorer D trains on the cut input); a module's score of the cut "
            "input as a loss's target",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class BalancedLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])

    def forward(self, x, ys):
        losses = [F.mse_loss(head(x), y) for head, y in zip(self.heads, ys)]
        weights = torch.tensor(losses)
        weights = weights / weights.sum()
        return (weights * torch.stack(losses)).sum()


crit = BalancedLoss()
crit(torch.randn(5, 4), [torch.randn(5, 1), torch.randn(5, 1)]).backward()
""",
            runtime="assert crit.heads[0].weight.grad is not None and crit.heads[1].weight.grad is not None",
            note="loss values packed into a new tensor as weights, while the losses themselves reach the output "
            "through `torch.stack`",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(4, 2)
log_temperature = nn.Parameter(torch.zeros(()))
x, y = torch.randn(6, 4), torch.randn(6, 2)
err = F.mse_loss(model(x), y, reduction="none").mean(1)
weights = torch.softmax(-err, 0)
loss = (weights.detach() * err).sum() + log_temperature.exp() * err.mean().detach()
loss.backward()
""",
            runtime='assert model.weight.grad is not None and log_temperature.grad is not None',
            note='a cut factor is a stop-gradient weight; a learnable weight times a cut term still trains the weight',
        ),
        Valid(
            """
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(4, 3)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
logits = model(x)
confidence = np.exp(-F.cross_entropy(logits, y).detach().numpy())
loss = F.cross_entropy(logits, y) * confidence + np.log(3.0)
loss.backward()
""",
            note="a NumPy weight of the loss made from a cut value (a factor, a stop-gradient weight) and a NumPy constant with no cut in it: neither is a cut prediction",
            runtime="assert model.weight.grad is not None and model.weight.grad.abs().sum() > 0",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def consistency(student, teacher):
    return F.mse_loss(student, teacher)


def compute_loss(model, x, y, weight=0.1):
    model.train()
    out = model(x)
    target = out.detach()
    return F.mse_loss(out, y) + weight * consistency(out, target)
""",
            note="a loss helper whose consistency term takes the detached output as its target and the output itself as the prediction: the term trains the model",
            runtime="model = nn.Linear(4, 2)\ncompute_loss(model, torch.randn(3, 4), torch.randn(3, 2)).backward()\nassert model.weight.grad is not None",
        ),
        Valid(
            """
import math

import torch
from torch import nn


class FixedEmbedding(nn.Module):
    def __init__(self, c_in, d_model):
        super().__init__()
        w = torch.zeros(c_in, d_model)
        position = torch.arange(0, c_in).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        w[:, 0::2] = torch.sin(position * div_term)
        w[:, 1::2] = torch.cos(position * div_term)
        self.emb = nn.Embedding(c_in, d_model)
        self.emb.weight = nn.Parameter(w, requires_grad=False)

    def forward(self, x):
        return self.emb(x).detach()
""",
            note="Informer's fixed (sinusoidal) embedding: its weight is frozen on purpose in __init__, so the `.detach()` cuts nothing that should learn",
            runtime="emb = FixedEmbedding(24, 8)\nout = emb(torch.tensor([[1, 2, 3]]))\nassert not emb.emb.weight.requires_grad and not out.requires_grad",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Linear(4, 1)
        self.actor = nn.Linear(4, 2)

    def forward(self, x):
        return Categorical(logits=self.actor(x)), self.critic(x)


def update(model, optimizer, state, returns):
    dist, value = model(state)
    log_prob = dist.log_prob(dist.sample())
    advantage = returns - value
    actor_loss = -(log_prob * advantage.detach()).mean()
    critic_loss = advantage.pow(2).mean()
    loss = actor_loss + 0.5 * critic_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


model = ActorCritic()
update(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(3, 4), torch.ones(3, 1))
""",
            note="RL-Adventure's actor-critic: the actor loss weights a distribution's log-probabilities (whose graph the engine cannot see) by the detached advantage - a baseline, not a cut prediction",
            runtime='assert model.actor.weight.grad is not None and model.critic.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


model, aux = nn.Linear(3, 1), nn.Linear(3, 1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
loss = nn.functional.mse_loss(model(x), y)
aux_loss = tagged(nn.functional.mse_loss(aux(x), y), "aux")[0]
loss = tagged(loss + aux_loss, "total")[0]
loss.backward()
""",
            note="the auxiliary loss added with its graph through the same helper",
            runtime="assert aux.weight.grad is not None",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def objective(net, xb, yb):
    pred = net(xb)
    return F.mse_loss(pred, yb) + pred.detach().abs().mean().item()


def validate(net, batches):
    with torch.no_grad():
        return sum(objective(net, xb, yb).item() for xb, yb in batches)
""",
            runtime='net = torch.nn.Linear(3, 2)\nassert validate(net, [(torch.randn(4, 3), torch.randn(4, 2))]) > 0\nassert net.weight.grad is None',
            note='the same helper, which this file calls only under no_grad for a metric: not a loss anything back-propagates',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


class GAN:
    def __init__(self, g, d):
        self.g, self.d = g, d
        self.g_optim = torch.optim.Adam(self.g.parameters(), lr=1e-3)
        self.d_optim = torch.optim.Adam(self.d.parameters(), lr=1e-3)

    def score(self, fake):
        return self.d(fake.detach())

    def discriminator_step(self, z):
        fake = self.g(z)
        scores = self.score(fake)
        loss = F.mse_loss(scores, torch.zeros_like(scores))
        self.d_optim.zero_grad()
        loss.backward()
        self.d_optim.step()
        return loss.item()
""",
            note='the same scoring method called by the discriminator step, which steps the discriminator: the detach is right there',
            runtime='gan = GAN(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))\ngan.discriminator_step(torch.randn(4, 2))\nassert gan.d.weight.grad is not None and gan.g.weight.grad is None',
        ),
        Valid(
            """
import torch
from torch import nn


class Deformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight_net = nn.Linear(3, 4)
        self.offset_net = nn.Linear(3, 3)

    def forward(self, points, cage):
        weights = torch.softmax(self.weight_net(points), dim=-1)
        return {"deformed": weights @ (cage + self.offset_net(cage)), "weight": weights}


def weight_penalty(weights):
    return (weights ** 2).mean()


def compute_loss(model, points, cage, target, reg=1.0):
    outputs = model(points, cage)
    weights = weights_of(outputs)
    loss = ((outputs["deformed"] - target) ** 2).mean()
    return loss + weight_penalty(weights) * reg


def weights_of(outputs):
    return outputs["weight"]
""",
            runtime="torch.manual_seed(0)\nmodel = Deformer()\nargs = (torch.randn(5, 3), torch.randn(4, 3), torch.randn(5, 3))\ncompute_loss(model, *args, reg=100.0).backward()\ng = model.weight_net.weight.grad.clone()\nmodel.zero_grad()\ncompute_loss(model, *args, reg=0.0).backward()\nassert not torch.allclose(g, model.weight_net.weight.grad)",
            note="the helper hands the predicted weights on undetached: the penalty trains them",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.cls = nn.Linear(8, 3)
        self.box = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return self.cls(h), self.box(h)


model = TwoHeads()
images, labels, boxes = torch.randn(5, 4), torch.randint(0, 3, (5,)), torch.randn(5, 4)
logits, box_pred = model(images)
loss = F.cross_entropy(logits, labels) + F.smooth_l1_loss(box_pred.detach(), boxes)
loss.backward()
""",
            range=(22, 58, 22, 75),
            message="`.detach()` cuts the prediction of the loss on line 22 from its model: the `.backward()` on line 23 "
            "sends no gradient through it",
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass TwoHeads(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.trunk = nn.Linear(4, 8)\n"
                "        self.cls = nn.Linear(8, 3)\n        self.box = nn.Linear(8, 4)\n\n    def forward(self, x):\n"
                "        h = torch.relu(self.trunk(x))\n        return self.cls(h), self.box(h)\n\n\nmodel = TwoHeads()\n"
                "images, labels, boxes = torch.randn(5, 4), torch.randint(0, 3, (5,)), torch.randn(5, 4)\n"
                "logits, box_pred = model(images)\n"
                "loss = F.cross_entropy(logits, labels) + F.smooth_l1_loss(box_pred, boxes)\nloss.backward()\n",
            ),
            runtime="assert model.box.weight.grad is None and model.cls.weight.grad is not None",
        ),
        Invalid(
            """
import torch
from torch import nn

net = nn.Linear(3, 1)
mse = nn.MSELoss()
x, y = torch.randn(6, 3), torch.randn(6, 1)
with torch.no_grad():
    pred = net(x)
loss = mse(pred, y) + 1e-3 * net.weight.pow(2).sum()
loss.backward()
""",
            range=(8, 5, 8, 20),
            message="`torch.no_grad()` cuts the prediction of the loss on line 10 from its model: the `.backward()` on "
            "line 11 sends no gradient through it",
            runtime="assert net.bias.grad is None",
            note="the forward pass moved under no_grad; only the weight penalty trains",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Trainer:
    def __init__(self, model, aux):
        self.model, self.aux = model, aux
        self.opt = torch.optim.SGD(list(model.parameters()) + list(aux.parameters()), lr=0.1)

    def step(self, x, y):
        self.opt.zero_grad()
        scores = self.model(x)
        main = F.binary_cross_entropy_with_logits(scores.data, y)
        aux_loss = self.aux(x).pow(2).mean()
        (main + aux_loss).backward()
        self.opt.step()


trainer = Trainer(nn.Linear(4, 1), nn.Linear(4, 2))
trainer.step(torch.randn(8, 4), torch.rand(8, 1))
""",
            range=(15, 50, 15, 61),
            message="`.data` cuts the prediction of the loss on line 15 from its model: the `.backward()` on line 17 "
            "sends no gradient through it",
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Trainer:\n"
                "    def __init__(self, model, aux):\n        self.model, self.aux = model, aux\n"
                "        self.opt = torch.optim.SGD(list(model.parameters()) + list(aux.parameters()), lr=0.1)\n\n"
                "    def step(self, x, y):\n        self.opt.zero_grad()\n        scores = self.model(x)\n"
                "        main = F.binary_cross_entropy_with_logits(scores, y)\n"
                "        aux_loss = self.aux(x).pow(2).mean()\n        (main + aux_loss).backward()\n"
                "        self.opt.step()\n\n\ntrainer = Trainer(nn.Linear(4, 1), nn.Linear(4, 2))\n"
                "trainer.step(torch.randn(8, 4), torch.rand(8, 1))\n",
            ),
            runtime="assert trainer.model.weight.grad is None and trainer.aux.weight.grad is not None",
            note="a trainer class; `.data` as the cut",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def reconstruction(decoder, codes, pixels):
    return F.mse_loss(decoder(codes).detach(), pixels)


decoder = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
for epoch in range(2):
    for codes, pixels in [(torch.randn(5, 2), torch.randn(5, 4))]:
        decoder.zero_grad()
        penalty = sum(w.pow(2).sum() for w in decoder.parameters())
        err = reconstruction(decoder, codes, pixels) + 1e-4 * penalty
        err.backward()
""",
            range=(8, 22, 8, 45),
            message='`.detach()` cuts the prediction of the loss on line 8 from its model: the `.backward()` on line '
            '17 sends no gradient through it',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n'
                'def reconstruction(decoder, codes, pixels):\n    return F.mse_loss(decoder(codes), pixels)\n\n\n'
                'decoder = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))\nfor epoch in range(2):\n'
                '    for codes, pixels in [(torch.randn(5, 2), torch.randn(5, 4))]:\n        decoder.zero_grad()\n'
                '        penalty = sum(w.pow(2).sum() for w in decoder.parameters())\n'
                '        err = reconstruction(decoder, codes, pixels) + 1e-4 * penalty\n        err.backward()\n',
            ),
            runtime='assert torch.allclose(decoder[2].bias.grad, 2e-4 * decoder[2].bias)',
            note='nested loops; the loss built in a helper function; an nn.Sequential model (only the L2 term trains)',
        ),
        Invalid(
            """
import torch
from torch import nn

regressor = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
huber = nn.HuberLoss()
feats, scores = torch.randn(10, 3), torch.randn(10, 1)
step = 0
while step < 3:
    guess = regressor(feats)
    objective = huber(guess.detach(), scores) + 1e-4 * regressor[0].weight.norm()
    objective.backward()
    step += 1
""",
            range=(11, 22, 11, 36),
            message='`.detach()` cuts the prediction of the loss on line 11 from its model: the `.backward()` on '
            'line 12 sends no gradient through it',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n'
                'regressor = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))\nhuber = nn.HuberLoss()\n'
                'feats, scores = torch.randn(10, 3), torch.randn(10, 1)\nstep = 0\nwhile step < 3:\n'
                '    guess = regressor(feats)\n'
                '    objective = huber(guess, scores) + 1e-4 * regressor[0].weight.norm()\n'
                '    objective.backward()\n    step += 1\n',
            ),
            runtime='assert regressor[2].weight.grad is None and regressor[0].bias.grad is None',
            note='a `while` loop; renamed variables; a loss module from `from torch import nn`',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

heads = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])
x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
losses = [F.cross_entropy(head(x).detach(), y) for head in heads]
total = sum(losses) + heads[0].weight.pow(2).sum()
total.backward()
""",
            range=(8, 26, 8, 42),
            message='`.detach()` cuts the prediction of the loss on line 8 from its model: the `.backward()` on line '
            '10 sends no gradient through it',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n'
                'heads = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])\n'
                'x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))\n'
                'losses = [F.cross_entropy(head(x), y) for head in heads]\n'
                'total = sum(losses) + heads[0].weight.pow(2).sum()\ntotal.backward()\n',
            ),
            runtime='assert heads[1].weight.grad is None and heads[0].weight.grad is not None',
            note='per-head losses in a list comprehension',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class WithAux(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head = nn.Linear(8, 3)
        self.aux = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.head(h), self.aux(h)


def train_step(model, x, y, target, optimizer):
    logits, aux = model(x)
    loss = F.cross_entropy(logits, y)
    aux_loss = F.mse_loss(aux, target)
    loss = loss + 0.5 * aux_loss.detach().item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


net = WithAux()
train_step(net, torch.randn(6, 4), torch.randint(0, 3, (6,)), torch.randn(6, 1), torch.optim.SGD(net.parameters(), lr=0.1))
""",
            range=(23, 24, 23, 41),
            message='`.detach()` cuts a term of the loss on line 23 from its model: the `.backward()` on line 25 sends no gradient through it',
            runtime='assert net.aux.weight.grad is None and net.head.weight.grad is not None',
            note='a loss term turned into a number and added: a constant to backward(), the aux head never learns',
        ),
        Invalid(
            """
import torch
from torch import nn


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.text = nn.Linear(4, 4)
        self.image = nn.Linear(4, 4)

    def forward(self, t, i):
        ft = self.text(t)
        fi = self.image(i).detach()
        return (ft * fi).sum(1)


model = TwoTower()
score = model(torch.randn(3, 4), torch.randn(3, 4))
score.mean().backward()
""",
            range=(14, 13, 14, 35),
            message='`.detach()` cuts `self.image` from every output of `forward()`: no backward reaches its parameters, which keep `.grad` at `None` and never learn',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass TwoTower(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.text = nn.Linear(4, 4)\n        self.image = nn.Linear(4, 4)\n\n    def forward(self, t, i):\n        ft = self.text(t)\n        fi = self.image(i)\n        return (ft * fi).sum(1)\n\n\nmodel = TwoTower()\nscore = model(torch.randn(3, 4), torch.randn(3, 4))\nscore.mean().backward()\n',
            ),
            runtime='assert model.image.weight.grad is None and model.text.weight.grad is not None',
            note='a fresh submodule detached from every output in forward(): it never learns',
        ),
        Invalid(
            """
import torch
from torch import nn


class AdaptiveGraph(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_phi = nn.Linear(6, 4, bias=False)
        self.w_theta = nn.Linear(6, 4, bias=False)
        self.gc = nn.Linear(6, 1)

    def gen_adj(self, x):
        return torch.softmax(self.w_phi(x) @ self.w_theta(x).t(), dim=1)

    def forward(self, x):
        adj = self.gen_adj(x).detach()
        return self.gc(adj @ x).sum()


model = AdaptiveGraph()
model(torch.randn(5, 6)).backward()
""",
            range=(17, 14, 17, 38),
            message='`.detach()` cuts `self.w_phi`, `self.w_theta` from every output of `forward()`: no backward reaches their parameters, which keep `.grad` at `None` and never learn',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass AdaptiveGraph(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.w_phi = nn.Linear(6, 4, bias=False)\n        self.w_theta = nn.Linear(6, 4, bias=False)\n        self.gc = nn.Linear(6, 1)\n\n    def gen_adj(self, x):\n        return torch.softmax(self.w_phi(x) @ self.w_theta(x).t(), dim=1)\n\n    def forward(self, x):\n        adj = self.gen_adj(x)\n        return self.gc(adj @ x).sum()\n\n\nmodel = AdaptiveGraph()\nmodel(torch.randn(5, 6)).backward()\n',
            ),
            runtime='assert model.w_phi.weight.grad is None and model.w_theta.weight.grad is None and model.gc.weight.grad is not None',
            note="submodules reached through the class's own helper, detached in forward(): they never learn (A-GCN)",
        ),
        Invalid(
            """
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(6, 6)
        self.out = nn.Linear(6, 7)

    def forward(self, features):
        h, logits = features, []
        for _ in range(3):
            h = self.cell(features, h)
            logits.append(self.out(h))
        return torch.stack(logits, 1).data


decoder = Decoder()
logits = decoder(torch.randn(2, 6))
nn.functional.cross_entropy(logits.reshape(-1, 7), torch.randint(0, 7, (6,))).backward()
""",
            range=(17, 15, 17, 42),
            message='`.data` cuts `self.cell`, `self.out` from every output of `forward()`: no backward reaches their parameters, which keep `.grad` at `None` and never learn',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Decoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.cell = nn.GRUCell(6, 6)\n        self.out = nn.Linear(6, 7)\n\n    def forward(self, features):\n        h, logits = features, []\n        for _ in range(3):\n            h = self.cell(features, h)\n            logits.append(self.out(h))\n        return torch.stack(logits, 1)\n\n\ndecoder = Decoder()\nlogits = decoder(torch.randn(2, 6))\nnn.functional.cross_entropy(logits.reshape(-1, 7), torch.randint(0, 7, (6,))).backward()\n',
            ),
            raises='element 0 of tensors does not require grad and does not have a grad_fn',
            note='the stacked logits returned through .data: nothing in the output has a graph (inversecooking)',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

G = nn.Sequential(nn.Linear(2, 4), nn.Tanh())
D = nn.Linear(4, 1)
g_opt = torch.optim.SGD(G.parameters(), lr=0.1)
z, real = torch.randn(6, 2), torch.randn(6, 4)
fake = G(z)
adversarial = F.binary_cross_entropy_with_logits(D(fake.detach()), torch.ones(6, 1))
g_opt.zero_grad()
(adversarial + F.l1_loss(fake, real)).backward()
g_opt.step()
""",
            range=(11, 51, 11, 64),
            message="`.detach()` cuts `G` from the input `D` scores on line 11, yet the `.backward()` on line 13 is for "
            "`g_opt.step()` on line 14, built over the parameters of `G`, not `D` (line 8): this term sends `G` no gradient",
            fixes=('\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\nG = nn.Sequential(nn.Linear(2, 4), nn.Tanh())\nD = nn.Linear(4, 1)\ng_opt = torch.optim.SGD(G.parameters(), lr=0.1)\nz, real = torch.randn(6, 2), torch.randn(6, 4)\nfake = G(z)\nadversarial = F.binary_cross_entropy_with_logits(D(fake), torch.ones(6, 1))\ng_opt.zero_grad()\n(adversarial + F.l1_loss(fake, real)).backward()\ng_opt.step()\n',),
            runtime="G.zero_grad(); F.binary_cross_entropy_with_logits(D(fake.detach()), torch.ones(6, 1)).backward(); "
            "assert G[0].weight.grad is None and D.weight.grad is not None",
            note="a GAN generator step that scores `fake.detach()`: the adversarial term trains only D, which the "
            "generator's optimizer does not step (image2reverb)",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class TwoTaskLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, x, ys):
        losses = [F.mse_loss(head(x), y) for head, y in zip(self.heads, ys)]
        weighted = torch.tensor(losses) * torch.exp(-self.log_vars) + self.log_vars
        return weighted.sum()


crit = TwoTaskLoss()
crit(torch.randn(5, 4), [torch.randn(5, 1), torch.randn(5, 1)]).backward()
""",
            range=(15, 19, 15, 39),
            message="`torch.tensor(losses)` copies what `head(x)` on line 14 computed into a new tensor without its "
            "graph, and no other part of `forward()`'s output comes from it: no backward reaches the parameters of "
            "`head`, which keep `.grad` at `None` and never learn",
            runtime="assert crit.heads[0].weight.grad is None and crit.log_vars.grad is not None",
            note="task losses packed into a new tensor before they are weighted by learnt uncertainties: only the "
            "weights train (multi-task uncertainty weighting with `torch.Tensor(l)`)",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.adapter = nn.Linear(4, 4)

    def forward(self, x):
        terms = []
        for step in range(3):
            x = self.body(x)
            a, b = self.adapter(x), self.adapter(x.flip(-1))
            terms.append(F.cosine_similarity(a, b, dim=-1).abs().mean())
        return x, x.pow(2).mean() + 0.1 * torch.mean(torch.tensor(terms))


def train(model, optimizer, x):
    optimizer.zero_grad()
    _, loss = model(x)
    loss.backward()
    optimizer.step()


net = Net()
train(net, torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(2, 4))
""",
            range=(19, 53, 19, 72),
            message="`torch.tensor(terms)` copies what `self.adapter(x)`, `self.adapter(x.flip(-1))` on line 17 computed "
            "into a new tensor without its graph, and no other part of `forward()`'s output comes from it: no backward "
            "reaches the parameters of `self.adapter`, which keep `.grad` at `None` and never learn",
            runtime="assert net.adapter.weight.grad is None and net.body.weight.grad is not None",
            note="predrnn-pytorch#11: per-step decoupling terms packed by `torch.tensor(list)`; one finding for the cut "
            "(the packed submodule and the backward's constant term are the same cut), the adapter named once",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F


def train_step(model, aux_head, x, y):
    feats = model(x)
    loss = F.mse_loss(feats, y)
    aux_loss = aux_head(feats).pow(2).mean()
    loss = loss + aux_loss.detach().item()
    loss.backward()
    return loss.item()
""",
            range=(10, 18, 10, 42),
            message='`aux_loss.detach().item()` is a constant to the `.backward()` on line 11: cut from its graph, it changes the loss value and trains nothing; if it should train, add the tensor itself',
            runtime='from torch import nn\nmodel, aux_head = nn.Linear(4, 3), nn.Linear(3, 1)\ntrain_step(model, aux_head, torch.randn(5, 4), torch.randn(5, 3))\nassert model.weight.grad is not None and aux_head.weight.grad is None',
            note='regression (SimAC): a loss term added as `.detach().item()` is a constant, whatever computed it - the head behind it never learns',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn

disc = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
opt = torch.optim.SGD(disc.parameters(), lr=0.1)
real, fake = torch.randn(8, 4), torch.randn(8, 4)
penalty = sum(p.pow(2).sum() for p in disc.parameters())
d_loss = -np.mean(np.log(disc(real).detach().numpy() + 1e-5) + np.log(1.0 - disc(fake).detach().numpy() + 1e-5)) + 1e-4 * penalty
opt.zero_grad()
d_loss.backward()
""",
            range=(10, 9, 10, 112),
            message="`-np.mean(np.log(disc(real).detach()...` is a constant to the `.backward()` on line 12: cut from its graph, it changes the loss value and trains nothing; if it should train, add the tensor itself",
            runtime="assert torch.allclose(disc[0].bias.grad, 2e-4 * disc[0].bias)",
            note="a GAN discriminator loss computed in NumPy on `.detach().numpy()` of its outputs (CFGAN): a NumPy result added to the loss is a constant, only the penalty trains the discriminator",
        ),
        Invalid(
            """
import torch
from torch import nn


class Deformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight_net = nn.Linear(3, 4)
        self.offset_net = nn.Linear(3, 3)

    def forward(self, points, cage):
        weights = torch.softmax(self.weight_net(points), dim=-1)
        return {"deformed": weights @ (cage + self.offset_net(cage)), "weight": weights}


def weight_penalty(weights):
    return (weights ** 2).mean()


def compute_loss(model, points, cage, target, reg=1.0):
    outputs = model(points, cage)
    weights = outputs["weight"].detach()
    loss = ((outputs["deformed"] - target) ** 2).mean()
    return loss + weight_penalty(weights) * reg
""",
            range=(23, 14, 23, 40),
            message='`outputs["weight"].detach()` makes `weight_penalty(weights) * reg` a constant to the loss returned on line 25: cut from its graph, it changes the loss value and trains nothing; if it should train, pass the tensor itself',
            runtime="torch.manual_seed(0)\nmodel = Deformer()\nargs = (torch.randn(5, 3), torch.randn(4, 3), torch.randn(5, 3))\ncompute_loss(model, *args, reg=100.0).backward()\ng = model.weight_net.weight.grad.clone()\nmodel.zero_grad()\ncompute_loss(model, *args, reg=0.0).backward()\nassert torch.allclose(g, model.weight_net.weight.grad)",
            note="deep_cage: a loss helper regularises the predicted weights after detaching them; the caller back-propagates what it returns, and the penalty changes no gradient (the same with reg=100 and reg=0)",
        ),
        Invalid(
            """
import torch
from torch import nn


class Deformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight_net = nn.Linear(3, 4)
        self.offset_net = nn.Linear(3, 3)

    def forward(self, points, cage):
        weights = torch.softmax(self.weight_net(points), dim=-1)
        return {"deformed": weights @ (cage + self.offset_net(cage)), "weight": weights}


def weight_penalty(weights):
    return (weights ** 2).mean()


def compute_loss(model, points, cage, target, reg=1.0):
    outputs = model(points, cage)
    weights = frozen_weights(outputs)
    loss = ((outputs["deformed"] - target) ** 2).mean()
    return loss + weight_penalty(weights) * reg


def frozen_weights(outputs):
    return outputs["weight"].detach()
""",
            range=(29, 11, 29, 37),
            message='`outputs["weight"].detach()` makes `weight_penalty(weights) * reg` a constant to the loss returned on line 25: cut from its graph, it changes the loss value and trains nothing; if it should train, pass the tensor itself',
            runtime="torch.manual_seed(0)\nmodel = Deformer()\nargs = (torch.randn(5, 3), torch.randn(4, 3), torch.randn(5, 3))\ncompute_loss(model, *args, reg=100.0).backward()\ng = model.weight_net.weight.grad.clone()\nmodel.zero_grad()\ncompute_loss(model, *args, reg=0.0).backward()\nassert torch.allclose(g, model.weight_net.weight.grad)",
            note="the same with the detach in a helper defined after its caller (issue 33's extract variants): `model` is a "
                 "`Deformer` by the keys read of its result, `outputs[\"deformed\"]` here and `outputs[\"weight\"]` in the "
                 "helper it is passed to (evidence through helpers)",
        ),
        Invalid(
            """
import torch
from torch import nn
import torch.nn.functional as F


def train(encoder, head, batches):
    opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()))
    for x, y in batches:
        z = encoder(x)
        loss = F.cross_entropy(head(z.detach()), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            range=(11, 36, 11, 46),
            message='`.detach()` cuts `encoder` from the loss back-propagated on line 13: `opt.step()` on line 14 updates the parameters of `encoder` (built on line 8), but no backward reaches them - `encoder` never learns',
            fixes=(
                '\nimport torch\nfrom torch import nn\nimport torch.nn.functional as F\n\n\ndef train(encoder, head, batches):\n    opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()))\n    for x, y in batches:\n        z = encoder(x)\n        loss = F.cross_entropy(head(z), y)\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n',
            ),
            note="the optimizer holds the encoder's parameters, but the only loss reaches the head alone",
            runtime='encoder, head = nn.Linear(8, 4), nn.Linear(4, 3)\ntrain(encoder, head, [(torch.randn(5, 8), torch.randint(0, 3, (5,)))])\nassert encoder.weight.grad is None and head.weight.grad is not None',
        ),
        Invalid(
            """
import torch
from torch import nn


def stop(adj):
    return adj.detach()


class AdaptiveGraph(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Linear(6, 6, bias=False)
        self.gc = nn.Linear(6, 1)

    def forward(self, x):
        adj = torch.softmax(self.w(x) @ x.t(), dim=1)
        adj = stop(adj)
        return self.gc(adj @ x).sum()


model = AdaptiveGraph()
model(torch.randn(5, 6)).backward()
""",
            range=(18, 14, 18, 23),
            message="`stop(adj)` cuts `self.w` from every output of `forward()` (`.detach()` on line 7): no backward "
            "reaches its parameters, which keep `.grad` at `None` and never learn",
            runtime="assert model.w.weight.grad is None and model.gc.weight.grad is not None",
            note="the cut made in a helper forward() calls: the value it returns carries the `.detach()` (A-GCN with "
            "the detach extracted); no fix, the helper may have other callers",
        ),
        Invalid(
            """
import torch
from torch import nn


class Trainer:
    def step(self, model, aux_head, x, y):
        feats = model(x)
        self.loss = nn.functional.mse_loss(feats, y)
        aux_loss = aux_head(feats).pow(2).mean()
        self.loss = self.loss + aux_loss.detach().item()
        self.loss.backward()
""",
            range=(11, 32, 11, 56),
            message="`aux_loss.detach().item()` is a constant to the `.backward()` on line 12: cut from its graph, it "
            "changes the loss value and trains nothing; if it should train, add the tensor itself",
            runtime="model, aux_head = nn.Linear(4, 3), nn.Linear(3, 1)\n"
            "Trainer().step(model, aux_head, torch.randn(5, 4), torch.randn(5, 3))\n"
            "assert model.weight.grad is not None and aux_head.weight.grad is None",
            note="the loss kept on `self.loss` in a method: the place the method last assigned, as a local",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F


def combined(loss, extra):
    return loss + extra.detach().item()


def train_step(model, aux_head, x, y):
    feats = model(x)
    loss = F.mse_loss(feats, y)
    loss = combined(loss, aux_head(feats).pow(2).mean())
    loss.backward()
""",
            range=(7, 18, 7, 39),
            message="`extra.detach().item()` is a constant to the `.backward()` on line 14: cut from its graph, it "
            "changes the loss value and trains nothing; if it should train, add the tensor itself",
            runtime="from torch import nn\nmodel, aux_head = nn.Linear(4, 3), nn.Linear(3, 1)\n"
            "train_step(model, aux_head, torch.randn(5, 4), torch.randn(5, 3))\n"
            "assert model.weight.grad is not None and aux_head.weight.grad is None",
            note="the constant term added in a helper whose result the caller back-propagates (the helper's summary)",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class TwoTaskLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])
        self.log_vars = nn.Parameter(torch.zeros(2))

    def weigh(self, losses):
        return torch.Tensor(losses) * torch.exp(-self.log_vars) + self.log_vars

    def forward(self, x, ys):
        losses = [F.mse_loss(head(x), y) for head, y in zip(self.heads, ys)]
        return self.weigh(losses).sum()


crit = TwoTaskLoss()
crit(torch.randn(5, 4), [torch.randn(5, 1), torch.randn(5, 1)]).backward()
""",
            range=(14, 15, 14, 35),
            message="`torch.Tensor(losses)` copies what `head(x)` on line 17 computed into a new tensor without its "
            "graph, and no other part of `forward()`'s output comes from it: no backward reaches the parameters of "
            "`head`, which keep `.grad` at `None` and never learn",
            runtime="assert crit.heads[0].weight.grad is None and crit.log_vars.grad is not None",
            note="the task losses packed in a method forward() calls: what reaches no output is forward()'s",
        ),
        Invalid(
            """
import torch
from torch import nn


class Deformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight_net = nn.Linear(3, 4)
        self.offset_net = nn.Linear(3, 3)

    def forward(self, points, cage):
        weights = torch.softmax(self.weight_net(points), dim=-1)
        return {"deformed": weights @ (cage + self.offset_net(cage)), "weight": weights}


def frozen(outputs):
    return outputs["weight"].detach()


def weight_penalty(weights):
    return (weights ** 2).mean()


def compute_loss(model, points, cage, target, reg=1.0):
    outputs = model(points, cage=cage)
    weights = frozen(outputs)
    loss = ((outputs["deformed"] - target) ** 2).mean()
    return loss + weight_penalty(weights) * reg
""",
            range=(18, 11, 18, 37),
            message='`outputs["weight"].detach()` makes `weight_penalty(weights) * reg` a constant to the loss returned '
            'on line 29: cut from its graph, it changes the loss value and trains nothing; if it should train, pass the '
            'tensor itself',
            runtime="torch.manual_seed(0)\nmodel = Deformer()\nargs = (torch.randn(5, 3), torch.randn(4, 3), torch.randn(5, 3))\n"
            "compute_loss(model, *args, reg=100.0).backward()\ng = model.weight_net.weight.grad.clone()\nmodel.zero_grad()\n"
            "compute_loss(model, *args, reg=0.0).backward()\nassert torch.allclose(g, model.weight_net.weight.grad)",
            note="deep_cage with the detach in a helper: the weights' value carries the helper's cut, so the penalty "
            "of them changes no gradient (the same with reg=100 and reg=0)",
        ),
        Invalid(
            """
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


model, aux = nn.Linear(3, 1), nn.Linear(3, 1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
loss = nn.functional.mse_loss(model(x), y)
aux_loss = tagged(nn.functional.mse_loss(aux(x), y), "aux")[0]
loss = tagged(loss + aux_loss.detach().item(), "total")[0]
loss.backward()
""",
            range=(14, 21, 14, 38),
            message="`.detach()` cuts a term of the loss on line 14 from its model: the `.backward()` on line "
            "15 sends no gradient through it",
            note="the sum handed through a helper called twice: the value at this call is this call's argument, not a join of both calls",
            runtime="assert aux.weight.grad is None and model.weight.grad is not None",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train_step(net, critic, optimizer, x, y, weight=0.1):
    out = net(x)
    recon = F.mse_loss(out, y)
    adversarial = F.binary_cross_entropy_with_logits(critic(out), torch.ones(len(x), 1)).detach()
    total = recon + weight * adversarial
    optimizer.zero_grad()
    total.backward()
    optimizer.step()
    return total.item()
""",
            range=(10, 18, 10, 97),
            message='`.detach()` cuts a term of the loss on line 11 from its model: the `.backward()` on line 13 sends no gradient through it',
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def train_step(net, critic, optimizer, x, y, weight=0.1):\n    out = net(x)\n    recon = F.mse_loss(out, y)\n"
                "    adversarial = F.binary_cross_entropy_with_logits(critic(out), torch.ones(len(x), 1))\n"
                "    total = recon + weight * adversarial\n    optimizer.zero_grad()\n    total.backward()\n"
                "    optimizer.step()\n    return total.item()\n",
            ),
            note='an adversarial loss term detached where it is computed, then added, scaled, into the back-propagated loss: '
            'the model gets exactly the gradient it would get without it (`critic` is a model: torch\'s '
            '`binary_cross_entropy_with_logits` takes its output as a prediction)',
            runtime='net, critic = nn.Linear(4, 4), nn.Linear(4, 1)\nx, y = torch.randn(8, 4), torch.randn(8, 4)\ntrain_step(net, critic, torch.optim.SGD(net.parameters(), lr=0.0), x, y)\nwith_term = net.weight.grad.clone()\nnet.zero_grad()\nF.mse_loss(net(x), y).backward()\nassert torch.equal(with_term, net.weight.grad)',
        ),
        Invalid(
            """
import torch.nn.functional as F


def objective(net, xb, yb):
    pred = net(xb)
    return F.mse_loss(pred, yb) + pred.detach().abs().mean().item()
""",
            range=(7, 34, 7, 67),
            message='`pred.detach().abs().mean().item()` is a constant to the loss returned on line 7: cut from its graph, it changes the loss value and trains nothing; if it should train, add the tensor itself',
            note='a helper that no code of the file calls returns a 0-dim sum with a graph - a loss its callers back-propagate, whatever it is called: the `.item()` term adds nothing to the gradient',
            runtime='net, x, y = torch.nn.Linear(3, 2), torch.randn(4, 3), torch.randn(4, 2)\nobjective(net, x, y).backward()\ngot = net.weight.grad.clone()\nnet.zero_grad()\nF.mse_loss(net(x), y).backward()\nassert torch.equal(got, net.weight.grad)',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F


class GAN:
    def __init__(self, g, d):
        self.g, self.d = g, d
        self.g_optim = torch.optim.Adam(self.g.parameters(), lr=1e-3)
        self.d_optim = torch.optim.Adam(self.d.parameters(), lr=1e-3)

    def score(self, fake):
        return self.d(fake.detach())

    def generator_step(self, z):
        fake = self.g(z)
        scores = self.score(fake)
        loss = F.mse_loss(scores, torch.ones_like(scores))
        self.g_optim.zero_grad()
        loss.backward()
        self.g_optim.step()
        return loss.item()
""",
            range=(13, 22, 13, 35),
            message='`.detach()` cuts `self.g` from the input `self.d` scores on line 13, yet the `.backward()` on line 20 is for `self.g_optim.step()` on line 21, built over the parameters of `self.g`, not `self.d` (line 9): this term sends `self.g` no gradient',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\n\n\nclass GAN:\n    def __init__(self, g, d):\n        self.g, self.d = g, d\n        self.g_optim = torch.optim.Adam(self.g.parameters(), lr=1e-3)\n        self.d_optim = torch.optim.Adam(self.d.parameters(), lr=1e-3)\n\n    def score(self, fake):\n        return self.d(fake)\n\n    def generator_step(self, z):\n        fake = self.g(z)\n        scores = self.score(fake)\n        loss = F.mse_loss(scores, torch.ones_like(scores))\n        self.g_optim.zero_grad()\n        loss.backward()\n        self.g_optim.step()\n        return loss.item()\n',
            ),
            note="the discriminator scores the detached fake in a method the generator step calls on self: the step's loss sends the generator nothing",
            runtime='gan = GAN(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))\ngan.generator_step(torch.randn(4, 2))\nassert gan.g.weight.grad is None',
        ),
    ]


CUT_METHODS = frozenset(("item", "detach", "numpy", "tolist"))


def _terms(expr: cst.BaseExpression) -> list:
    """The added and subtracted terms of a sum: `a + b * c - d` -> [a, b * c, d] (without recursion:
    a generated 1,000-term sum is one deep left-leaning tree)."""
    terms, todo = [], [expr]
    while todo:
        e = todo.pop()
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Add, cst.Subtract)):
            todo += [e.right, e.left]
        else:
            terms.append(e)
    return terms


def _constant_cut(term: cst.BaseExpression, value_of, qualname, bound=None) -> bool:
    """`x.detach().item()`, `x.item()`, `0.1 * x.detach()`: a cut value, maybe scaled by numbers (or by
    names known to hold no grad: a learnable weight times a cut term still trains the weight). And a
    NumPy function of cut values (`-np.mean(np.log(d(x).detach().numpy()))`): a NumPy result; and,
    with `bound` (the expression a place was last bound to), a function of this file given only cut
    values (`reg_loss(weights)` after `weights = out["w"].detach()`, or `weights = stop(out["w"])`
    of a helper that detaches: a value with no graph where a graph was cut)."""
    cut = partial(_constant_cut, value_of=value_of, qualname=qualname, bound=bound)
    if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, (cst.Multiply, cst.Divide)):
        sides = [term.left, term.right]

        def scale(s) -> bool:
            return isinstance(s, (cst.Integer, cst.Float)) or (
                isinstance(s, (cst.Name, cst.Attribute)) and value_of(s).grad is Grad.NO) or (
                isinstance(s, cst.Name) and bound is not None and isinstance(bound(s), (cst.Integer, cst.Float)))
        return any(cut(s) for s in sides) and all(cut(s) or scale(s) for s in sides)
    if isinstance(term, cst.UnaryOperation):
        return cut(term.expression)
    if isinstance(term, cst.Attribute):
        return term.attr.value == "data"
    if isinstance(term, cst.Call) and (qualname(term.func) or "").startswith("numpy."):
        return any(_cut_call(n) for n in descendants(term))
    if isinstance(term, cst.Name) and bound is not None:
        # `adv = bce(d(feature), ones).detach()` and then `loss = recon + lam * adv`: a name bound to a cut
        made = bound(term)
        return isinstance(made, cst.Call) and _cut_call(made) and value_of(term).grad is not Grad.YES
    if bound is not None and isinstance(term, cst.Call) and term.args and value_of(term.func).kind is Kind.FUNCTION:
        return all(a.keyword is None and (_cut_call(bound(a.value)) or _is_cut(value_of(a.value))) for a in term.args)
    return _cut_call(term)


def _is_cut(v) -> bool:
    """A value with no graph because a graph was cut on the way to it, on every path."""
    return bool(v.cuts) and v.grad is Grad.NO


def _cut_site(term: cst.BaseExpression, bound, value_of) -> cst.CSTNode:
    """Where a constant term was cut: the term itself when the cut is in it, else the cut a place in
    it was bound to (`weights = out["w"].detach()` for `reg_loss(weights)`), else the one cut its
    value records (a helper's `.detach()` for `reg_loss(stop(w))`)."""
    nodes = descendants(term)
    if any(_cut_call(n) or isinstance(n, cst.Attribute) and n.attr.value == "data" for n in nodes):
        return term
    attrs = {n.attr for n in nodes if isinstance(n, cst.Attribute)}  # `x` of `self.x` is no name
    for n in nodes:
        if (isinstance(n, cst.Name) and n not in attrs) or is_self_attribute(n):
            b = bound(n)
            if b is not None and _cut_call(b):
                return b
    cuts = value_of(term).cuts
    return next(iter(cuts)).node if len(cuts) == 1 else term


def _cut_call(node: cst.CSTNode) -> bool:
    """`x.detach()`, `x.item()`, `x.numpy()`, `x.tolist()`."""
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in CUT_METHODS and not node.args)

