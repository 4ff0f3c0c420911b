from __future__ import annotations

import builtins
import re
from functools import lru_cache
from typing import Optional

import libcst as cst

from gradguard.engine import evidence
from gradguard.engine.knowledge import FUNCTIONAL_LOSSES, forward_like
from gradguard.engine.evidence import named_params
from gradguard.engine.sinks import DISPLAYED, Use
from gradguard.engine.model import ClassInfo, FunctionInfo, GradMode
from gradguard.engine.outside import Returns
from gradguard.engine.steps import backpropagates_in, step_of
from gradguard.engine.syntax import SELF_PREFIX, place_key
from gradguard.engine.values import Grad, Kind, all_origins
from gradguard.engine.walk import descendants, walk
from gradguard.findings import Safety, Severity
from gradguard.rules._build import (
    has_multiline_string,
    import_torch,
    short,
    torch_name,
    wrap_in_no_grad,
)
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid

_NUMPY = re.compile(r"\.\s*numpy\s*\(\s*\)")


_BUILTIN_NAMES = frozenset(dir(builtins))


def _from_unbound(fn: cst.FunctionDef, backward: cst.CSTNode, module: cst.Module) -> bool:
    """Is what `x.backward()` back-propagates computed (through `fn`'s assignments) from a name that
    nothing in the file binds, nor Python (a cell of a notebook left out: RL-Adventure's `u`)?"""
    func = backward.func if isinstance(backward, cst.Call) else None
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return False
    defs: dict = {}
    for n in descendants(fn):
        if isinstance(n, (cst.Assign, cst.AugAssign)):
            for t in n.targets if isinstance(n, cst.Assign) else [n]:
                if isinstance(t.target, cst.Name):
                    defs.setdefault(t.target.value, []).append(n.value)
    bound = _bound_names(module)
    if bound is None:
        return False  # `from x import *`: any name may come from there
    todo, seen = [func.value.value], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in defs:
            todo += [r for e in defs[name] for r in _read_names(e)]
        elif name not in bound and name not in _BUILTIN_NAMES:
            return True
    return False


def _bound_by(stmt) -> set:
    """The plain names a simple statement binds (`train_l = ...`, `loss += ...`); for a `for` loop whose
    iterable holds the value (`for key, value in as_dict(loss(out, y)).items():`), its targets and the
    names its body's statements bind from them (`train_l = value`)."""
    if isinstance(stmt, cst.For):
        found = {e.value for e in descendants(stmt.target) if isinstance(e, cst.Name)}
        for line in stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ():
            if isinstance(line, cst.SimpleStatementLine) and any(
                    isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and small.value is not None
                    and found & set(_read_names(small.value)) for small in line.body):
                found |= _bound_by(line)
        return found
    found = set()
    for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
            [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) else []
        for t in targets:
            found.update(e.value for e in descendants(t) if isinstance(e, cst.Name))
    return found


def _leaves(v) -> bool:
    """Is `v` a leaf that requires grad, or a list of them (`nn.ParameterList([W_xh, ...])`)?"""
    if v.kind is Kind.CONTAINER and v.item is not None:
        v = v.item
    return v.leaf and v.grad is Grad.YES


def _read_names(expr: cst.BaseExpression) -> list:
    """The names an expression reads (not `.attr`s, not keywords)."""
    nodes = descendants(expr)
    skip = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)} | {
        id(n.keyword) for n in nodes if isinstance(n, cst.Arg) and n.keyword is not None}
    return [n.value for n in nodes if isinstance(n, cst.Name) and id(n) not in skip]


def _bound_names(module: cst.Module):
    """Every name the file binds anywhere (None when it star-imports)."""
    names = set()
    for n in descendants(module):
        if isinstance(n, cst.ImportStar):
            return None
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Param)):
            names.add(n.name.value)
        elif isinstance(n, cst.ImportAlias):
            names.add((n.asname.name.value if n.asname is not None and isinstance(n.asname.name, cst.Name)
                       else cst.Module([]).code_for_node(n.name).split(".")[0]))
        elif isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.AsName,
                            cst.NamedExpr)):
            target = n.name if isinstance(n, cst.AsName) else n.target
            names.update(e.value for e in descendants(target) if isinstance(e, cst.Name))
    return names


class _Nodes(cst.CSTVisitor):
    """The identities of every node under a node."""

    def __init__(self):
        self.ids: set = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.ids.add(id(node))
        return True

    @classmethod
    def of(cls, node: cst.CSTNode) -> set:
        return {id(n) for n in descendants(node)}  # a read-only walk: CSTVisitor.visit rebuilds every node


def _rebuilt(node: cst.CSTNode, flow) -> bool:
    """Is `node` (a sink: `value.item()`) the data of a new leaf that requires grad
    (`torch.tensor(value.item(), requires_grad=True)`)? Then the graph was cut to train, not to look."""
    stmt = flow.top_of.get(node)
    if stmt is None:
        return False
    for call in descendants(stmt):
        if isinstance(call, cst.Call) and any(a.keyword is not None and a.keyword.value == "requires_grad"
                                              and flow.code_for(a.value) == "True" for a in call.args):
            if any(n is node for a in call.args for n in descendants(a.value)):
                return True
    return False


class _Suites(cst.CSTVisitor):
    """id(statement) -> (the statements of its suite, its index there)."""

    def __init__(self):
        self.places: dict = {}

    def _body(self, body) -> None:
        for i, stmt in enumerate(body):
            self.places[id(stmt)] = (body, i)

    def visit_Module(self, node: cst.Module) -> None:
        self._body(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._body(node.body)

    @classmethod
    def of(cls, module: cst.Module) -> dict:
        v = cls()
        walk(module, v)
        return v.places


class EvalWithoutNoGrad(Rule):
    """
    ## What it does
    Finds a forward pass that runs with grad enabled although its outputs never
    reach a `backward()`: after `model.eval()`, outside `torch.no_grad()` /
    `torch.inference_mode()` and their decorators - or in the top-level code of
    a script that never calls
    `.backward()`, `torch.autograd.grad` or an optimizer's `step()`, or in a
    function of such a file that turns its results into NumPy (`.numpy()`) and
    returns no graph (DBFace's `detect(model, image)`). The
    model may be a parameter: `model.eval()` or `model.parameters()` on it, or a
    loss taking its output as a prediction (`criterion(model(x), y)`), says it
    is one, and its own methods (`model.encode(x)`) are forward passes too, as
    is `model.forward(x)`.
    Wherever it runs, a forward whose outputs reach only non-differentiable uses
    (`.item()`, `.tolist()`, `.numpy()`, a read through `.data`, `argmax`, a
    comparison, `print`, a distribution's `sample()`, a notebook cell's shown
    value - its last expression - for a model the notebook trained before; a loss or metric the
    outputs are given as a prediction, in a file that never trains, whose
    result is read at once with `.item()`: `self.criterion(out, y).item()`) and
    no backward is one too - kept where they outlive the call only if the file
    reads that place only `.detach()`-ed (PPO's `memory.logprobs`); so is a call of a
    hand-written model, a function of the file computing from leaves the code
    trains (`linreg(X, w, b)` where the code reads `w.grad`, or its weights an
    `nn.ParameterList` whose items' gradients the code reads) - or of another file
    of the project whose summary says it returns a graph it makes (d2l's
    `linreg`, `net = d2l.linreg`); outputs given to another file's function that
    returns what their graph becomes and does nothing else with them (d2l's
    `squared_loss`) go on to where its result goes. So is a forward
    whose outputs without a graph are read and whose outputs with one never are
    (`action, log_prob = policy.act(state)` with the action an `.item()` and
    `log_prob` never read again), unless a function of the file keeps a graph
    past its call or a hook is registered.
    `Variable(x, volatile=True)` - old code's no-grad, which has done nothing
    since torch 0.4 (it only warns) - says so too: whatever is called on such
    an input is a model, and its forward pass is a finding wherever it runs
    with grad enabled, unless its outputs reach a `.backward()` (the message
    names the `volatile=True`). One finding per evaluation block (the forwards
    of one loop, or of consecutive statements after `.eval()` - in a notebook,
    of one cell); it sits on the first model call. What a function or class is called never decides:
    `evaluate`, `predict`, `select_action` or an `Evaluator` class add no
    finding and silence none - where the outputs go does.

    ## Why is this bad?
    `model.eval()` does **not** stop graph building - it only switches layers
    such as dropout and batch norm to inference behaviour. Every forward pass
    still records the graph and keeps every saved activation until its outputs
    die: peak memory and time spent for nothing (where outputs are also kept
    across iterations, GG101 reports that store as an error).

    Left alone: a caller that visibly wraps the call in `torch.no_grad()`, code
    inside `torch.enable_grad()`, a forward none of whose outputs is read
    (`model(x)`, `_ = model(x)`: a warm-up, a smoke test, a stateful layer's
    update), a smoke test of a model built in the same
    function (`def test(): net = Net(); net(torch.randn(...))`; not one built with trained
    weights - `pretrained=True`, `weights=...`, `from_pretrained` - nor one whose
    input was made `volatile=True`) - before that
    function has back-propagated through it, and unless a method of the model's
    own class trains it (a rollout before `model.train_net()`; a prediction after the training
    loop is reported; so is `_, preds = torch.max(out, 1)` keeping only the
    indices, as `.argmax()` is), the `.eval()` of
    another module (`target_net.eval()` says nothing about `policy_net(x)`),
    outputs handed to a function of another file (which may train on them),
    outputs also handed to a loss, in code that back-propagates, that nothing
    looks at (the loss is meant for a backward the analysis lost track of),
    outputs read through `.data` into what a backward back-propagates (the
    cut is the bug, GG301's; `no_grad` would only hide it),
    Lightning's `validation_step` / `test_step` / `predict_step` of a
    LightningModule (the framework disables grad: its API, not a suffix of a
    name), outputs that do reach a backward (adversarial examples,
    input gradients), a model of this file whose own forward back-propagates, and
    a model's own method that returns a graph (part of its forward pass: a VAE
    trains through `decode`; one that returns `scores.argmax(1)` is an
    evaluation), outputs returned to a caller out of sight (a framework's
    `eval_step` hook), a loss of unseen source given the outputs in a file that
    trains (it may be the training step), and outputs kept past the call for a
    later update (REINFORCE's `saved_log_probs.append(m.log_prob(action))`) -
    unless the file reads what it keeps only `.detach()`-ed (PPO's
    `torch.stack(memory.logprobs).detach()`: the kept graphs train nothing).
    The `.eval()` may also come from the
    top level of a script that never trains, or from the constructor of a class
    that holds the model for inference (`self.model_ = model.eval()`).

    ## Example
    ```python
    def evaluate(model, loader):
        model.eval()
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    ```

    ## Use instead
    ```python
    @torch.no_grad()
    def evaluate(model, loader):
        model.eval()
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    ```

    ## Fix safety
    Safe: decorating the evaluation function with `@torch.no_grad()`, or
    wrapping the loop (or statement) after `model.eval()` in
    `with torch.no_grad():`, changes no value - only whether a graph is
    recorded (`import torch` is added when missing). Where only `volatile=True`
    says a forward evaluates and its outputs go to a caller out of sight, the
    fix is unsafe. The fix leaves the `volatile=True` keyword alone (it only
    warns).
    """

    code = "GG103"
    name = "eval-without-no-grad"
    severity = Severity.WARNING
    summary = "A forward pass in an evaluation path runs with grad enabled (`eval()` does not disable it)"

    def __init__(self, *args):
        super().__init__(*args)
        self._tick = 0
        self._eval_at: dict = {}  # function (or None) -> (tick, the .eval() call)
        self._loop_ticks: dict = {}  # loop node -> tick it started at
        self._calls: list = []  # (call, function, context, eval call, loops, statement, model, stamp, graph)
        self._file_trains = None  # does any call in the file train? (computed on first need)
        self._built: set = set()  # (function, name): a module constructed in that function
        self._loaded: set = set()  # (function, name): weights loaded into it there
        self._constructor_evals: dict = {}  # (class, "self.x") -> (0, the .eval() in its constructor)
        self._trained = None  # names of tensors the file trains (evidence.trained_leaves), on first need
        self._graph_of: dict = {}  # a reported call of a helper -> the helper's forward whose graph it returns
        self._volatile: dict = {}  # forward call -> the `Variable(..., volatile=True)` its input was made by
        self._losses: list = []  # (function, loss call, its statement, the graphs it is given): `criterion(out, y)`
        self._method_of: dict = {}  # forward call -> the FunctionInfo of the model's method it runs (None: unknown)
        self._untrained: dict = {}  # a method call of a model the file built and never visibly trains -> its class
        self._top_lines = None  # id of a module-level statement -> the line it starts on (notebooks, on first need)
        self._trained_model: set = set()  # forwards of a model this scope back-propagated through before they ran

    def visit_For(self, node) -> None:
        self._tick += 1
        self._loop_ticks[node] = self._tick

    visit_While = visit_For

    def visit_Call(self, node: cst.Call) -> None:
        self._tick += 1
        func = node.func
        fn = self.flow.function
        callee = self.flow.value(func)
        if isinstance(func, cst.Attribute) and self.flow.value(func.value).kind is Kind.MODULE:
            # Keyed by the receiver's code: `target_net.eval()` says nothing about `policy_net(x)`.
            key = (fn, self.code_of(func.value))
            if func.attr.value == "eval" and not node.args:
                self._eval_at[key] = (self._tick, node)
                self._constructor_eval(fn, node)
            elif func.attr.value == "train" and not (node.args and self.code_of(node.args[0].value) == "False"):
                self._eval_at.pop(key, None)
            elif func.attr.value == "train":
                self._eval_at[key] = (self._tick, node)
            elif func.attr.value == "load_state_dict":
                self._loaded.add(key)
        if self.flow.value(node).kind is Kind.MODULE and self._constructs(node):
            stmt = self.flow.statement
            body = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
            if isinstance(body, cst.Assign) and body.value is node:
                self._built.update((fn, self.code_of(t.target)) for t in body.targets)
                for t in body.targets:  # a new module under an old name: the old one's `.eval()` says nothing of it
                    self._eval_at.pop((fn, self.code_of(t.target)), None)
                # `models.vgg16(pretrained=True)`, or a wrapper given such a model: trained weights, not a
                # smoke test's (a model built afresh under the name of a loaded one is not loaded)
                loaded = self._pretrained(node) or any(
                    (fn, self.code_of(a.value)) in self._loaded for a in self._constructor_call(node).args)
                for t in body.targets:
                    (self._loaded.add if loaded else self._loaded.discard)((fn, self.code_of(t.target)))
        if callee.loss or callee.qualname is not None and callee.qualname.rsplit(".", 1)[-1] in FUNCTIONAL_LOSSES \
                and callee.qualname.startswith("torch."):
            given = frozenset().union(*(all_origins(self.flow.value(a.value)) for a in node.args))
            if given:
                self._losses.append((fn, node, self.flow.statement, given))
        if self.flow.frame.mode is not GradMode.ON:
            return
        if self.flow.frame.mode_nodes[-1] is not None or (fn is not None and fn.decorated_mode is GradMode.ON):
            return  # inside `torch.enable_grad()`: the graph is wanted
        elsewhere = False  # a method of a model from another file, which may be decorated with no_grad
        if callee.kind is not Kind.MODULE and isinstance(func, cst.Attribute):
            receiver = self.flow.value(func.value)
            if receiver.kind is Kind.MODULE and (
                receiver.cls is None and (forward_like(func.attr.value)  # `model.encode(x)` of a model from elsewhere
                                          or func.attr.value in receiver.forwards)  # one of the project's, that runs it
                or callee.kind is Kind.FUNCTION and receiver.cls is not None  # a method of a model of this file
            ):
                # (a method of another file's model that returns its graph is known not to turn grad off)
                callee, elsewhere = receiver, receiver.cls is None and func.attr.value not in receiver.forwards
            elif receiver.kind is Kind.MODULE and receiver.cls is None and func.attr.value == "forward":
                callee = receiver  # `model.forward(x)`: the module's call itself (`model(x)` without its hooks)
        graph = node  # the forward whose graph the call's outputs carry
        inner = self._helper_forward(callee, node)
        if inner is not None:
            graph = inner  # a helper of the file that runs a model and returns its outputs: the call is the forward
        elif self._hand_written_model(callee, node):
            pass  # a function of the file computing from tensors the code trains: a forward
        elif not (callee.kind is Kind.MODULE and callee.parameterized and not callee.frozen and not callee.loss and self.flow.value(node).has_graph):
            return
        name = self.code_of(func)
        after_eval = self._eval_of(fn, name)
        if after_eval is None and callee.evaluated is not None and not elsewhere and self._local(name):
            # put in eval mode before this function got it (its caller's `.eval()`, a factory's); not for a
            # method of a model from elsewhere, which may carry its own @torch.no_grad, nor for a global,
            # whose mode when the function runs is whatever the code ran last (`_global_eval`)
            after_eval = (0, callee.evaluated)
        if after_eval is None and fn is not None and fn.cls is not None and fn.cls.test_case:
            return  # a unit test's smoke run of a model in training mode (checking it works, often its gradients)
        first = next((a for a in node.args if a.keyword is None and not a.star), None)
        volatile = self.flow.value(first.value).volatile if first is not None else None
        if after_eval is not None:
            why = "eval"
        elif volatile is not None and not elsewhere:
            why = "volatile"  # no-grad intent, whatever the function: only a backward of the outputs excuses it
        elif self._inference_script(fn) and not elsewhere:
            why = "inference"
        elif self._to_numpy(fn) and not elsewhere:
            # (only the file's own use says the outputs are not trained on: a method of a model from
            # elsewhere - latent diffusion's `encode_first_stage` - may carry its own @torch.no_grad)
            why = "numpy"
        elif not elsewhere and not (fn is not None and fn.cls is not None and fn.cls.module_like and fn.name == "forward"):
            why = "sinks"  # decided in finish(), by where the outputs went (forward() computes them for its caller)
        else:
            return
        # the model the smoke-test checks look at: for a helper that runs one, the argument it runs
        ran = (self._argument_run(callee.cls, inner, node) if inner is not None else None) or name
        if after_eval is None and volatile is None and (fn, ran) in self._built and (fn, ran) not in self._loaded \
                and not self._trained_before(fn, ran, callee):
            # `def test(): net = Net(); net(torch.randn(...))`: a smoke test of an untrained model (an input
            # made `volatile=True` says the forward was meant to build no graph: not a test of one)
            return
        if isinstance(func, cst.Call) and self._constructs(func):
            return  # `nn.PReLU(init=0.25)(z)`: a layer built to be called once, a demonstration
        root = name.split(".", 1)[0]
        if root != name and (fn, root) in self._built and self._never_trained(root):
            if not isinstance(callee.cls, ClassInfo):
                return  # `dummy_cbow.embedding(ids)` of a model the file built and never trains or loads
            self._untrained[node] = callee.cls  # unless a method of its class back-propagates (decided in finish)
        model = callee.cls if isinstance(callee.cls, ClassInfo) else None
        if model is not None:  # the method of the model's class the call runs (`model.pi(s)`: `pi`; `model(x)`: forward)
            self._method_of[node] = model.methods.get(func.attr.value if isinstance(func, cst.Attribute)
                                                      and func.attr.value in model.methods else "forward")
        if volatile is not None:
            self._volatile[node] = volatile
        if why == "sinks" and self._trained_before(fn, ran, callee):
            self._trained_model.add(node)
        self._calls.append((node, fn, after_eval, why, self.flow.frame.loops, self.flow.statement, model, self.stamp(), graph))

    def _argument_run(self, helper, inner: cst.Call, call: cst.Call) -> Optional[str]:
        """The code of the argument of `call` that the helper's forward `inner` runs: `conv2d` of
        `comp_conv2d(conv2d, X)` with `def comp_conv2d(conv2d, X): ... conv2d(X)`."""
        if not isinstance(helper, FunctionInfo) or not isinstance(inner.func, cst.Name):
            return None
        params = list(named_params(helper.node))
        if inner.func.value not in params:
            return None
        for a in call.args:
            if a.keyword is not None and a.keyword.value == inner.func.value:
                return self.code_of(a.value)
        positional = [a for a in call.args if a.keyword is None and not a.star]
        at = params.index(inner.func.value) - (1 if helper.cls is not None else 0)  # a method's `self`
        return self.code_of(positional[at].value) if 0 <= at < len(positional) else None

    def _helper_forward(self, callee, node: cst.Call) -> Optional[cst.Call]:
        """The forward pass, found in the body of the file's function `callee`, whose graph the call
        `node` returns (`out = self.run_model(qa)` with `def run_model(self, qa): return self.model(qa)`):
        what the caller does with the outputs decides, as if it had run the model itself."""
        fn = callee.cls if callee.kind is Kind.FUNCTION else None
        if not isinstance(fn, FunctionInfo) or not fn.makes_graph:
            return None
        out = all_origins(self.flow.value(node))
        # (the forward itself among the graphs returned, or the graphs it made: a model's own method's)
        return next((c[0] for c in self._calls if c[1] is fn and self.current(c[7]) and (
            c[0] in out or all_origins(self.flow.value(c[0])) & out)), None)

    def _hand_written_model(self, callee, node: cst.Call) -> bool:
        """`forward(x)` where `def forward(x): return w * x + b` reads `w`, a leaf that requires grad and
        that the code trains (it reads `w.grad`, or lists it for an optimizer), and the call gives it
        nothing with a graph: the graph comes from the model's own parameters (d2l-style books). Or
        `linreg(X, w, b)`: such leaves given as arguments (`net = linreg` ... `net(features, w, b)`)."""
        fn = callee.cls if callee.kind is Kind.FUNCTION else None
        elsewhere = self.flow.summarized.get(node)
        # (or a function of another file that returns a graph it makes itself and back-propagates nothing:
        # d2l's `linreg` called from a notebook, `net = d2l.linreg`)
        made_elsewhere = isinstance(elsewhere, Returns) and not elsewhere.through and not elsewhere.backward
        if not (made_elsewhere or isinstance(fn, FunctionInfo) and fn.cls is None) or not self.flow.value(node).has_graph:
            return False
        if self._trained is None:
            self._trained = evidence.trained_leaves(self.flow.source) | evidence.trained_through_calls(self.flow.module)
        if any(self.flow.value(a.value).has_graph and not all_origins(self.flow.value(a.value)) <= {node}
               for a in node.args):
            return False  # (the state the same call returned, fed back in a generation loop, is its own graph)
        if any(isinstance(a.value, cst.Name) and a.value.value in self._trained and _leaves(self.flow.value(a.value))
               for a in node.args):
            return True
        if made_elsewhere:
            return False  # (what it reads besides its arguments is another file's)
        for name in (self.flow.facts_of(fn.node).body_names & self._trained) - set(named_params(fn.node)):
            scope = fn.scope
            while scope is not None and name not in scope.env:
                scope = scope.parent
            found = scope.env[name].value if scope is not None else None
            if found is not None and found.leaf and found.grad is Grad.YES:
                return True
        return False

    def _trained_before(self, fn, name: str, model) -> bool:
        """Has this scope already back-propagated through this very model (built by the same
        construction) when its forward runs - a loss over its outputs, or a call of the file's that
        back-propagates and was handed the model (`train(net, loader)`)? Then the forward is not a smoke
        test of an untrained model but a use of the trained one (a prediction cell after the training
        cells, samples after the loop). The file must also train it (`.parameters()`, handed on)."""
        if self._never_trained(name):
            return False

        def same(v) -> bool:
            return v is model or (v.kind is Kind.MODULE and v.why is not None and model.why is not None
                                  and v.why.node is model.why.node)

        for b in self.flow.backwards:
            if b.function is not fn:
                continue
            if b.by_call and isinstance(b.node, cst.Call):
                given = [a.value for a in b.node.args] + (
                    [b.node.func.value] if isinstance(b.node.func, cst.Attribute) else [])
                if any(same(self.flow.value(g)) for g in given):
                    return True
            # (a loss over its outputs, or its outputs handed to a call that back-propagates them:
            # `train_generator(g_optimizer, generator(z))`)
            if any(isinstance(o, cst.Call) and same(self.flow.value(o.func)) for o in b.origins):
                return True
        return False

    def _backpropagates_when_run(self, node: cst.Call, model) -> bool:
        """Does the method of the model that the call runs back-propagate (input saliency in forward())?
        Another method of the class that trains (minimalRL's `train_net()`) says nothing about `pi(s)`."""
        method = self._method_of.get(node)
        if method is None:
            return any(b.function is not None and b.function.cls is model for b in self.flow.backwards)
        return bool(method.backwards) or any(b.function is method for b in self.flow.backwards)

    def _trains_itself(self, cls) -> bool:
        """Does a method of the model's own class (of this file) back-propagate (minimalRL's
        `PPO.train_net()`)? Then the model the file built is trained, whatever its methods are called."""
        return any(b.function is not None and b.function.cls is cls for b in self.flow.backwards)

    def _local(self, name: str) -> bool:
        """Is the root of `name` (`model` of `model.encoder`) a name this scope binds (a parameter, a local),
        or `self.x` this method assigned? (Another method may have switched `self.x` back to training.)"""
        parts = name.split(".")
        key = SELF_PREFIX + parts[1] if parts[0] == "self" and len(parts) > 1 else parts[0]
        return self.flow.frame.scope.env.get(key) is not None

    def _never_trained(self, name: str) -> bool:
        """Does the file never load weights into `name`, never take its `.parameters()`, and never hand
        it to anything (a trainer, an optimizer, a function that might train it)?"""
        return _never_trained_in(self.flow.source, name)

    def _constructs(self, node: cst.Call) -> bool:
        """`Net(...)`, `build_model(cfg)`, `Net(...).cuda()`, `Net().to(device).eval()`: a module made
        here, not a forward pass (whose callee is itself a module)."""
        while isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call) and (
            self.flow.value(node.func.value).kind is Kind.MODULE
        ):
            node = node.func.value  # `.cuda()`, `.to(device)`: the module it is called on
        return self.flow.value(node.func).kind is not Kind.MODULE

    def _constructor_call(self, node: cst.Call) -> cst.Call:
        """`Net(...)` of `Net(...).to(device).eval()`."""
        while isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call) and (
            self.flow.value(node.func.value).kind is Kind.MODULE
        ):
            node = node.func.value
        return node

    def _pretrained(self, node: cst.Call) -> bool:
        """Is the module `node` builds (through `.to(device)`, `.cuda()`...) made with trained weights -
        torchvision's/timm's `pretrained=True`, `weights=` anything but `None`, or `X.from_pretrained(...)`?
        Its forward is then a use of a trained model, not the smoke test of a fresh one. (A factory of the
        project's own taking `pretrained=True` may return anything: YOLOv5's `AutoShape`, whose forward
        turns grad off itself.)"""
        node = self._constructor_call(node)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "from_pretrained":
            return True
        qualname = self.flow.value(node.func).qualname or ""
        if not qualname.startswith(("torchvision.models.", "timm.")):
            return False
        for a in node.args:
            if a.keyword is None:
                continue
            value = self.code_of(a.value)
            if a.keyword.value == "pretrained" and value == "True":
                return True
            if a.keyword.value == "weights" and value not in ("None", "False"):
                return True
        return False

    def _eval_of(self, fn, name: str):
        """The `.eval()` that applies to the module called as `name` (itself or an enclosing
        module: `model.eval()` covers `model.encoder(x)`): one in `fn`, else one the module got
        for good - at the top level of the file, or in its class's constructor."""
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            found = self._eval_at.get((fn, ".".join(parts[:n])))
            if found is not None:
                return found
        if fn is not None:
            return self._global_eval(fn, parts) or self._constructor_evals.get((fn.cls, ".".join(parts[:2])))
        return None

    def _global_eval(self, fn, parts: list):
        """`BEATs_model.eval()` at the top level of a file that never trains and never calls
        `BEATs_model.train()`: a function using that global model evaluates (unilm#998)."""
        root = parts[0]
        if self.flow.frame.scope.env.get(root) is not None:
            return None  # a local of the function, not the global
        found = self._eval_at.get((None, root))
        if found is None or self._trains_file() or re.search(rf"\b{re.escape(root)}\s*\.\s*train\s*\(", self.flow.source):
            return None
        return found

    def _constructor_eval(self, fn, node: cst.Call) -> None:
        """`self.model_ = model.eval().to(device)` or `self.model_.eval()` in a constructor, in a
        class that never calls `self.model_.train()`: the class holds the module for inference,
        so its other methods call it after `.eval()` (pyannote's Pretrained)."""
        if fn is None or fn.cls is None or fn.name != "__init__":
            return
        stmt = self.flow.statement
        body = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        target = None
        if isinstance(body, cst.Assign) and len(body.targets) == 1 and _in_chain(node, body.value):
            target = self.code_of(body.targets[0].target)
        elif isinstance(node.func, cst.Attribute):
            target = self.code_of(node.func.value)
        if target is None or not re.fullmatch(r"self\.\w+", target):
            return
        if re.search(rf"\b{re.escape(target)}\s*\.\s*train\s*\(", self.code_of(fn.cls.node)):
            return
        if _frozen_in(self.code_of(fn.node), target):
            return  # BLT's patcher: frozen parameters build no graph from token ids
        self._constructor_evals[(fn.cls, target)] = (0, node)

    def _trains_file(self) -> bool:
        if self._file_trains is None:
            self._file_trains = evidence.trains(self.flow.source)
        return self._file_trains

    def _to_numpy(self, fn) -> bool:
        """A function of a file where no call trains, not a model's own method, that turns what it
        computes into NumPy (`box.cpu().data.numpy()`): it runs the model for its outputs (DBFace's
        `detect(model, image)`)."""
        if fn is None or fn.cls is not None and fn.cls.module_like or self._trains_file():
            return False
        return _NUMPY.search(self.code_of(fn.node)) is not None

    def _inference_script(self, fn) -> bool:
        """A script's own top-level code (not a library's functions, which other files call -
        perhaps to train) in a file where no call trains."""
        if fn is not None:
            return False
        return not self._trains_file()

    def finish(self) -> None:
        blocks: dict = {}  # the fix's target (or the call itself) -> the calls it covers, in order
        inner = {graph for node, *_, graph in self._calls if graph is not node}
        passed = set()  # the forwards reported (a helper's own, judged in the helper)
        for node, fn, after_eval, why, loops, stmt, model, stamp, graph in self._calls:
            if not self.current(stamp):
                continue
            if why == "sinks" and node in inner and fn.call_sites and node in all_origins(fn.returns):
                continue  # where the outputs go is decided at the helper's call, by the caller that uses them
            if graph in passed:
                continue  # the helper's own forward, reported in the helper
            if node in self._untrained and not self._trains_itself(self._untrained[node]):
                continue  # `dummy_cbow.embedding(ids)`: a model the file built and never trains - nor do its own methods
            if fn is not None and fn.cls is not None and fn.cls.module_like and any(
                    c.cls is fn.cls and c.name == "forward" for c in fn.callers):
                continue  # run by the model's own forward() (its eval branch): the grad mode is forward's caller's
            if why == "numpy" and (fn.returns.has_graph or any(e.has_graph for e in fn.returns.elements or ())):
                continue  # it returns a graph too (`return loss, td_errors`): its caller trains on it
            if any(graph in b.origins for b in self.flow.backwards):
                continue  # the outputs are back-propagated: adversarial examples, input gradients
            if any(b.node is node and b.by_call for b in self.flow.backwards):
                continue  # a helper that back-propagates inside (`train(model, loader, opt)`): the call trains
            if model is not None and self._backpropagates_when_run(node, model):
                continue  # the model back-propagates inside its own forward: no_grad would break it
            if fn is not None and fn.call_sites == 0 and graph in fn.returns.origins and not (
                    after_eval and self._piled_up(graph, fn) or node in self._volatile):
                # the graph is handed to a caller we cannot see, which may train on it - not one evaluation
                # iteration's outputs after another, kept after .eval(), nor outputs made from a volatile
                # input (a caller could not back-propagate them before torch 0.4)
                continue
            if why in ("inference", "numpy") and graph in self.flow.escaped:
                continue  # handed to a function of another file (`update(loss)`), which may train on it
            if why == "sinks" and (not (self._only_sinks(graph, fn) or graph is node and self._dropped(node, stmt, fn, model))
                                   or self._blind_backward(fn)):
                continue
            if why == "sinks" and self._loss_unread(graph, fn):
                continue
            if why == "sinks" and node not in self._trained_model and self._only_displayed(graph):
                continue  # only shown as a notebook cell's value: a look at a layer, unless the model was trained
            if why == "sinks" and fn is not None and fn.cls is not None and fn.cls.module_like and not _returns_values(fn):
                continue  # a model's own encode()/decode() hands its graph to its caller; a weight merge returns nothing
            passed.add(node)
            self._graph_of[node] = graph
            target = self._target(fn, after_eval, why, loops, stmt)
            blocks.setdefault(target[1] if target else node, []).append((node, fn, after_eval, why, target))
        # One finding per evaluation block: one `with torch.no_grad():` fixes them all.
        for calls in self._join_statements(list(blocks.values())):
            self._report(*calls[0], more=len(calls) - 1, others=[c[0] for c in calls[1:]])

    def _only_displayed(self, graph: cst.Call) -> bool:
        """Are the outputs of `graph` only shown as a notebook cell's value (its last expression)?"""
        ends = self._sinks_of(graph)
        return bool(ends) and all(u.what == DISPLAYED for u in ends)

    def _loss_unread(self, graph: cst.Call, fn) -> bool:
        """Are the outputs of `graph` handed to a loss, in code that back-propagates, whose value no sink
        of theirs reads (`loss += criterion(out, y)` rebound before `loss.backward()`, the outputs also
        read through `.data`)? That loss is meant for a backward, even where the analysis loses it; a
        loss that is looked at (`train_l = loss(net(X), y)`, then `train_l.mean().item()`) is evaluation."""
        losses = [(n, st) for f, n, st, given in self._losses if f is fn and graph in given]
        if not losses or not any(b.function is fn for b in self.flow.backwards):
            return False
        for use in (u for u in self.flow.sinks if graph in u.origins):
            inside = descendants(use.node)
            names = {n.value for n in inside if isinstance(n, cst.Name)}
            for loss, stmt in losses:
                if any(n is loss for n in inside) or names & _bound_by(stmt):
                    return False
        return True

    def _piled_up(self, node: cst.Call, fn) -> bool:
        """Are the outputs of `node` kept across the iterations of a loop of `fn` that are steps but never
        back-propagate - evaluation iterations (steps.py) - each iteration's results piled on the last's?"""
        for s in self.flow.stores:
            if s.function is fn and node in all_origins(s.value):
                loop = step_of(self.flow, s.loops or (s.loop,), s.value)
                if loop is not None and not backpropagates_in(self.flow, loop):
                    return True
        return False

    def _only_sinks(self, node: cst.Call, fn) -> bool:
        """Do the outputs of the forward `node` reach non-differentiable uses (`.item()`, `print`,
        `.numpy()`, a comparison...) and nothing that may train on them: no callable the analysis
        cannot see, no caller elsewhere (a return, a generator's yield), no place outliving the
        function? (Backwards are checked by the caller.)"""
        out = self.flow.value(node)
        parts = list(out.elements or ()) + [e for _, e in out.keyed]
        if any(p.grad is Grad.UNKNOWN for p in parts):
            return False  # an output nothing tells (a submodule of unknown kind): where it goes is not followed
        ends = [u for u in self.flow.sinks if node in u.origins] + self._losses_looked_at(node)
        if not ends:
            return False  # unused, or used in ways that say nothing
        if any(_rebuilt(u.node, self.flow) for u in ends):
            return False  # `torch.tensor(loss.item(), requires_grad=True)`: a cut made a leaf to train (GG303's)
        read = {u.node for u in ends if u.what == "`.data`"}
        if read and read & {c.node for b in self.flow.backwards
                            for c in (*b.value.cuts, *(p[0] for p in b.value.pred_cuts))}:
            return False  # `loss_fn(out.data, y).backward()`: meant to train; the cut is the bug (GG202/GG301's)
        if any(node in u.origins and self._loss_looked_at(u.node, node) is None for u in self.flow.escapes):
            return False
        # returned (or yielded) to a caller elsewhere - by this function, or by one of the file that is
        # called from elsewhere and returns what this one gave it (RT-DETR's denoising queries reach the
        # decoder, whose outputs the model's forward() returns)
        if any(node in all_origins(f.returns) or f.yields is not None and node in all_origins(f.yields)
               for f in self.flow.functions if not f.call_sites):
            return False
        if any(node in all_origins(k.value) and not self._read_detached(self.code_of(k.kept_at))
               for f in self.flow.functions for k in f.kept):
            return False  # kept past the call (`self.saved_log_probs.append(m.log_prob(a))`) for a later backward
        return not any(node in s.value.origins and not self._read_detached(s.target) for s in self.flow.stores if not s.local)

    def _dropped(self, node: cst.Call, stmt, fn, model) -> bool:
        """Does the code read the outputs of the forward `node` that carry no graph and never those that
        do: `action, log_prob = policy.act(s)` (the action a number, `.item()`-ed inside), then only
        `action` read? The forward ran for those numbers, and no backward can reach the graph - unless the
        forward leaves it somewhere on the way: a method of the model of this file that keeps a graph past
        the call (`self.hidden = h`, `self.saved_log_probs.append(...)`), any function of the file that
        does (style transfer's loss layers keep `self.loss` inside an `nn.Sequential`), or a hook. (A
        forward none of whose outputs is read - `model(x)`, `_ = model(x)` - runs for what it does on the
        way, or to show that it runs: a smoke test, a warm-up, a stateful layer's update.)"""
        body = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if not (isinstance(body, cst.Assign) and body.value is node and len(body.targets) == 1):
            return False
        target, out = body.targets[0].target, self.flow.value(node)
        names = self._graph_names(target, out)
        every = {n.value for n in descendants(target) if isinstance(n, cst.Name)}
        if not names or names == every:
            return False
        if any(f.kept or (f.cls is not None and f.cls.module_like and f.backwards) for f in self.flow.functions):
            return False
        if model is not None and self._method_of.get(node) is None:
            return False  # a method of the model's class the analysis did not follow
        if re.search(r"\bregister_(?:full_backward_|forward_pre_|forward_|backward_)?hook\s*\(", self.flow.source):
            return False  # a hook may keep what the forward computes
        scope = fn.node if fn is not None else self.flow.module
        bound = set()
        for n in descendants(scope):
            if isinstance(n, (cst.Global, cst.Nonlocal)) and any(g.name.value in names for g in n.names):
                return False
            if isinstance(n, cst.Assign):
                bound.update(id(t) for target in n.targets for t in descendants(target.target)
                             if isinstance(t, cst.Name))
            elif isinstance(n, (cst.For, cst.CompFor)):
                bound.update(id(t) for t in descendants(n.target) if isinstance(t, cst.Name))
        read = {n.value for n in descendants(scope) if isinstance(n, cst.Name) and id(n) not in bound}
        return not read & names and bool(read & (every - names))

    def _graph_names(self, target, out) -> Optional[set]:
        """The names `target` binds to the parts of `out` that may carry a graph (None: it binds one
        to something that is not a plain name - an attribute, a subscript, a starred target)."""
        if isinstance(target, cst.Name):
            return {target.value} if out.grad is not Grad.NO else set()
        if isinstance(target, (cst.Tuple, cst.List)) and out.elements is not None \
                and len(out.elements) == len(target.elements):
            names: set = set()
            for element, part in zip(target.elements, out.elements):
                if isinstance(element, cst.StarredElement):
                    return None
                found = self._graph_names(element.value, part)
                if found is None:
                    return None
                names |= found
            return names
        return None

    def _read_detached(self, place: str) -> bool:
        """Is the attribute a store writes (`memory.logprobs` of `memory.logprobs.append(lp)`) read in
        the file, and only `.detach()`-ed (PPO's `torch.stack(memory.logprobs).detach()`)? Then the kept
        graphs train nothing: no backward can reach them."""
        found = re.fullmatch(r"[\w.]+\.(\w+)", place)
        return found is not None and not kept_for_training(self.flow.module, found.group(1))

    def _losses_looked_at(self, node: cst.Call) -> list:
        """The `.item()`s of losses the outputs of `node` are handed to and only read as numbers
        (`_loss_looked_at`), as sinks."""
        found = []
        for u in self.flow.escapes:
            item = self._loss_looked_at(u.node, node) if node in u.origins else None
            if item is not None:
                found.append(Use(item, u.origins, "`.item()`", u.function))
        return found

    def _loss_looked_at(self, call: cst.CSTNode, node: cst.Call) -> Optional[cst.Call]:
        """Is `call` (a callable the analysis cannot see, given the outputs of `node`) a loss or a metric
        read as a number, in a file that never trains: `self.criterion(out, y).item()` - given the
        outputs as its first argument (the prediction) and a target, its result turned into a Python
        number at once? Such a call computes from the outputs for a look (evidence.py's `_criterion`: a
        loss by what its result flows into, whatever it is called); in a file with no `.backward()` and
        no optimizer `step()`, nothing it could hand them to trains."""
        if not isinstance(call, cst.Call) or self._trains_file():
            return None
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) < 2 or node not in all_origins(self.flow.value(positional[0].value)) or any(
                node in all_origins(self.flow.value(a.value)) for a in call.args if a is not positional[0]):
            return None
        stmt = self.flow.top_of.get(call)
        return next((n for n in (descendants(stmt) if stmt is not None else ()) if isinstance(n, cst.Call)
                     and isinstance(n.func, cst.Attribute) and n.func.value is call
                     and n.func.attr.value == "item" and not n.args), None)

    def _blind_backward(self, fn) -> bool:
        """Does `fn` back-propagate a graph of unseen source (`loss` computed from `u`, a name bound nowhere
        in the file: the backward is its only evidence)? Any forward there may feed it."""
        scope = fn.node if fn is not None else self.flow.module  # (None: module-level code)
        return any(b.function is fn and b.origins <= {b.node} and _from_unbound(scope, b.node, self.flow.module)
                   for b in self.flow.backwards)

    def _sinks_of(self, node: cst.Call) -> list:
        """The uses that ended the graph of `node`'s outputs, in order, one per kind."""
        seen, out = set(), []
        uses = [u for u in self.flow.sinks if node in u.origins] + self._losses_looked_at(node) + [
            Use(k.stored, all_origins(k.value), f"`{self.code_of(k.kept_at)}` read only `.detach()`-ed", f)
            for f in self.flow.functions for k in f.kept
            if node in all_origins(k.value) and self._read_detached(self.code_of(k.kept_at))]
        direct = [u for u in uses if not u.after_cut]
        for u in direct or uses:  # `probs.argmax(-1).tolist()` ends at `argmax`
            if u.what not in seen:
                seen.add(u.what)
                out.append(u)
        return out

    def _join_statements(self, groups: list) -> list:
        """Statements of one suite after the same `.eval()` (`model.eval(); a = model(x); b =
        model(y)`) are one block: one finding whose fix wraps them all, if nothing between trains."""
        if len(groups) < 2:
            return groups
        places = self.flow.of_tree("gg103_suites", lambda: _Suites.of(self.flow.module))
        runs: dict = {}
        out = []
        for calls in groups:
            node, fn, after_eval, why, target = calls[0]
            place = places.get(id(target[1])) if target is not None and target[0] in ("statement", "loop") else None
            if place is None:
                out.append(calls)
                continue
            # (a notebook's cells are run one by one, and no `with` can wrap two: one block per cell)
            runs.setdefault((id(place[0]), why, self._cell_of(target[1])), []).append((place[1], calls))
        for run in runs.values():
            run.sort(key=lambda item: item[0])
            body = places[id(run[0][1][0][4][1])][0]
            first, last = run[0][0], run[-1][0]
            span = body[first : last + 1]
            if len(run) == 1 or any(self._trains(s) or has_multiline_string(self.code_of(s)) for s in span):
                out.extend(calls for _, calls in run)
                continue
            merged = [c for _, calls in run for c in calls]
            node, fn, after_eval, why, _ = merged[0]
            merged[0] = (node, fn, after_eval, why, ("span", span[0], span[-1]))
            out.append(merged)
        return out

    def _cell_of(self, stmt) -> int:
        """The index of the notebook cell a module-level statement starts in (0: not a notebook, or a
        statement inside a function or class, which lies in one cell)."""
        starts = self.flow.cell_starts
        if not starts:
            return 0
        if self._top_lines is None:
            module, line = self.flow.module, 1 + len(self.flow.module.header)
            self._top_lines = {}
            for top in module.body:
                self._top_lines[id(top)] = line + len(getattr(top, "leading_lines", ()))
                line += module.code_for_node(top).count("\n")
        line = self._top_lines.get(id(stmt))
        if line is None:
            return 0
        return max((k for k, start in enumerate(starts) if start <= line), default=0)

    def _target(self, fn, after_eval, why, loops, stmt):
        """What the fix puts under no_grad: ("decorate", function) / ("loop", loop) /
        ("statement", statement), outermost first - but never code that back-propagates
        or computes something a backward uses (no_grad there breaks training)."""
        candidates = []
        if why == "eval":
            started = [loop for loop in loops if self._loop_ticks.get(loop, 0) > after_eval[0]]
        elif why == "volatile":  # only the code around the forward says it evaluates
            started = list(loops)
        else:  # the whole function (or script) evaluates
            if fn is not None:
                candidates.append(("decorate", fn.node))
            started = list(loops)
        candidates += [("loop", loop) for loop in started] + [("statement", stmt)]
        for kind, target in candidates:
            if kind != "decorate" and not (
                isinstance(target, (cst.For, cst.While, cst.SimpleStatementLine)) and not has_multiline_string(self.code_of(target))
            ):
                continue
            if not self._trains(target):
                return kind, target
        return None

    def _trains(self, target: cst.CSTNode) -> bool:
        inside = _Nodes.of(target)
        if any(id(b.node) in inside or any(id(o) in inside for o in b.origins) for b in self.flow.backwards):
            return True
        # what it binds is back-propagated later (`d_loss = ... + penalty` then `d_loss.backward()`), even
        # where the analysis could not tell which graph that is (a model of unknown parameters)
        bound = {place_key(t.target) for n in descendants(target) if isinstance(n, cst.Assign) for t in n.targets}
        return any(isinstance(b.node, cst.Call) and isinstance(b.node.func, cst.Attribute)
                   and place_key(b.node.func.value) in bound - {None} for b in self.flow.backwards)

    def _report(self, node, fn, after_eval, why, target, more: int = 0, others=()) -> None:
        torch = torch_name(self.flow) or "torch"
        call = short(self.code_of(node))
        fixes = []
        volatile = self._volatile.get(node)
        # returned to a caller out of sight: only `volatile=True` says it never back-propagates them
        safety = Safety.UNSAFE if volatile is not None and fn is not None and fn.call_sites == 0 \
            and node in fn.returns.origins else Safety.SAFE
        if why == "numpy":
            where = f"in `{fn.name}()`, which turns its results into NumPy, in a file that never trains"
        elif why == "eval":
            where = "after `.eval()`{since} and its output never reaches a `.backward()`"  # since: filled in below
        elif why == "sinks":
            where = "{sinks}"  # filled in below
        elif why == "volatile":
            where = "{sinks}"  # filled in below (what reaches no backward, if it ends in sinks)
        else:
            where = "in a file that never trains (no `.backward()`, no optimizer `step()`)"
        if target is not None and target[0] == "decorate":
            anchor = fn.node.decorators[0] if fn.node.decorators else fn.node
            fixes.append(PendingFix(
                f"Decorate `{fn.name}` with `@torch.no_grad()`", safety,
                [(("before", anchor), lambda spot: f"@{torch}.no_grad()\n{spot.indent}")] + import_torch(self.flow),
            ))
        elif target is not None and target[0] == "span":
            fixes.append(PendingFix("Wrap the block in `with torch.no_grad():`", safety,
                                    [(target, wrap_in_no_grad(torch))] + import_torch(self.flow)))
        elif target is not None:
            title = "Wrap the loop in `with torch.no_grad():`" if target[0] == "loop" else "Wrap in `with torch.no_grad():`"
            fixes.append(PendingFix(title, safety, [(target[1], wrap_in_no_grad(torch))] + import_torch(self.flow)))

        uses = self._sinks_of(self._graph_of.get(node, node)) if why in ("sinks", "volatile") else []

        def message(line_of):
            since = f" on line {line_of(after_eval[1])}" if why == "eval" else ""
            sinks = ""
            if uses:
                shown = uses[:3]
                names = ", ".join(u.what for u in shown[:-1]) + (" and " if len(shown) > 1 else "") + shown[-1].what
                lines = sorted({line_of(u.node) for u in shown})
                where_ = f"line{'s' if len(lines) > 1 else ''} " + ", ".join(str(n) for n in lines)
                sinks = f"and its outputs reach only {names} ({where_}), never a `.backward()`"
            elif why == "sinks":  # (`_dropped`: nothing reads the outputs that carry the graph)
                sinks = "and of its outputs only those without a graph are read, so the graph never reaches a `.backward()`"
            elif why == "volatile":  # (returned to a caller out of sight: the keyword is all that says evaluation)
                sinks = f"although its input was made with `volatile=True` (line {line_of(volatile)}), which has done nothing since torch 0.4"
            said = where.format(since=since, sinks=sinks)
            notes = ["`eval()` does not disable gradients"] if after_eval is not None else []
            if volatile is not None and (uses or why != "volatile"):
                notes.append(f"`volatile=True` on line {line_of(volatile)} has done nothing since torch 0.4")
            note = f" ({', and '.join(notes)})" if notes else ""
            also = f"; so do {more} more forward passes in the same block" if more > 1 else "; so does 1 more forward pass in the same block" if more else ""
            return (
                f"`{call}` runs with grad enabled {said}: "
                f"autograd records the graph and keeps its activations for nothing{note}{also}"
            )

        related = [(after_eval[1], "`.eval()` does not turn gradients off")] if after_eval is not None else []
        if volatile is not None:
            related.append((volatile, "`volatile=True` has done nothing since torch 0.4: use `with torch.no_grad():`"))
        # the other forwards of the block, which the same fix covers
        related += [(other, "another forward pass of the block, also with grad enabled") for other in others]
        self.report(node, message, fixes=fixes, related=related)

    VALID = [
        Valid(
            """
import torch
from torch import nn


def accuracy(output, target):
    _, pred = output.topk(1, 1)
    correct = pred.t().eq(target.view(1, -1))
    return correct.float().sum().item() * 100.0 / target.size(0)


def validate(model, loader):
    model.eval()
    scores = []
    for images, target in loader:
        with torch.no_grad():
            output = model(images)
        scores.append(accuracy(output, target))
    return sum(scores) / len(scores)
""",
            note="the same accuracy helper, the forward under no_grad",
            runtime='built = []\nmodel = nn.Linear(4, 3)\nmodel.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nvalidate(model, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))])\nassert built == [False]',
        ),
        Valid(
            """
import torch

W = torch.randn(4, 3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)


def softmax(X):
    X_exp = X.exp()
    return X_exp.detach() / X_exp.sum(dim=1, keepdim=True).detach()


def net(X):
    return softmax(X @ W + b)


print(softmax(torch.rand(2, 3)).sum(dim=1))
X = torch.randn(8, 4)
for _ in range(3):
    loss = (X @ W + b).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        W -= 0.1 * W.grad
        b -= 0.1 * b.grad
        W.grad.zero_()
        b.grad.zero_()

probs = net(X)
print(probs.argmax(dim=1))
""",
            runtime="assert not probs.requires_grad",
            note="the same helper shown on a plain tensor and called by the hand-written model, but it detaches what it computes: `net(X)` returns no graph, nothing is recorded for the prediction",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.rand(32, 1)
y = 5 * x + 7
for _ in range(100):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model.forward(x), y)
    loss.backward()
    optimizer.step()
    print(loss.item())
""",
            runtime="assert model.weight.grad is not None",
            note="`model.forward(x)` is the module's call: here its output is the prediction of a loss that is back-propagated every step",
        ),
        Valid(
            """
import torch

W = torch.randn(3, 1)
b = torch.zeros(1)
W.requires_grad_(True)
b.requires_grad_(True)


def net(X):
    return X @ W + b


def sgd(params, lr):
    for param in params:
        param.data -= lr * param.grad
        param.grad.data.zero_()


def train(net, X, y, params, lr):
    for _ in range(5):
        loss = ((net(X) - y) ** 2).mean()
        loss.backward()
        sgd(params, lr)


X = torch.randn(20, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]])
train(net, X, y, [W, b], 0.1)
x = torch.ones(1, 3, requires_grad=True)
net(x).sum().backward()
print("input gradient:", x.grad)
""",
            runtime="assert x.grad is not None and W.grad is not None",
            note="the hand-written model `net` (its leaves trained through `train()` and `sgd()`) run on an input that requires grad, whose output is back-propagated: an input gradient, the graph is used",
        ),
        Valid(
            """
import torch
from torch import nn


def train_epoch(model, data, optimizer):
    total = 0
    for x, y in data:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss
    return total / len(data)


def train(model, data, optimizer, epochs):
    results = {"train_loss": [], "epoch": []}
    for epoch in range(epochs):
        results["train_loss"].append(train_epoch(model, data, optimizer))
        results["epoch"].append(epoch)
    return results


def main():
    model = nn.Linear(4, 1)
    data = [(torch.randn(5, 4), torch.randn(5, 1))] * 2
    results = train(model, data, torch.optim.SGD(model.parameters(), lr=0.1), 2)
    return [round(v.item(), 4) for v in results["train_loss"]]
""",
            runtime="out = main()\nassert all(isinstance(v, float) for v in out)",
            note="`train(...)` back-propagates inside (through `train_epoch()`): a training call, whatever reaches "
                 "`.item()` of what it returns (the epoch losses, kept in a dict of lists)",
        ),
        Valid(
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
""",
            note="the outputs are read through `.data` into the loss that is back-propagated: the code means to train "
            "them, and the cut is the bug (GG301 reports it); `no_grad` would only hide it",
            runtime="trainer = Trainer(nn.Linear(4, 1), nn.Linear(4, 2))\ntrainer.step(torch.randn(8, 4), torch.rand(8, 1))\n"
            "assert trainer.model.weight.grad is None and trainer.aux.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
model.eval()
with torch.no_grad():
    for x in [torch.randn(3, 4)]:
        out = model(x)
        preds = out.argmax(1)
""",
            note="no_grad around the loop",
            runtime="assert not out.requires_grad",
        ),
        Valid(
            """
import torch
from torch import nn


def evaluate(net, batches):
    net.eval()
    return [net(x).argmax(1) for x in batches]


net = nn.Linear(4, 2)
with torch.no_grad():
    evaluate(net, [torch.randn(3, 4)])
""",
            note="the caller provides no_grad visibly",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(4, 2)
model.eval()
x = torch.randn(3, 4, requires_grad=True)
loss = F.cross_entropy(model(x), torch.tensor([0, 1, 0]))
loss.backward()
adversarial = x + 0.1 * x.grad.sign()
""",
            note="outputs reach a backward: an adversarial example (FGSM)",
            runtime="assert x.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class Saliency(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x):
        x = x.detach().requires_grad_()
        self.lin(x).sum().backward()
        return x.grad


def evaluate(model, batches):
    model.eval()
    return [model(x).abs().mean().item() for x in batches]


scores = evaluate(Saliency(), [torch.randn(2, 4)])
""",
            note="the model back-propagates inside its own forward (input saliency): no_grad would break it",
            runtime="""
try:
    with torch.no_grad():
        evaluate(Saliency(), [torch.randn(2, 4)])
except RuntimeError as e:
    assert "does not require grad" in str(e), e
else:
    raise AssertionError("backward() under no_grad should fail")
""",
        ),
        Valid(
            """
import torch
from torch import nn
import lightning as L


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return self.net(x)
""",
            note="Lightning runs validation_step under no_grad",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
model.eval()
model.train()
for x in [torch.randn(2, 4)]:
    model(x).sum().backward()
""",
            note="back in train mode",
        ),
        Valid(
            """
import torch
from torch import nn


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc, self.dec = nn.Linear(8, 2), nn.Linear(2, 8)

    def decode(self, z):
        return self.dec(z)

    def forward(self, x):
        return self.decode(self.enc(x))


vae = VAE()
x = torch.randn(4, 8)
(vae(x) - x).pow(2).mean().backward()
""",
            note="a model's own decode() is part of its training forward pass",
            runtime="assert vae.dec.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class AutoencoderKL(nn.Module):
    def __init__(self):
        super().__init__()
        self.post_quant_conv = nn.Conv2d(4, 4, 1)
        self.decoder = nn.Conv2d(4, 3, 3, padding=1)

    def _decode(self, z):
        return self.decoder(self.post_quant_conv(z))

    def tiled_decode(self, z):
        rows = []
        for tile in z.split(2, dim=-1):
            rows.append(self._decode(tile))
        return torch.cat(rows, dim=-1)
""",
            note="regression (diffusers VAEs): decode methods of a model are not evaluation loops",
        ),
        Valid(
            """
import torch
from torch import nn


class Unit:
    def __init__(self):
        self.module = nn.Linear(2, 2)

    def eval_step(self, state, data):
        return self.module(data)

    def _predict(self, batch):
        return self.module(batch)
""",
            note="regression (torchtnt, torchrl): framework `*_step` hooks; outputs returned to an unseen caller",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn

classifier = nn.Linear(5, 3)
val_batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]
classifier.eval()
with torch.inference_mode():
    batch_losses = [F.cross_entropy(classifier(feats), tags) for feats, tags in val_batches]
""",
            note="a comprehension under inference_mode",
            runtime="assert not batch_losses[0].requires_grad",
        ),
        Valid(
            """
import torch
from torch import nn


class Feats(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        h = self.a(x)
        return [h, self.b(h)]


net = Feats().eval()
for p in net.parameters():
    p.requires_grad_(False)
target = torch.randn(2, 4, requires_grad=True)
opt = torch.optim.Adam([target], lr=0.1)
for step in range(3):
    loss = 0
    for f in net(target):
        loss += f.mean()
    opt.zero_grad(); loss.backward(); opt.step()
""",
            note="regression (issue 14): the forward returns a list the loss iterates over; its output reaches the backward (wrapping the loop in no_grad broke training)",
            runtime="assert target.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn

policy_net = nn.Linear(4, 2)
target_net = nn.Linear(4, 2)
target_net.load_state_dict(policy_net.state_dict())
target_net.eval()
optimizer = torch.optim.SGD(policy_net.parameters(), lr=0.01)


def select_action(state):
    with torch.no_grad():  # acting builds no graph (GG103 reports the forward otherwise)
        return policy_net(state).argmax(1)


for step in range(3):
    state = torch.randn(1, 4)
    action = select_action(state)
    q = policy_net(state).gather(1, action.view(1, 1))
    with torch.no_grad():
        target = target_net(torch.randn(1, 4)).max(1).values
    loss = (q.squeeze(1) - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            note='DQN: target_net.eval() says nothing about policy_net',
        ),
        Valid(
            """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))


def test():
    net = Net()
    y = net(torch.randn(2, 3, 2, 2))
    print(y.size())


test()
""",
            note='a smoke test of an untrained model built in the function',
        ),
        Valid(
            """
import torch
from torch import nn

from training import update_step  # trains on what it is given


def rollout(policy, observations):
    for obs in observations:
        value = policy(obs)
        update_step(value)
""",
            note='the outputs go to a function of another file, which may train on them',
        ),
        Valid(
            """
import torch
from torch import nn


class Agent(nn.Module):
    def __init__(self, n_obs):
        super().__init__()
        self.pi = nn.Linear(n_obs, 2)

    def forward(self, obs):
        return self.pi(obs)


def evaluate(Model: nn.Module, weights, n_obs):
    model = Model(n_obs)
    model.load_state_dict(weights)
    model.eval()
    with torch.no_grad():
        return model(torch.randn(3, n_obs)).argmax(1)


""",
            note="a parameter annotated nn.Module but named like a class holds one: Model(n_obs) constructs (issue 14's Model(envs)), it is no forward",
        ),
        Valid(
            """
import torch
from torch import nn


class Scorer:
    def __init__(self):
        self.network = nn.Linear(4, 3)

    def predict(self, batch):
        self.network.eval()
        return self.network(batch).softmax(1).tolist()


def score_all(scorer, batches):
    return [scorer.predict(b) for b in batches]


def predict_task(scorer, batches):
    with torch.no_grad():
        return score_all(scorer, batches)

""",
            note="mt-dnn: predict() reached only by name (`scorer.predict` on a parameter; the only class of the file defining it), under the entry point's no_grad",
        ),
        Valid(
            """
import torch
from torch import nn


class PerceptualLoss(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.features = features.eval()

    def forward(self, fake, real):
        return (self.features(fake) - self.features(real)).pow(2).mean()
""",
            runtime='fake = torch.randn(2, 3, requires_grad=True)\nPerceptualLoss(nn.Linear(3, 3))(fake, torch.randn(2, 3)).backward()\nassert fake.grad is not None',
            note='a frozen feature extractor eval()-ed in the constructor whose output is returned: the generator trains through it',
        ),
        Valid(
            """
import torch
from torch import nn


class Autoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 2)
        self.decoder = nn.Linear(2, 4)

    def forward(self, x):
        return self.predict(self.encoder(x))

    def predict(self, z):
        return torch.sigmoid(self.decoder(z))
""",
            note="a model's own predict() that returns a graph: part of forward (an autoencoder's decoder)",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.distributions import Categorical


class Reinforce:
    def __init__(self, policy: nn.Module):
        self.policy = policy
        self.saved_log_probs = []

    def select_action(self, state):
        probs = self.policy(torch.as_tensor(state, dtype=torch.float32)).softmax(-1)
        m = Categorical(probs)
        action = m.sample()
        self.saved_log_probs.append(m.log_prob(action))
        return action.item()
""",
            runtime='agent = Reinforce(nn.Linear(3, 2))\nagent.select_action([0.1, 0.2, 0.3])\nassert agent.saved_log_probs[0].requires_grad',
            note="REINFORCE: select_action() keeps the log-probability for the episode's backward",
        ),
        Valid(
            """
import torch
from torch import nn


class Patched(nn.Module):
    def __init__(self):
        super().__init__()
        self.patcher = nn.Embedding(10, 4)
        self.patcher.eval()
        for param in self.patcher.parameters():
            param.requires_grad = False
        self.body = nn.Linear(4, 4)

    def forward(self, ids):
        lengths = self.patcher(ids).norm(dim=-1).argmax(-1)
        return self.body(torch.ones(ids.shape[0], 4)) * lengths.unsqueeze(-1)
""",
            runtime='m = Patched()\nassert not m.patcher(torch.tensor([[1, 2]])).requires_grad',
            note='regression (transformers BLT): a submodule eval()-ed and frozen in the constructor builds no graph from token ids',
        ),
        Valid(
            """
import torch


class Evaluator:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    @torch.no_grad()
    def run(self, batches):
        total = 0.0
        for x, y in batches:
            out = self.model(x)
            total += self.criterion(out, y).item()
        return total / len(batches)
""",
            note='the same evaluator under @torch.no_grad()',
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 4, 3, padding=1)
        self.heatmap = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        return self.heatmap(torch.relu(self.backbone(x))).sigmoid()


def heatmap_of(net, image):
    heatmap = net(torch.from_numpy(image)[None])
    return heatmap, heatmap.detach().numpy()
""",
            note="a helper that turns its result into NumPy but also returns the tensor with its graph: a caller in another file may train on it",
            runtime="h, arr = heatmap_of(Detector(), np.random.rand(3, 8, 8).astype(np.float32))\nassert has_graph(h)",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from ddqn import DDQN


class DDQN_With_Prioritised_Experience_Replay(DDQN):
    def learn(self):
        states, actions, rewards, next_states, dones, weights = self.memory.sample()
        loss, td_errors = self.compute_loss_and_td_errors(states, next_states, rewards, actions, dones, weights)
        self.take_optimisation_step(self.q_network_optimizer, self.q_network_local, loss)
        self.memory.update_td_errors(td_errors.squeeze(1))

    def compute_loss_and_td_errors(self, states, next_states, rewards, actions, dones, weights):
        Q_targets = self.compute_q_targets(next_states, rewards, dones)
        Q_expected = self.compute_expected_q_values(states, actions)
        loss = torch.mean(F.mse_loss(Q_expected, Q_targets) * weights)
        td_errors = Q_targets.data.cpu().numpy() - Q_expected.data.cpu().numpy()
        return loss, td_errors
""",
            note="p-christ's prioritised-replay DQN: the function turns its TD errors into NumPy, but it also returns the loss, which its caller back-propagates (take_optimisation_step)",
            runtime="agent = DDQN_With_Prioritised_Experience_Replay()\nagent.learn()\nassert agent.q_network_local.weight.grad is not None",
        ),
        Valid(
            """
import torch
import torchvision
from torch import nn


def create_effnetb2_model(num_classes: int = 3):
    weights = torchvision.models.EfficientNet_B2_Weights.DEFAULT
    transforms = weights.transforms()
    model = torchvision.models.efficientnet_b2(weights=weights)
    for param in model.parameters():
        param.requires_grad = False
    model.classifier = nn.Sequential(nn.Dropout(p=0.3, inplace=True), nn.Linear(1408, num_classes))
    return model, transforms


effnetb2, effnetb2_transforms = create_effnetb2_model(num_classes=3)


def predict(img):
    img = effnetb2_transforms(img).unsqueeze(0)
    effnetb2.eval()
    with torch.inference_mode():
        pred_probs = torch.softmax(effnetb2(img), dim=1)
    return pred_probs
""",
            note="pytorch-deep-learning's deployment notebook: `weights.transforms()` (of `EfficientNet_B2_Weights.DEFAULT`) builds the preprocessing, not a model; the model itself runs under inference_mode",
        ),
        Valid(
            """
import torch

from torch_utils import select_device, smart_inference_mode


@smart_inference_mode()
def run(model, dataloader, device="cpu"):
    device = select_device(device)
    model.eval()
    stats = []
    for im, targets in dataloader:
        preds = model(im.to(device))
        stats.append((preds.argmax(1) == targets).float().mean().item())
    return sum(stats) / len(stats)
""",
            note="yolov5's val.run(): `@smart_inference_mode()`, imported from the project, applies torch.inference_mode (or no_grad) - a switch whose name says so",
            runtime="model = torch.nn.Linear(4, 3)\nassert 0.0 <= run(model, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))]) <= 1.0",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
for param in model.parameters():
    param.requires_grad = False
model.eval()
scores = model(torch.randn(3, 4))
""",
            note='every parameter frozen (`for param in model.parameters(): param.requires_grad = False`, as PPLM does to GPT-2): the forward records no graph',
            runtime='assert not scores.requires_grad',
        ),
        Valid(
            """
import numpy as np
import torch
from ldm.util import instantiate_from_config


def load_model_from_config(config, ckpt):
    model = instantiate_from_config(config.model)
    model.load_state_dict(torch.load(ckpt)["state_dict"], strict=False)
    model.eval()
    return model


def main(config, ckpt, init_image):
    model = load_model_from_config(config, ckpt)
    init_latent = model.get_first_stage_encoding(model.encode_first_stage(init_image))
    with torch.no_grad():
        x = model.decode_first_stage(init_latent)
    return (255.0 * x.cpu().numpy()).astype(np.uint8)
""",
            note="latent diffusion's img2img: `encode_first_stage` is a method of a model defined elsewhere (ldm), which decorates it with @torch.no_grad(); only the file's NumPy conversion would speak against it",
        ),
        Valid(
            """
import unittest

import torch
from models import BetaVAE


class TestBetaVAE(unittest.TestCase):
    def setUp(self):
        self.model = BetaVAE(3, 10)

    def test_loss(self):
        result = self.model(torch.randn(16, 3, 64, 64))
        loss = self.model.loss_function(*result, M_N=0.005)
        print(loss)
""",
            note="a unittest.TestCase runs a model in training mode once to check it works (PyTorch-VAE's tests), often its gradients; a test that evaluates after `.eval()` is still reported",
        ),
        Valid(
            """
import torch
from torch import nn
from operator import ne


class DiceLoss(nn.Module):
    def __init__(self, smooth=1.0):
        super().__init__()
        self.smooth = smooth

    def forward(self, input, target):
        inter = (input * target).sum()
        return 1 - (2 * inter + self.smooth) / (input.sum() + target.sum() + self.smooth)


def masked_mse(input, target):
    differs = ne(input, target)
    if not differs.any():
        return input.sum() * 0
    return ((input - target) ** 2).mean()


pred = torch.rand(4, requires_grad=True)
loss = DiceLoss()(pred, torch.ones(4)) + masked_mse(pred, torch.zeros(4))
loss.backward()
""",
            note="regression (composer's loss.py): a function imported from elsewhere, called with arguments named "
                 "as a loss module's `forward(input, target)`, is not an instance of that module",
            runtime="assert pred.grad is not None",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


class Record:
    def __init__(self, **fields):
        self.fields = fields


def fgsm_attack(model, images, labels, epsilon):
    model.eval()
    images.requires_grad_(True)
    loss = F.cross_entropy(Record(out=model(images)).fields["out"], labels)
    model.zero_grad()
    loss.backward()
    return images + epsilon * images.grad.sign()


model = torch.nn.Linear(4, 3)
images = torch.randn(2, 4)
adversarial = fgsm_attack(model, images, torch.tensor([0, 2]), 0.1)
""",
            note="a forward's output kept by a class of the file through `**fields` and read back into the loss that is back-propagated to the input",
            runtime='assert images.grad is not None',
        ),
        Valid(
            """
import torch
from dataclasses import dataclass
from torch import nn


def denoising_queries(labels, class_embed):
    noisy = torch.where(torch.rand(labels.shape) < 0.5, torch.randint_like(labels, 0, 10), labels)
    return class_embed(noisy)


@dataclass
class DecoderOutput:
    last_hidden_state: torch.Tensor


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, inputs_embeds=None):
        if inputs_embeds is not None:
            hidden_states = inputs_embeds
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return DecoderOutput(last_hidden_state=hidden_states)


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.denoising_class_embed = nn.Embedding(10, 4)
        self.decoder = Decoder()

    def forward(self, queries, labels=None):
        denoising = None
        if self.training and labels is not None:
            denoising = denoising_queries(labels, self.denoising_class_embed)
        target = queries
        if denoising is not None:
            target = torch.concat([denoising, target], 1)
        return self.decoder(inputs_embeds=target).last_hidden_state


model = Detector()
model(torch.randn(2, 3, 4), torch.randint(0, 10, (2, 3))).sum().backward()
""",
            note="regression (transformers' RT-DETR family): denoising queries embedded in a helper reach the decoder, whose "
                 "output object the model's forward() returns to a caller elsewhere; a training-time branch, not an evaluation",
            runtime="assert model.denoising_class_embed.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


def run_model(model, batch):
    return model(batch)


def fit(model, batches, optimizer):
    model.train()
    for batch in batches:
        loss = run_model(model, batch).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(model, batches):
    model.eval()
    with torch.no_grad():
        return [run_model(model, batch).mean().item() for batch in batches]
""",
            note="one helper for training and for validation under no_grad: neither call evaluates with grad on",
            runtime="model = nn.Linear(4, 3)\nfit(model, [torch.randn(2, 4)], torch.optim.SGD(model.parameters(), lr=0.1))\n"
                    "assert model.weight.grad is not None\nassert len(validate(model, [torch.randn(2, 4)])) == 1",
        ),
        Valid(
            """
import torch


def tagged(value, tag):
    return value, tag


class Evaluator:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def run(self, data):
        total = 0.0
        with torch.no_grad():
            for x, target in data:
                out = tagged(self.model(x), "logits")[0]
                total += self.criterion(out, target).item()
        return total / len(data)
""",
            note="the same evaluation under `torch.no_grad()`",
            runtime='model, outs = torch.nn.Linear(5, 4), []\nmodel.register_forward_hook(lambda m, i, o: outs.append(o))\nEvaluator(model, torch.nn.CrossEntropyLoss()).run([(torch.randn(2, 5), torch.randint(0, 4, (2,)))])\nassert not has_graph(outs[0])',
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 4, 3, padding=1)
        self.heatmap = nn.Conv2d(4, 1, 1)
        self.box = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        x = torch.relu(self.backbone(x))
        return self.heatmap(x).sigmoid(), self.box(x)


@torch.no_grad()
def detect(net, image):
    heatmap, box = tagged(net(torch.from_numpy(image)[None]), "raw")[0]
    peak = heatmap.flatten().argmax().item()
    return box.flatten(2)[0, :, peak].data.numpy()
""",
            note="the same detect() under `@torch.no_grad()`",
            runtime='image = np.random.rand(3, 8, 8).astype(np.float32)\nassert detect(Detector(), image).shape == (4,)',
        ),
        Valid(
            """
import torch
from torch import nn


def fit(net, step_fn, batches, held_x, held_y):
    net.train()
    for x, y in batches:
        step_fn(net(x), y)
    held = step_fn(net(held_x), held_y)
    print(f"held-out: {held.item():.3f}")
""",
            note='the near look-alike: `step_fn` is given a prediction and a target, but this code never back-propagates what it returns - it may train itself (here it back-propagates and steps), so the held-out forward may reach a backward',
            runtime='net = nn.Linear(3, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\ndef train_on(pred, y):\n    opt.zero_grad()\n    err = nn.functional.mse_loss(pred, y)\n    err.backward()\n    opt.step()\n    return err\nfit(net, train_on, [], torch.randn(4, 3), torch.randn(4, 1))\nassert net.weight.grad is not None',
        ),
        Valid(
            """
import torch

W = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def net(X):
    return X @ W + b


X = torch.randn(20, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]])
for _ in range(5):
    loss = ((net(X) - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        W -= 0.1 * W.grad
        b -= 0.1 * b.grad
        W.grad.zero_()
        b.grad.zero_()

probe = torch.ones(1, 3, requires_grad=True)
score = net(probe)
score.sum().backward()
print("saliency:", probe.grad)
""",
            note='the same hand-written model run on an input that requires grad, whose output is back-propagated (an input gradient): the graph is used',
            runtime='assert probe.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn

W = nn.Parameter(torch.randn(3, 1) * 0.1)
params = [W]


def net(X):
    return X @ W


def objective(pred, y):
    return ((pred - y) ** 2).mean() + 1e-3 * (W ** 2).sum()


def fit(batches, epochs):
    opt = torch.optim.SGD(params, lr=0.1)
    for _ in range(epochs):
        for X, y in batches:
            err = objective(net(X), y)
            opt.zero_grad()
            err.backward()
            opt.step()
            print(f"loss {err.item():.4f}")
""",
            note='a loss helper that also reads a trained leaf (a weight penalty on `W`), given a prediction from a loader batch: its result is back-propagated, so the graph it makes is used',
            runtime='fit([(torch.randn(4, 3), torch.randn(4, 1))], 2)\nassert W.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


class EvalNoGrad:
    def __init__(self, model):
        self.model = model
        self.was_training = model.training
        self.was_enabled = torch.is_grad_enabled()

    def __enter__(self):
        self.model.train(False)
        torch.set_grad_enabled(False)

    def __exit__(self, *args):
        self.model.train(self.was_training)
        torch.set_grad_enabled(self.was_enabled)


def validate(model: nn.Module, batches):
    with EvalNoGrad(model):
        return sum(model(x).mean().item() for x in batches)


net = nn.Linear(5, 1)
seen = []
net.register_forward_hook(lambda m, i, o: seen.append(o))
print(validate(net, [torch.randn(3, 5)]))
""",
            note="a context manager class of the file whose `__enter__` turns grad off (`torch.set_grad_enabled(False)`): the forward inside builds no graph",
            runtime="assert seen[0].grad_fn is None",
        ),
        Valid(
            """
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 2)
        self.dec = nn.Linear(2, 6)

    def encode(self, x):
        return torch.tanh(self.enc(x))

    def decode(self, z):
        return self.dec(z)


def to_frames(x):
    x = x.detach().cpu()
    return (x.clamp(-1, 1) * 127.5 + 127.5).numpy()


def train_step(ae, batch, optimizer):
    recon = ae.decode(ae.encode(batch))
    loss = ((recon - batch) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return to_frames(recon)


model = AutoEncoder()
frames = train_step(model, torch.randn(4, 6), torch.optim.SGD(model.parameters(), lr=0.1))
""",
            note="the same methods in a training step: the reconstruction is back-propagated before its frames are made",
            runtime="assert model.enc.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self, vocab=7, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        states, _ = self.encoder(self.embed(tokens))
        return self.head(states)


def tune_head(wrapped, tokens, labels, optimizer):
    states, _ = wrapped.module.encoder(wrapped.module.embed(tokens))
    loss = nn.functional.cross_entropy(wrapped.module.head(states).flatten(0, 1), labels.flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
            note='the same chain of submodules, whose outputs reach a backward: training, not inference',
            runtime='wrapped = nn.DataParallel(Tagger())\nopt = torch.optim.SGD(wrapped.parameters(), lr=0.1)\ntune_head(wrapped, torch.randint(0, 7, (2, 5)), torch.randint(0, 7, (2, 5)), opt)\nassert wrapped.module.head.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
        self.decoder = nn.Linear(4, 8)

    def forward(self, x):
        return self.decoder(self.encoder(x))


def sparsity_step(net, x, opt, weight=1e-3):
    z = net.module.encoder(x)
    penalty = weight * z.abs().mean()
    opt.zero_grad()
    penalty.backward()
    opt.step()
    print(f"active units: {(z > 0).float().mean().item():.2f}")
""",
            note='the submodule behind `.module` whose output is back-propagated (a sparsity penalty on the codes) and also looked at: training',
            runtime='net = nn.DataParallel(AutoEncoder())\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\nsparsity_step(net, torch.randn(4, 8), opt)\nassert net.module.encoder[0].weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


class Hook:
    def after_epoch(self, runner):
        pass


class ShrinkOutputs(Hook):
    def __init__(self, noise):
        self.noise = noise

    def after_epoch(self, runner):
        out = runner.generator(self.noise)
        penalty = 1e-2 * out.pow(2).mean()
        runner.opt.zero_grad()
        penalty.backward()
        runner.opt.step()
        print(f"penalty {penalty.item():.4f}")


class Runner:
    def __init__(self, generator, hooks):
        self.generator = generator
        self.hooks = hooks
        self.opt = torch.optim.Adam(generator.parameters(), lr=1e-3)

    def run(self, batches, epochs):
        for _ in range(epochs):
            for z, target in batches:
                loss = nn.functional.mse_loss(self.generator(z), target)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            for hook in self.hooks:
                hook.after_epoch(self)
""",
            note="the same hook, filled in with a step that back-propagates a penalty on the generator's outputs: training, not a preview",
            runtime='gen = nn.Linear(3, 2)\nRunner(gen, [ShrinkOutputs(torch.randn(2, 3))]).run([(torch.randn(4, 3), torch.randn(4, 2))], 1)\nassert gen.weight.grad is not None',
        ),
        Valid(
            """
import random

import torch
import torch.nn.functional as F
from torch import nn


class NoisyHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

    def jittered(self, x):
        return self.forward(x) * random.uniform(0.9, 1.1)


def train_step(net, x, y, opt):
    loss = F.mse_loss(net.jittered(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()
""",
            note="a model's own method that scales its output by `random.uniform(...)`, a Python number: the result still carries the graph, which the training step back-propagates",
            runtime='net = NoisyHead()\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\ntrain_step(net, torch.randn(3, 4), torch.randn(3, 2), opt)\nassert net.fc.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def residual(dist, target):
    globals()["u"] = target - dist


def train_step(state, target):
    dist = model(state)
    order = torch.sort(dist, 1)[1]
    residual(dist, target)
    loss = (u.abs() * (order == 0).float()).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
            note="the back-propagated loss is computed from `u`, which the file binds where the analysis cannot see (RL-Adventure's quantile DQN): the forward whose indices are read may feed it",
            runtime='train_step(torch.randn(5, 4), torch.randn(5, 3))\nassert model.weight.grad is not None',
        ),
        Valid(
            """
import torch


def run_model(model, x):
    out = model(x)
    return out


def train_epoch(model, criterion, opt, batches):
    for x, y in batches:
        out = run_model(model, x)
        loss = criterion(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            note='the same helper called by a training loop that back-propagates its outputs',
            runtime='model = torch.nn.Linear(3, 2)\ntrain_epoch(model, torch.nn.functional.cross_entropy, torch.optim.SGD(model.parameters(), lr=0.1), [(torch.randn(4, 3), torch.tensor([0, 1, 0, 1]))])\nassert model.weight.grad is not None',
        ),
        Valid(
            """
import torch


def predict(aa, bb):
    aa.eval()
    return aa(bb)
""",
            note="one forward after `.eval()` returned to a caller the file does not show, which may train on it "
            "(batch norm frozen): a name saying it predicts does not decide it",
            runtime='net = torch.nn.Linear(4, 3)\npredict(net, torch.randn(2, 4)).sum().backward()\n'
            'assert net.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch.autograd import Variable


def accuracy(net, batches):
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            x = Variable(x, volatile=True)
            out = net(x)
            correct += (out.argmax(1) == y).sum().item()
    return correct
""",
            note="issue 29: `volatile=True` (a no-op) under `torch.no_grad()`, which does disable gradients",
            runtime="net = torch.nn.Linear(4, 3)\nseen = []\nnet.register_forward_hook(lambda m, i, o: seen.append(o))\n"
            "accuracy(net, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))])\nassert not seen[0].requires_grad",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch.autograd import Variable


def train_step(net, x, y):
    x = Variable(x, volatile=True)
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    return loss.item()
""",
            note="issue 29: the outputs of a forward given a `volatile=True` input reach a `.backward()`: the graph is wanted",
            runtime="net = torch.nn.Linear(4, 3)\ntrain_step(net, torch.randn(5, 4), torch.randint(0, 3, (5,)))\n"
            "assert net.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch.autograd import Variable


def accuracy(net, batches, train):
    correct = 0
    for x, y in batches:
        a = Variable(x, volatile=False)
        b = Variable(x, volatile=not train)
        correct += (net(a).argmax(1) == net(b).argmax(1)).sum().item()
    return correct
""",
            note="issue 29: `volatile=False`, and a value not known to be True, say nothing about intent",
            runtime="assert accuracy(torch.nn.Linear(4, 3), [(torch.randn(5, 4), None)], False) == 5",
        ),
        Valid(
            """
import torch
from torch import nn


class C1(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.body(x))

    def step3(self, x):
        return self.head(self.body(x)) * 2
""",
            note="a model's own method that returns its graph: the caller may train through it (a VAE's decode)",
            runtime='m = C1()\nm.step3(torch.randn(2, 4)).sum().backward()\nassert m.head.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


def comp_conv2d(conv2d, X):
    X = X.view((1, 1) + X.shape)
    Y = conv2d(X)
    return Y.view(Y.shape[2:])


conv2d = nn.Conv2d(in_channels=1, out_channels=1, kernel_size=3, padding=1)
X = torch.rand(8, 8)
print(comp_conv2d(conv2d, X).shape)
""",
            note="a freshly built, untrained layer run on random data through a helper only to show the output shape (d2l's comp_conv2d): a smoke test, as when the layer is called directly",
            runtime="assert comp_conv2d(conv2d, X).shape == (8, 8)",
        ),
        Valid(
            """
import torch
from torch import nn

G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
print(G(torch.randn(1, 4)).detach().numpy())  # a smoke test before any training
opt = torch.optim.SGD(G.parameters(), lr=0.1)
for _ in range(2):
    loss = G(torch.randn(5, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            note="the same model run once before anything back-propagates, only to look at its output: a smoke test of "
            "the untrained model, left alone",
            runtime="assert G[0].weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    loss = nn.functional.cross_entropy(net(torch.randn(5, 4)), torch.randint(0, 3, (5,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

outputs = net(torch.randn(4, 4))
top, predicted = torch.max(outputs, 1)
print(predicted.tolist())
top.sum().backward()
""",
            note="the values unpacked beside the indices are back-propagated: the forward trains",
            runtime="assert net[0].weight.grad is not None",
        ),
        Valid(
            """
import io

import torch
from torch import nn

net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 3), torch.randn(8, 1))] * 3:
    opt.zero_grad()
    prediction = net(x)
    buffer = io.BytesIO()
    torch.save(prediction.data, buffer)
    nn.functional.mse_loss(prediction, y).backward()
    opt.step()
""",
            note='the outputs are read through `.data` for a log, and also back-propagated',
            runtime='assert net.weight.grad is not None',
        ),
        Valid(
            """import torch
from torch import nn

model = nn.Linear(3, 2)
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train(x, y):
    loss = 0
    for t in range(3):
        out = model(x)
        loss += criterion(out, y)
        top = out.data.topk(1)
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()
""",
            note="the outputs also go to a loss in a function that back-propagates, and nothing looks at that loss: it is meant for a backward (here rebound before it, as in practical-pytorch's seq2seq), so where the outputs go is not proved",
            runtime='train(torch.randn(4, 3), torch.tensor([0, 1, 0, 1]))\nassert model.weight.grad is not None',
        ),
        Valid(
            """
import torch

features = torch.randn(20, 2)
labels = features @ torch.tensor([[2.0], [-3.4]]) + 4.2
w = torch.zeros(2, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):
    return torch.mm(X, w) + b


for epoch in range(3):
    l = ((linreg(features, w, b) - labels) ** 2).mean()
    print(epoch, l.item())
    l.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad.zero_()
    b.grad.zero_()
""",
            note="the hand-written model's output is printed through `.item()` and also back-propagated: a training step",
            runtime='assert w.grad is not None',
        ),
        Valid(
            """
import torch


class C1:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def m1(self, batches):
        total = 0.0
        for x, y in batches:
            out = self.model(x)
            total += self.criterion(out, y).item()
        return total / len(batches)


def f1(model, opt):
    def step_fn(out, y):
        opt.zero_grad()
        loss = ((out - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    return C1(model, step_fn)
""",
            note="the look-alike of MTN's evaluator in a file that trains: the callable the outputs go to, unseen where "
            "it is called, may be a training step (here it back-propagates and steps), so a `.item()` of its result "
            "proves nothing",
            runtime="model = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "f1(model, opt).m1([(torch.randn(2, 3), torch.randn(2, 1))])\nassert model.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.distributions import Normal


class C1(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 2)

    def forward(self, x):
        return self.mu(x)

    def m1(self, state):
        dist = Normal(self.mu(state), 1.0)
        action = dist.rsample()
        return action, dist.log_prob(action).sum(-1)
""",
            note="SAC's reparameterised sample: `rsample()` and `log_prob()` carry the policy's graph and are returned, "
            "for a caller that may back-propagate them (unlike `sample()`)",
            runtime="policy = C1()\naction, logp = policy.m1(torch.randn(3, 4))\nlogp.sum().backward()\n"
            "assert policy.mu.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class VideoVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 2)
        self.dec = nn.Linear(2, 6)

    def encode(self, x):
        return self.enc(x)

    def decode(self, z):
        return self.dec(z)


class CharCodec:
    def encode(self, text):
        return torch.tensor([float(ord(c)) for c in text])

    def decode(self, codes):
        return "".join(chr(int(c)) for c in codes)


def roundtrip(codec, text):
    return codec.decode(codec.encode(text))
""",
            note="`codec.encode(...)` and `codec.decode(...)`: two classes of the file define both, so the calls say "
            "nothing about which one `codec` holds (here a character codec, no model)",
            runtime='assert roundtrip(CharCodec(), "ab") == "ab"',
        ),
        Valid(
            """
import torch
from torch import nn


class C1(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)

    def m1(self, x):
        loss = self.fc(x).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def f1(batches):
    model = C1()
    for x in batches:
        print(model.m1(x))
""",
            note="a model built in the function whose called method is its own training step: the forward inside "
            "back-propagates, and no_grad around the call would break it",
            runtime="f1([torch.randn(3, 4)])\nm = C1()\nm.m1(torch.randn(3, 4))\nassert m.fc.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)

    def act(self, state):
        m = Categorical(self.forward(state))
        action = m.sample()
        return action.item(), m.log_prob(action)


def episode(policy, env, optimizer):
    state, log_probs, rewards = env.reset(), [], []
    for _ in range(100):
        action, log_prob = policy.act(state)
        log_probs.append(log_prob)
        state, reward, done = env.step(action)
        rewards.append(reward)
        if done:
            break
    loss = -(torch.stack(log_probs) * sum(rewards)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            note='the same `act()` in a training episode: the log-probabilities are kept and back-propagated',
            runtime='class Env:\n    def reset(self):\n        return torch.randn(4)\n\n    def step(self, action):\n        return torch.randn(4), 1.0, True\np = Policy()\nepisode(p, Env(), torch.optim.SGD(p.parameters(), lr=0.1))\nassert p.fc.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


def fit(model, batches):
    model(batches[0][0])  # materialise the lazy layers before the optimizer takes their parameters
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            note="a forward none of whose outputs is read runs for what it does on the way (a warm-up, a lazy layer's initialisation, a smoke test, a stateful layer's update): nothing says what the outputs are for",
        ),
        Valid(
            """
import torch
from torch import nn


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(8, 8)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(torch.relu(self.features(x)))


model = Student()
print(model.fc.weight.shape)
pred = model(torch.randn(1, 8)).argmax(1).item()
print(pred)
""",
            note="the same model built and never trained (nothing takes its parameters, not even a submodule's, and nothing is given the model): a smoke run of a fresh model",
        ),
        Valid(
            """
import torch
import torchvision


def classify(image):
    net = torchvision.models.resnet18(weights=None)
    return net(image).argmax(1).item()
""",
            note='the same model built without trained weights (`weights=None`): a smoke run of a fresh model',
        ),
        Valid(
            """
import torch
from torch.autograd import Variable


def extract(net, loader, use_gpu):
    feats = []
    for img in loader:
        if use_gpu:
            img = Variable(img, volatile=True).cuda()
        else:
            img = Variable(img)
        feats.append(net(img.unsqueeze(0)).data)
    return torch.cat(feats)
""",
            note="`volatile=True` on one branch only: the other path's input says nothing, and `net` nothing else tells",
        ),
        Valid(
            """
import torch
from torch import nn


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.i2h = nn.Linear(6, 2)
        self.i2o = nn.Linear(6, 4)

    def forward(self, x, hidden):
        both = torch.cat((x, hidden), 1)
        return self.i2o(both), self.i2h(both)


rnn = CharRNN()
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)


def train_sequence(xs, ys):
    hidden = torch.zeros(1, 2)
    loss = 0
    for x, y in zip(xs, ys):
        out, hidden = rnn.forward(x, hidden)
        print(out.data.argmax().item())
        loss = loss + nn.functional.mse_loss(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            note='the same `rnn.forward(x, h)` unrolled over a sequence whose summed loss is back-propagated: the printed `.data` is a look on the way',
            runtime='opt.zero_grad()\ntrain_sequence([torch.randn(1, 4)], [torch.randn(1, 4)])\nassert rnn.i2o.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


class Record:
    def __init__(self, **fields):
        self.fields = fields


def rollout(model, batches, records):
    for x, y in batches:
        record = Record(out=model(x))
        print(record.fields["out"].argmax(1))
        records.append(record)


def train(model, batches, opt):
    records = []
    rollout(model, batches, records)
    opt.zero_grad()
    sum(nn.functional.cross_entropy(r.fields["out"], y) for r, (x, y) in zip(records, batches)).backward()
    opt.step()
""",
            note='the object a rollout makes is kept (`records.append(record)`) and what it holds is back-propagated by the caller: the forward is meant to train, though the rollout prints a look at it',
            runtime='model = nn.Linear(4, 3)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\ntrain(model, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))], opt)\nassert model.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn

import d2l

features, labels = torch.randn(20, 3), torch.randn(20, 1)
net, loss = nn.Linear(3, 1), d2l.squared_loss
opt = torch.optim.SGD(net.parameters(), lr=0.03)
for epoch in range(3):
    l = loss(net(features), labels).mean()
    opt.zero_grad()
    l.backward()
    opt.step()
    train_l = loss(labels, net(features))
    print(epoch, train_l.mean().item())
""",
            settings={"imported": (("d2l.linreg", Returns("linreg", False, path="d2l.py")),
                                  ("d2l.squared_loss", Returns("squared_loss", False, path="d2l.py", through=((0, "y_hat"),))))},
            note="the summary of another file's loss says what becomes of the graph given to `y_hat`; this call gives its graph to `y`, of which it says nothing: handed to what the analysis cannot see",
        ),
        Valid(
            """
import torch
from torch import nn


def get_params():
    W_xh = nn.Parameter(torch.randn(4, 8) * 0.1)
    W_hh = nn.Parameter(torch.randn(8, 8) * 0.1)
    W_hq = nn.Parameter(torch.randn(8, 4) * 0.1)
    return nn.ParameterList([W_xh, W_hh, W_hq])


def rnn(inputs, state, params):
    W_xh, W_hh, W_hq = params
    H, = state
    outputs = []
    for X in inputs:
        H = torch.tanh(X @ W_xh + H @ W_hh)
        outputs.append(H @ W_hq)
    return outputs, (H,)


def predict(first, num_chars, params):
    state = (torch.zeros(1, 8),)
    output = [first]
    for t in range(num_chars):
        X = [nn.functional.one_hot(torch.tensor([output[-1]]), 4).float()]
        Y, state = rnn(X, state, params)
        output.append(int(Y[0].argmax(dim=1).item()))
    return output


params = get_params()
print(predict(0, 5, params))
""",
            note="an RNN over an `nn.ParameterList` that nothing trains (no item's gradient is read, no optimizer): a demonstration of the untrained model, as a smoke test is",
        ),
        Valid(
            """
import torch
from torch import nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 8)
        self.heat = nn.Linear(8, 2)
        self.boxes = nn.Linear(8, 4)

    def forward(self, x):
        feat = torch.relu(self.backbone(x))
        return self.heat(feat), self.boxes(feat)


def detect(model, image):
    heat, box = run(model, image)
    return heat.argmax(-1).tolist(), box.cpu().tolist()


@torch.no_grad()
def run(model, image):
    heat, box = model(image)
    return heat, box
""",
            note="the same helper under `@torch.no_grad()`",
            runtime="outs = []\nmodel = Detector()\nmodel.register_forward_hook(lambda m, i, o: outs.append(o))\n"
            "detect(model, torch.randn(3, 4))\nassert not outs[0][1].requires_grad",
        ),
        Valid(
            """
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)

    def encode(self, x):
        return self.enc(x)

    def decode(self, z):
        return self.dec(z)


@torch.no_grad()
def reconstruct(ae, x):
    z = encode_with(ae, x)
    return ae.decode(z).tolist()


def encode_with(ae, x):
    return ae.encode(x)
""",
            note="the same reconstruction under `@torch.no_grad()`",
            runtime="outs = []\nae = AutoEncoder()\nae.enc.register_forward_hook(lambda m, i, o: outs.append(o))\n"
            "reconstruct(ae, torch.randn(2, 8))\nassert not outs[0].requires_grad",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
from torch import nn


def accuracy(output, target):
    _, pred = output.topk(1, 1)
    correct = pred.t().eq(target.view(1, -1))
    return correct.float().sum().item() * 100.0 / target.size(0)


def validate(model, loader):
    model.eval()
    scores = []
    for images, target in loader:
        output = model(images)
        scores.append(accuracy(output, target))
    return sum(scores) / len(scores)
""",
            range=(16, 17, 16, 30),
            message="`model(images)` runs with grad enabled after `.eval()` on line 13 and its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients)",
            severity=Severity.WARNING,
            fixes=('\nimport torch\nfrom torch import nn\n\n\ndef accuracy(output, target):\n    _, pred = output.topk(1, 1)\n    correct = pred.t().eq(target.view(1, -1))\n    return correct.float().sum().item() * 100.0 / target.size(0)\n\n\ndef validate(model, loader):\n    model.eval()\n    scores = []\n    with torch.no_grad():\n        for images, target in loader:\n            output = model(images)\n            scores.append(accuracy(output, target))\n    return sum(scores) / len(scores)\n',),
            note="issue 29/33 (AlwaysBeDreaming-DFCIL#9, corpus b35; the ImageNet example's accuracy helper): `target.size(0)` of a target nothing types is a size whatever it is - the helper returns a number, so the outputs end in its `.topk()` and `.item()` (it was taken for anything, carrying the outputs' graph back to the caller)",
            runtime='built = []\nmodel = nn.Linear(4, 3)\nmodel.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nscore = validate(model, [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)])\nassert built == [True, True] and isinstance(score, float)',
        ),
        Invalid(
            """
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)

    def encode(self, x):
        return self.enc(x)

    def decode(self, z):
        return self.dec(z)


def reconstruct(ae, x):
    z = encode_with(ae, x)
    return ae.decode(z).tolist()


def encode_with(ae, x):
    return ae.encode(x)
""",
            range=(20, 8, 20, 26),
            message="`encode_with(ae, x)` runs with grad enabled and its outputs reach only `.tolist()` (line 21), never a "
            "`.backward()`: autograd records the graph and keeps its activations for nothing; so does 1 more forward pass in the same block",
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass AutoEncoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.enc = nn.Linear(8, 4)\n        self.dec = nn.Linear(4, 8)\n\n    def encode(self, x):\n        return self.enc(x)\n\n    def decode(self, z):\n        return self.dec(z)\n\n\n@torch.no_grad()\ndef reconstruct(ae, x):\n    z = encode_with(ae, x)\n    return ae.decode(z).tolist()\n\n\ndef encode_with(ae, x):\n    return ae.encode(x)\n',),
            runtime="outs = []\nae = AutoEncoder()\nae.enc.register_forward_hook(lambda m, i, o: outs.append(o))\n"
            "reconstruct(ae, torch.randn(2, 8))\nassert has_graph(outs[0]) and activations_alive(outs[0])",
            note="opensora's VAE with its `encode` call in a helper defined after its caller (issue 33's extract variants): "
                 "`ae` is an `AutoEncoder` by the two methods only it defines, `.decode` used here and `.encode` by the "
                 "helper it is passed to (evidence through helpers)",
        ),
        Invalid(
            """
import torch
from torch import nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 8)
        self.heat = nn.Linear(8, 2)
        self.boxes = nn.Linear(8, 4)

    def forward(self, x):
        feat = torch.relu(self.backbone(x))
        return self.heat(feat), self.boxes(feat)


def detect(model, image):
    heat, box = run(model, image)
    return heat.argmax(-1).tolist(), box.cpu().tolist()


def run(model, image):
    heat, box = model(image)
    return heat, box
""",
            range=(19, 16, 19, 33),
            message="`run(model, image)` runs with grad enabled and its outputs reach only `.argmax()` and `.tolist()` (line 20), "
            "never a `.backward()`: autograd records the graph and keeps its activations for nothing",
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Detector(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.backbone = nn.Linear(4, 8)\n        self.heat = nn.Linear(8, 2)\n        self.boxes = nn.Linear(8, 4)\n\n    def forward(self, x):\n        feat = torch.relu(self.backbone(x))\n        return self.heat(feat), self.boxes(feat)\n\n\n@torch.no_grad()\ndef detect(model, image):\n    heat, box = run(model, image)\n    return heat.argmax(-1).tolist(), box.cpu().tolist()\n\n\ndef run(model, image):\n    heat, box = model(image)\n    return heat, box\n',),
            runtime="outs = []\nmodel = Detector()\nmodel.register_forward_hook(lambda m, i, o: outs.append(o))\n"
            "detect(model, torch.randn(3, 4))\nassert has_graph(outs[0][1]) and activations_alive(outs[0][1])",
            note="the model's call moved into a helper defined after its caller (issue 33's extract variants): `model` "
                 "is called as `Detector.forward()` returns, its two results unpacked by `run()` and used as a tensor "
                 "(`box.cpu()`) by its caller - evidence through the helper that hands them back",
        ),
        Invalid(
            """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [nn.Linear(dims[d], dims[d + 1])]

    def predict(self, x):
        h = x
        goodness = []
        for layer in self.layers:
            h = layer(h).relu()
            goodness = goodness + [h.pow(2).mean(1)]
        return sum(goodness).argmax()


net = Net([4, 8, 8])
label = net.predict(torch.randn(5, 4))
""",
            range=(17, 16, 17, 24),
            message="`layer(h)` runs with grad enabled and its outputs reach only `.argmax()` (line 19), never a "
            "`.backward()`: autograd records the graph and keeps its activations for nothing",
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self, dims):\n        super().__init__()\n        self.layers = []\n        for d in range(len(dims) - 1):\n            self.layers = self.layers + [nn.Linear(dims[d], dims[d + 1])]\n\n    @torch.no_grad()\n    def predict(self, x):\n        h = x\n        goodness = []\n        for layer in self.layers:\n            h = layer(h).relu()\n            goodness = goodness + [h.pow(2).mean(1)]\n        return sum(goodness).argmax()\n\n\nnet = Net([4, 8, 8])\nlabel = net.predict(torch.randn(5, 4))\n',),
            runtime="outs = []\nnet.layers[-1].register_forward_hook(lambda m, i, o: outs.append(o))\n"
            "net.predict(torch.randn(5, 4))\nassert has_graph(outs[0]) and activations_alive(outs[0])",
            note="pytorch/examples mnist_forward_forward: the layers are a list grown by concatenation "
            "(`self.layers = self.layers + [...]` after `self.layers = []`): an empty list holds no element to disagree",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
model.eval()  # Turn off gradients
correct = 0
for x, y in [(torch.randn(5, 4), torch.randint(0, 2, (5,))) for _ in range(2)]:
    logits = model(x)
    correct += (logits.argmax(1) == y).sum().item()
""",
            range=(9, 13, 9, 21),
            message="`model(x)` runs with grad enabled after `.eval()` on line 6 and its output never reaches a "
            "`.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not "
            "disable gradients)",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
                "model.eval()  # Turn off gradients\ncorrect = 0\nwith torch.no_grad():\n"
                "    for x, y in [(torch.randn(5, 4), torch.randint(0, 2, (5,))) for _ in range(2)]:\n"
                "        logits = model(x)\n        correct += (logits.argmax(1) == y).sum().item()\n",
            ),
            runtime="assert has_graph(logits) and activations_alive(logits)",
            note="the comment says what eval() does not do",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def validate(network, batches):
    total = 0.0
    for inputs, labels in batches:
        out = network(inputs)
        total += F.cross_entropy(out, labels).item()
    return total / len(batches)


net = nn.Linear(4, 3)
score = validate(net, [(torch.randn(6, 4), torch.randint(0, 3, (6,)))])
""",
            range=(10, 14, 10, 29),
            message='`network(inputs)` runs with grad enabled and its outputs reach only `.item()` (line 11), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n@torch.no_grad()\ndef validate(network, batches):\n    total = 0.0\n    for inputs, labels in batches:\n        out = network(inputs)\n        total += F.cross_entropy(out, labels).item()\n    return total / len(batches)\n\n\nnet = nn.Linear(4, 3)\nscore = validate(net, [(torch.randn(6, 4), torch.randint(0, 3, (6,)))])\n',),
            runtime="assert net(torch.randn(1, 4)).requires_grad",
            note="a validate() function; model from the caller",
        ),
        Invalid(
            """
from torch import nn, randn


class Predictor:
    def __init__(self, model):
        self.model = model

    def predict(self, batch):
        return self.model(batch).argmax(1)


labels = Predictor(nn.Linear(4, 2)).predict(randn(3, 4))
""",
            range=(10, 15, 10, 32),
            message='`self.model(batch)` runs with grad enabled and its outputs reach only `.argmax()` (line 10), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn, randn\n\n\nclass Predictor:\n    def __init__(self, model):\n        self.model = model\n\n    @torch.no_grad()\n    def predict(self, batch):\n        return self.model(batch).argmax(1)\n\n\nlabels = Predictor(nn.Linear(4, 2)).predict(randn(3, 4))\n',),
            runtime="assert Predictor(nn.Linear(4, 2)).model(randn(1, 4)).requires_grad",
            note="a predict() method of a wrapper class; the fix adds `import torch`",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

classifier = nn.Linear(5, 3)
val_batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]
classifier.eval()
batch_losses = [F.cross_entropy(classifier(feats), tags) for feats, tags in val_batches]
""",
            range=(9, 32, 9, 49),
            message="`classifier(feats)` runs with grad enabled after `.eval()` on line 8 and its output never "
            "reaches a `.backward()`: autograd records the graph and keeps its activations for nothing "
            "(`eval()` does not disable gradients)",
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
                "classifier = nn.Linear(5, 3)\n"
                "val_batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]\n"
                "classifier.eval()\nwith torch.no_grad():\n"
                "    batch_losses = [F.cross_entropy(classifier(feats), tags) for feats, tags in val_batches]\n",
            ),
            runtime="assert has_graph(batch_losses[0]) and activations_alive(batch_losses[0])",
            note="a list comprehension at module level, with `F.cross_entropy`",
        ),
        Invalid(
            """
import torch
from torch import nn

policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
policy.eval()
obs = torch.randn(1, 4)
steps = 0
while steps < 5:
    action_logits = policy(obs)
    action = action_logits.argmax(-1)
    obs = torch.randn(1, 4)
    steps += 1
""",
            range=(10, 20, 10, 31),
            message="`policy(obs)` runs with grad enabled after `.eval()` on line 6 and its output never reaches a "
            "`.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does "
            "not disable gradients)",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n"
                "policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))\npolicy.eval()\n"
                "obs = torch.randn(1, 4)\nsteps = 0\nwith torch.no_grad():\n    while steps < 5:\n"
                "        action_logits = policy(obs)\n        action = action_logits.argmax(-1)\n"
                "        obs = torch.randn(1, 4)\n        steps += 1\n",
            ),
            runtime="assert has_graph(action_logits) and activations_alive(action_logits)",
            note="a policy rollout in a `while` loop with an `nn.Sequential` model",
        ),
        Invalid(
            """
import torch
from torch import nn

ranker = nn.Linear(4, 1)
ranker.eval()
best = {}
for query_id in range(2):
    for cand in [torch.randn(3, 4) for _ in range(2)]:
        relevance = ranker(cand).squeeze(-1)
        best[query_id] = relevance.max().item()
""",
            range=(10, 20, 10, 32),
            message="`ranker(cand)` runs with grad enabled after `.eval()` on line 6 and its output never reaches a "
            "`.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does "
            "not disable gradients)",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nranker = nn.Linear(4, 1)\nranker.eval()\nbest = {}\n"
                "with torch.no_grad():\n    for query_id in range(2):\n"
                "        for cand in [torch.randn(3, 4) for _ in range(2)]:\n"
                "            relevance = ranker(cand).squeeze(-1)\n"
                "            best[query_id] = relevance.max().item()\n",
            ),
            runtime="assert has_graph(relevance) and activations_alive(relevance)",
            note="nested loops; the fix wraps the outer one",
        ),
        Invalid(
            """
import torch
from torch import nn

encoder = nn.Linear(4, 8)
head = nn.Linear(8, 2)
encoder.eval()
head.eval()
scores = []
for x in [torch.randn(5, 4) for _ in range(3)]:
    features = encoder(x)
    logits = head(features)
    scores.append(logits.softmax(1).max().item())
""",
            range=(11, 15, 11, 25),
            message='`encoder(x)` runs with grad enabled after `.eval()` on line 7 and its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients); so does 1 more forward pass in the same block',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\nencoder = nn.Linear(4, 8)\nhead = nn.Linear(8, 2)\nencoder.eval()\nhead.eval()\nscores = []\nwith torch.no_grad():\n    for x in [torch.randn(5, 4) for _ in range(3)]:\n        features = encoder(x)\n        logits = head(features)\n        scores.append(logits.softmax(1).max().item())\n',
            ),
            runtime='assert has_graph(logits)',
            note='two models, one block: one finding, one fix',
        ),
        Invalid(
            """
import torch
from torch import nn


def load_model():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return model


model = load_model()
model.load_state_dict(model.state_dict())
predictions = []
for batch in [torch.randn(3, 4) for _ in range(2)]:
    logits = model(batch)
    predictions.append(logits.argmax(1))
""",
            range=(15, 13, 15, 25),
            message='`model(batch)` runs with grad enabled in a file that never trains (no `.backward()`, no optimizer `step()`): autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef load_model():\n    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n    return model\n\n\nmodel = load_model()\nmodel.load_state_dict(model.state_dict())\npredictions = []\nwith torch.no_grad():\n    for batch in [torch.randn(3, 4) for _ in range(2)]:\n        logits = model(batch)\n        predictions.append(logits.argmax(1))\n',
            ),
            runtime='assert has_graph(logits)',
            note='an inference script: weights loaded, no backward or optimizer step anywhere in the file',
        ),
        Invalid(
            """
import torch
from torch import nn


def extract_embeddings(model, batches):
    model.eval()
    embeddings = []
    for batch in batches:
        embeddings.append(model.encode(batch).cpu())
    return torch.cat(embeddings)


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 2)
        self.dec = nn.Linear(2, 4)

    def encode(self, x):
        return self.enc(x)

    def forward(self, x):
        return self.dec(self.encode(x))


codes = extract_embeddings(AutoEncoder(), [torch.randn(3, 4) for _ in range(2)])
""",
            range=(10, 26, 10, 45),
            message='`model.encode(batch)` runs with grad enabled after `.eval()` on line 7 and its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients)',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef extract_embeddings(model, batches):\n    model.eval()\n    embeddings = []\n    with torch.no_grad():\n        for batch in batches:\n            embeddings.append(model.encode(batch).cpu())\n    return torch.cat(embeddings)\n\n\nclass AutoEncoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.enc = nn.Linear(4, 2)\n        self.dec = nn.Linear(2, 4)\n\n    def encode(self, x):\n        return self.enc(x)\n\n    def forward(self, x):\n        return self.dec(self.encode(x))\n\n\ncodes = extract_embeddings(AutoEncoder(), [torch.randn(3, 4) for _ in range(2)])\n',
            ),
            runtime='assert codes.grad_fn is not None',
            note="a model's own method (encode) after .eval(): a forward pass too",
        ),
        Invalid(
            """
import torch
from torch import nn

encoder, decoder = nn.Linear(4, 2), nn.Linear(2, 4)
encoder.eval()
decoder.eval()
images = torch.randn(5, 4)
# reconstruct a batch for the report
codes = encoder(images)
recon = decoder(codes)
error = (recon - images).pow(2).mean().item()
for i in range(2):
    sample = decoder(torch.randn(1, 2))
""",
            range=(10, 8, 10, 23),
            message='`encoder(images)` runs with grad enabled after `.eval()` on line 6 and its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients); so do 2 more forward passes in the same block',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\nencoder, decoder = nn.Linear(4, 2), nn.Linear(2, 4)\nencoder.eval()\ndecoder.eval()\nimages = torch.randn(5, 4)\n# reconstruct a batch for the report\nwith torch.no_grad():\n    codes = encoder(images)\n    recon = decoder(codes)\n    error = (recon - images).pow(2).mean().item()\n    for i in range(2):\n        sample = decoder(torch.randn(1, 2))\n',
            ),
            runtime='assert has_graph(recon) and has_graph(sample)',
            note='forwards after .eval() in one suite (statements and a loop) are one block: one finding, one fix',
        ),
        Invalid(
            """
import torch
from torch import nn


class Scorer:
    def __init__(self):
        self.network = nn.Linear(4, 3)

    def predict(self, batch):
        self.network.eval()
        return self.network(batch).softmax(1).tolist()


def score_all(scorer, batches):
    return [scorer.predict(b) for b in batches]


def predict_task(scorer, batches):
    return score_all(scorer, batches)

""",
            range=(12, 15, 12, 34),
            message='`self.network(batch)` runs with grad enabled after `.eval()` on line 11 and its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients)',
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Scorer:\n    def __init__(self):\n        self.network = nn.Linear(4, 3)\n\n    def predict(self, batch):\n        self.network.eval()\n        with torch.no_grad():\n            return self.network(batch).softmax(1).tolist()\n\n\ndef score_all(scorer, batches):\n    return [scorer.predict(b) for b in batches]\n\n\ndef predict_task(scorer, batches):\n    return score_all(scorer, batches)\n\n',),
            runtime='assert Scorer().network(torch.randn(1, 4)).requires_grad',
            note='the same predict() reached only by name, with grad on',
        ),
        Invalid(
            """
import torch
from torch import nn

tagger = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
tagger.eval()


def tag_stream(chunks):
    tags = []
    for chunk in chunks:
        probs = tagger(chunk).sigmoid()
        tags.append(probs.argmax(-1).tolist())
    return tags
""",
            range=(12, 16, 12, 29),
            message='`tagger(chunk)` runs with grad enabled after `.eval()` on line 6 and its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients)',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\ntagger = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))\ntagger.eval()\n\n\ndef tag_stream(chunks):\n    tags = []\n    with torch.no_grad():\n        for chunk in chunks:\n            probs = tagger(chunk).sigmoid()\n            tags.append(probs.argmax(-1).tolist())\n    return tags\n',
            ),
            runtime='assert tagger(torch.randn(1, 8)).requires_grad',
            note='unilm#998: the model eval()-ed at the top level of a file that never trains; a function uses the global',
        ),
        Invalid(
            """
import torch
from torch import nn


class Embedder:
    def __init__(self, model):
        self.model_ = model.eval()

    def embed(self, batch):
        return self.model_(batch).numpy(force=True)
""",
            range=(11, 15, 11, 33),
            message='`self.model_(batch)` runs with grad enabled after `.eval()` on line 8 and its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients)',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Embedder:\n    def __init__(self, model):\n        self.model_ = model.eval()\n\n    def embed(self, batch):\n        with torch.no_grad():\n            return self.model_(batch).numpy(force=True)\n',
            ),
            runtime='assert Embedder(nn.Linear(3, 2)).model_(torch.randn(1, 3)).requires_grad',
            note='pyannote: the constructor keeps the model eval()-ed for good; the class never calls train() on it',
        ),
        Invalid(
            """
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.body(x))

    def predict(self, x):
        return self.head(self.body(x)).argmax(1)
""",
            range=(16, 25, 16, 37),
            message='`self.body(x)` runs with grad enabled and its outputs reach only `.argmax()` (line 16), never a `.backward()`: autograd records the graph and keeps its activations for nothing; so does 1 more forward pass in the same block',
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Classifier(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())\n        self.head = nn.Linear(8, 3)\n\n    def forward(self, x):\n        return self.head(self.body(x))\n\n    @torch.no_grad()\n    def predict(self, x):\n        return self.head(self.body(x)).argmax(1)\n',),
            runtime='c = Classifier()\nassert c.head(c.body(torch.randn(2, 4))).requires_grad',
            note="a model's own predict() that returns argmax: an evaluation, not part of a forward pass (pytorch/examples forward-forward Net.predict)",
        ),
        Invalid(
            """
import torch
from torch import nn


class Agent:
    def __init__(self, actor: nn.Module):
        self.actor = actor

    def select_action(self, state):
        state = torch.as_tensor(state, dtype=torch.float32).unsqueeze(0)
        return self.actor(state).cpu().data.numpy().flatten()
""",
            range=(12, 15, 12, 32),
            message='`self.actor(state)` runs with grad enabled in `select_action()`, which turns its results into NumPy, in a file that never trains: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Agent:\n    def __init__(self, actor: nn.Module):\n        self.actor = actor\n\n    @torch.no_grad()\n    def select_action(self, state):\n        state = torch.as_tensor(state, dtype=torch.float32).unsqueeze(0)\n        return self.actor(state).cpu().data.numpy().flatten()\n',),
            runtime='agent = Agent(nn.Linear(3, 2))\nassert agent.actor(torch.zeros(1, 3)).requires_grad',
            note="TD3/DDPG: an agent's select_action() that returns only NumPy builds the actor's graph for nothing",
        ),
        Invalid(
            """
import torch


class Evaluator:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def run(self, batches):
        total = 0.0
        for x, y in batches:
            out = self.model(x)
            total += self.criterion(out, y).item()
        return total / len(batches)
""",
            range=(13, 18, 13, 31),
            message='`self.model(x)` runs with grad enabled and its outputs reach only `.item()` (line 14), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\n\n\nclass Evaluator:\n    def __init__(self, model, criterion):\n        self.model = model\n        self.criterion = criterion\n\n    @torch.no_grad()\n    def run(self, batches):\n        total = 0.0\n        for x, y in batches:\n            out = self.model(x)\n            total += self.criterion(out, y).item()\n        return total / len(batches)\n',),
            runtime='from torch import nn\nevaluator = Evaluator(nn.Linear(3, 1), nn.MSELoss())\nouts = []\nevaluator.model.register_forward_hook(lambda m, i, o: outs.append(o))\nevaluator.run([(torch.randn(2, 3), torch.randn(2, 1))])\nassert has_graph(outs[0]) and activations_alive(outs[0])',
            note='regression (MTN): a method of an `Evaluator`, whose model is known by what takes its output - the criterion, as a prediction',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 4, 3, padding=1)
        self.heatmap = nn.Conv2d(4, 1, 1)
        self.box = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        x = torch.relu(self.backbone(x))
        return self.heatmap(x).sigmoid(), self.box(x)


def detect(net, image):
    heatmap, box = net(torch.from_numpy(image)[None])
    peak = heatmap.flatten().argmax().item()
    return box.flatten(2)[0, :, peak].data.numpy()
""",
            range=(20, 19, 20, 53),
            message="`net(torch.from_numpy(image)[None])` runs with grad enabled in `detect()`, which turns its results into NumPy, in a file that never trains: autograd records the graph and keeps its activations for nothing",
            fixes=(
                '\nimport numpy as np\nimport torch\nfrom torch import nn\n\n\nclass Detector(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.backbone = nn.Conv2d(3, 4, 3, padding=1)\n        self.heatmap = nn.Conv2d(4, 1, 1)\n        self.box = nn.Conv2d(4, 4, 1)\n\n    def forward(self, x):\n        x = torch.relu(self.backbone(x))\n        return self.heatmap(x).sigmoid(), self.box(x)\n\n\n@torch.no_grad()\ndef detect(net, image):\n    heatmap, box = net(torch.from_numpy(image)[None])\n    peak = heatmap.flatten().argmax().item()\n    return box.flatten(2)[0, :, peak].data.numpy()\n',
            ),
            runtime="heatmap, box = Detector()(torch.randn(1, 3, 8, 8))\nassert has_graph(box) and activations_alive(box)",
            note="DBFace's detect(): the model is a parameter, known as the file's `Detector` because its results are unpacked as forward returns them (`heatmap`, `box`); the function turns them into NumPy in a file that never trains",
        ),
        Invalid(
            """
import torch
from torch import nn
from torch.distributions import Categorical


class Memory:
    def __init__(self):
        self.logprobs = []

    def clear(self):
        del self.logprobs[:]


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=-1))

    def act(self, state, memory):
        dist = Categorical(self.actor(state))
        action = dist.sample()
        memory.logprobs.append(dist.log_prob(action))
        return action.item()


def old_logprobs(memory):
    return torch.stack(memory.logprobs).detach()
""",
            range=(21, 27, 21, 44),
            message='`self.actor(state)` runs with grad enabled and its outputs reach only `.sample()` and `memory.logprobs` read only `.detach()`-ed (lines 22, 23), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\nfrom torch.distributions import Categorical\n\n\nclass Memory:\n    def __init__(self):\n        self.logprobs = []\n\n    def clear(self):\n        del self.logprobs[:]\n\n\nclass Policy(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.actor = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=-1))\n\n    @torch.no_grad()\n    def act(self, state, memory):\n        dist = Categorical(self.actor(state))\n        action = dist.sample()\n        memory.logprobs.append(dist.log_prob(action))\n        return action.item()\n\n\ndef old_logprobs(memory):\n    return torch.stack(memory.logprobs).detach()\n',),
            runtime="policy, memory = Policy(), Memory()\nfor _ in range(3):\n    policy.act(torch.randn(4), memory)\nassert all(has_graph(lp) for lp in memory.logprobs) and activations_alive(memory.logprobs[0])",
            note="PPO-PyTorch's act(): the log-probabilities it keeps in the memory are only ever read `.detach()`-ed by the update, so every kept graph trains nothing and holds its activations until the memory is cleared",
        ),
        Invalid(
            """
import torch
from torch import nn

tagger = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
tagger.eval()


def fine_tune(batches, optimizer):
    tagger.train()
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.cross_entropy(tagger(x), y).backward()
        optimizer.step()


def tag_stream(chunks):
    tags = []
    for chunk in chunks:
        probs = tagger(chunk).sigmoid()
        tags.append(probs.argmax(-1).tolist())
    return tags
""",
            range=(20, 16, 20, 29),
            message='`tagger(chunk)` runs with grad enabled and its outputs reach only `.argmax()` (line 21), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\ntagger = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))\ntagger.eval()\n\n\ndef fine_tune(batches, optimizer):\n    tagger.train()\n    for x, y in batches:\n        optimizer.zero_grad()\n        nn.functional.cross_entropy(tagger(x), y).backward()\n        optimizer.step()\n\n\n@torch.no_grad()\ndef tag_stream(chunks):\n    tags = []\n    for chunk in chunks:\n        probs = tagger(chunk).sigmoid()\n        tags.append(probs.argmax(-1).tolist())\n    return tags\n',
            ),
            note='the file fine-tunes the global model, so the top-level `.eval()` proves nothing in `tag_stream()`; what does is where the outputs go: only to `argmax`, in a function that never trains',
            runtime='built = []\ntagger.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nassert len(tag_stream([torch.randn(2, 8)])) == 1 and built == [True]',
        ),
        Invalid(
            """
import torch
from torch import nn


def run_model(model, batch):
    return model(batch)


def predict(model, batches):
    model.eval()
    return [run_model(model, batch).argmax(dim=-1) for batch in batches]
""",
            range=(7, 11, 7, 23),
            message="`model(batch)` runs with grad enabled after `.eval()` on line 11 and its output never reaches a "
            "`.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does not "
            "disable gradients)",
            fixes=((
                '\n'
                'import torch\n'
                'from torch import nn\n'
                '\n'
                '\n'
                'def run_model(model, batch):\n'
                '    with torch.no_grad():\n'
                '        return model(batch)\n'
                '\n'
                '\n'
                'def predict(model, batches):\n'
                '    model.eval()\n'
                '    return [run_model(model, batch).argmax(dim=-1) for batch in batches]\n'
            ),),
            note="eval mode travels with the module: the helper its caller hands it to runs it in eval mode",
            runtime="model = nn.Linear(4, 3)\npredict(model, [torch.randn(2, 4)])\n"
                    "assert not model.training and has_graph(run_model(model, torch.randn(2, 4)))",
        ),
        Invalid(
            """
import torch


def tagged(value, tag):
    return value, tag


class Evaluator:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def run(self, data):
        total = 0.0
        for x, target in data:
            out = tagged(self.model(x), "logits")[0]
            total += self.criterion(out, target).item()
        return total / len(data)
""",
            range=(17, 25, 17, 38),
            message='`self.model(x)` runs with grad enabled and its outputs reach only `.item()` (line 18), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\n\n\ndef tagged(value, tag):\n    return value, tag\n\n\nclass Evaluator:\n    def __init__(self, model, criterion):\n        self.model = model\n        self.criterion = criterion\n\n    @torch.no_grad()\n    def run(self, data):\n        total = 0.0\n        for x, target in data:\n            out = tagged(self.model(x), "logits")[0]\n            total += self.criterion(out, target).item()\n        return total / len(data)\n',),
            note="the model's output handed through a helper's tuple (`tagged(...)[0]`) before the loss: still a prediction, never back-propagated",
            runtime="model, outs = torch.nn.Linear(5, 4), []\nmodel.register_forward_hook(lambda m, i, o: outs.append(o))\nEvaluator(model, torch.nn.CrossEntropyLoss()).run([(torch.randn(2, 5), torch.randint(0, 4, (2,)))])\nassert has_graph(outs[0])",
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 4, 3, padding=1)
        self.heatmap = nn.Conv2d(4, 1, 1)
        self.box = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        x = torch.relu(self.backbone(x))
        return self.heatmap(x).sigmoid(), self.box(x)


def detect(net, image):
    heatmap, box = tagged(net(torch.from_numpy(image)[None]), "raw")[0]
    peak = heatmap.flatten().argmax().item()
    return box.flatten(2)[0, :, peak].data.numpy()
""",
            range=(24, 26, 24, 60),
            message="`net(torch.from_numpy(image)[None])` runs with grad enabled in `detect()`, which turns "
            "its results into NumPy, in a file that never trains: autograd records the graph and keeps "
            "its activations for nothing",
            fixes=(
                "\nimport numpy as np\nimport torch\nfrom torch import nn\n\n\ndef tagged(value, tag):\n"
                "    return value, tag\n\n\nclass Detector(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.backbone = nn.Conv2d(3, 4, 3, padding=1)\n"
                "        self.heatmap = nn.Conv2d(4, 1, 1)\n        self.box = nn.Conv2d(4, 4, 1)\n\n"
                "    def forward(self, x):\n        x = torch.relu(self.backbone(x))\n"
                "        return self.heatmap(x).sigmoid(), self.box(x)\n\n\n@torch.no_grad()\n"
                "def detect(net, image):\n"
                '    heatmap, box = tagged(net(torch.from_numpy(image)[None]), "raw")[0]\n'
                "    peak = heatmap.flatten().argmax().item()\n"
                "    return box.flatten(2)[0, :, peak].data.numpy()\n",
            ),
            note="DBFace's detect() with the model's results handed through a helper's tuple before they are unpacked: `net` is still known as the file's `Detector`",
            runtime="heatmap, box = Detector()(torch.randn(1, 3, 8, 8))\nassert has_graph(box) and activations_alive(box)",
        ),
        Invalid(
            """
import torch
from torch import nn


def fit(net, score_fn, batches, opt, held_x, held_y):
    for x, y in batches:
        opt.zero_grad()
        err = score_fn(net(x), y)
        err.backward()
        opt.step()
    held = score_fn(net(held_x), held_y)
    print(f"held-out: {held.item():.3f}")
""",
            range=(12, 20, 12, 31),
            message='`net(held_x)` runs with grad enabled and its outputs reach only `.item()` (line 13), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef fit(net, score_fn, batches, opt, held_x, held_y):\n    for x, y in batches:\n        opt.zero_grad()\n        err = score_fn(net(x), y)\n        err.backward()\n        opt.step()\n    with torch.no_grad():\n        held = score_fn(net(held_x), held_y)\n    print(f"held-out: {held.item():.3f}")\n',
            ),
            note='`score_fn` is a loss by what the code does with it (given a prediction and a target; its result back-propagated), whatever its name: the held-out loss after training reaches only `.item()`',
            runtime='net = nn.Linear(3, 1)\nbuilt = []\nnet.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nfit(net, nn.functional.mse_loss, [(torch.randn(4, 3), torch.randn(4, 1))], torch.optim.SGD(net.parameters(), lr=0.1),\n    torch.randn(4, 3), torch.randn(4, 1))\nassert built == [True, True]',
        ),
        Invalid(
            """
import torch

W = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def net(X):
    return X @ W + b


X = torch.randn(20, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]])
for _ in range(5):
    loss = ((net(X) - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        W -= 0.1 * W.grad
        b -= 0.1 * b.grad
        W.grad.zero_()
        b.grad.zero_()

pred = net(torch.ones(1, 3))
print("prediction:", pred.item())
""",
            range=(23, 7, 23, 28),
            message='`net(torch.ones(1, 3))` runs with grad enabled and its outputs reach only `.item()` (line 24), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\n\nW = torch.randn(3, 1, requires_grad=True)\nb = torch.zeros(1, requires_grad=True)\n\n\ndef net(X):\n    return X @ W + b\n\n\nX = torch.randn(20, 3)\ny = X @ torch.tensor([[1.0], [-2.0], [0.5]])\nfor _ in range(5):\n    loss = ((net(X) - y) ** 2).mean()\n    loss.backward()\n    with torch.no_grad():\n        W -= 0.1 * W.grad\n        b -= 0.1 * b.grad\n        W.grad.zero_()\n        b.grad.zero_()\n\nwith torch.no_grad():\n    pred = net(torch.ones(1, 3))\nprint("prediction:", pred.item())\n',
            ),
            note='a hand-written model: `net` computes from `W` and `b`, leaves that require grad and that the code trains by hand (it reads their `.grad`); the one-off prediction after training reaches only `.item()`',
            runtime='assert has_graph(pred)',
        ),
        Invalid(
            """
import torch

W = torch.randn(3, 1)
b = torch.zeros(1)
W.requires_grad_(True)
b.requires_grad_(True)


def net(X):
    return X @ W + b


def sgd(params, lr):
    for param in params:
        param.data -= lr * param.grad
        param.grad.data.zero_()


def train(net, X, y, params, lr):
    for _ in range(5):
        loss = ((net(X) - y) ** 2).mean()
        loss.backward()
        sgd(params, lr)


X = torch.randn(20, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]])
train(net, X, y, [W, b], 0.1)
pred = net(torch.ones(1, 3))
print("prediction:", pred.item())
""",
            range=(30, 7, 30, 28),
            message='`net(torch.ones(1, 3))` runs with grad enabled and its outputs reach only `.item()` (line 31), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\n\nW = torch.randn(3, 1)\nb = torch.zeros(1)\nW.requires_grad_(True)\nb.requires_grad_(True)\n\n\ndef net(X):\n    return X @ W + b\n\n\ndef sgd(params, lr):\n    for param in params:\n        param.data -= lr * param.grad\n        param.grad.data.zero_()\n\n\ndef train(net, X, y, params, lr):\n    for _ in range(5):\n        loss = ((net(X) - y) ** 2).mean()\n        loss.backward()\n        sgd(params, lr)\n\n\nX = torch.randn(20, 3)\ny = X @ torch.tensor([[1.0], [-2.0], [0.5]])\ntrain(net, X, y, [W, b], 0.1)\nwith torch.no_grad():\n    pred = net(torch.ones(1, 3))\nprint("prediction:", pred.item())\n',
            ),
            note="d2l's softmax regression from scratch: the file trains `W` and `b` through its own functions - `[W, b]` is given to `train()` for the parameter whose items `sgd()` updates by their `.grad` - so `net`, which computes from them, is a hand-written model; the prediction after training reaches only `.item()`",
            runtime='assert has_graph(pred)',
        ),
        Invalid(
            """
import torch

W = torch.randn(4, 3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)


def softmax(X):
    X_exp = X.exp()
    return X_exp / X_exp.sum(dim=1, keepdim=True)


def net(X):
    return softmax(X @ W + b)


print(softmax(torch.rand(2, 3)).sum(dim=1))
X, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
for _ in range(3):
    loss = -torch.log(net(X)[range(8), y]).mean()
    loss.backward()
    with torch.no_grad():
        W -= 0.1 * W.grad
        b -= 0.1 * b.grad
        W.grad.zero_()
        b.grad.zero_()

probs = net(X)
print(probs.argmax(dim=1))
""",
            range=(28, 8, 28, 14),
            message='`net(X)` runs with grad enabled and its outputs reach only `.argmax()` (line 29), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\n\nW = torch.randn(4, 3, requires_grad=True)\nb = torch.zeros(3, requires_grad=True)\n\n\ndef softmax(X):\n    X_exp = X.exp()\n    return X_exp / X_exp.sum(dim=1, keepdim=True)\n\n\ndef net(X):\n    return softmax(X @ W + b)\n\n\nprint(softmax(torch.rand(2, 3)).sum(dim=1))\nX, y = torch.randn(8, 4), torch.randint(0, 3, (8,))\nfor _ in range(3):\n    loss = -torch.log(net(X)[range(8), y]).mean()\n    loss.backward()\n    with torch.no_grad():\n        W -= 0.1 * W.grad\n        b -= 0.1 * b.grad\n        W.grad.zero_()\n        b.grad.zero_()\n\nwith torch.no_grad():\n    probs = net(X)\nprint(probs.argmax(dim=1))\n',
            ),
            note="d2l's softmax from scratch: `softmax()` is first shown on a plain tensor, then called by the hand-written model on a graph; what it returns is computed by torch operations from what it is given, so `net(X)` carries the graph whichever call came first, and the prediction reaches only `argmax`",
            runtime='assert has_graph(probs)',
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.rand(32, 1)
y = 5 * x + 7
for _ in range(100):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

predicted = model.forward(x).data.numpy()
print(predicted[:3])
""",
            range=(15, 12, 15, 28),
            message='`model.forward(x)` runs with grad enabled and its outputs reach only `.data` (line 15), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(1, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.rand(32, 1)\ny = 5 * x + 7\nfor _ in range(100):\n    optimizer.zero_grad()\n    loss = nn.functional.mse_loss(model(x), y)\n    loss.backward()\n    optimizer.step()\n\nwith torch.no_grad():\n    predicted = model.forward(x).data.numpy()\nprint(predicted[:3])\n',
            ),
            note="a tutorial's prediction after training through the layer's own `forward()`: `model.forward(x)` is the module's call (without its hooks), and its output reaches only `.data` for a plot",
            runtime='assert has_graph(model.forward(x))',
        ),
        Invalid(
            """
import torch
from torch import nn

W1 = nn.Parameter(torch.randn(4, 8) * 0.01)
b1 = nn.Parameter(torch.zeros(8))
W2 = nn.Parameter(torch.randn(8, 2) * 0.01)
b2 = nn.Parameter(torch.zeros(2))
params = [W1, b1, W2, b2]


def net(X):
    H = torch.relu(X @ W1 + b1)
    return H @ W2 + b2


def accuracy_on(batches, forward):
    hits, seen = 0.0, 0
    for X, y in batches:
        logits = forward(X)
        hits += float((logits.argmax(dim=1) == y).sum())
        seen += y.numel()
    return hits / seen


def train(forward, train_batches, test_batches, epochs):
    updater = torch.optim.SGD(params, lr=0.1)
    for epoch in range(epochs):
        for X, y in train_batches:
            loss = nn.functional.cross_entropy(forward(X), y)
            updater.zero_grad()
            loss.backward()
            updater.step()
        print(epoch, accuracy_on(test_batches, forward))


def main(train_batches, test_batches):
    train(net, train_batches, test_batches, epochs=2)
""",
            range=(20, 17, 20, 27),
            message='`forward(X)` runs with grad enabled and its outputs reach only `.argmax()` (line 21), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\nW1 = nn.Parameter(torch.randn(4, 8) * 0.01)\nb1 = nn.Parameter(torch.zeros(8))\nW2 = nn.Parameter(torch.randn(8, 2) * 0.01)\nb2 = nn.Parameter(torch.zeros(2))\nparams = [W1, b1, W2, b2]\n\n\ndef net(X):\n    H = torch.relu(X @ W1 + b1)\n    return H @ W2 + b2\n\n\n@torch.no_grad()\ndef accuracy_on(batches, forward):\n    hits, seen = 0.0, 0\n    for X, y in batches:\n        logits = forward(X)\n        hits += float((logits.argmax(dim=1) == y).sum())\n        seen += y.numel()\n    return hits / seen\n\n\ndef train(forward, train_batches, test_batches, epochs):\n    updater = torch.optim.SGD(params, lr=0.1)\n    for epoch in range(epochs):\n        for X, y in train_batches:\n            loss = nn.functional.cross_entropy(forward(X), y)\n            updater.zero_grad()\n            loss.backward()\n            updater.step()\n        print(epoch, accuracy_on(test_batches, forward))\n\n\ndef main(train_batches, test_batches):\n    train(net, train_batches, test_batches, epochs=2)\n',
            ),
            note="d2l's MLP from scratch: `net` computes from `W1`..`b2`, leaves the code lists for an optimizer (`params = [W1, b1, W2, b2]`, `torch.optim.SGD(params, ...)`); it reaches the accuracy helper as a parameter and runs on a loader's batch, which carries no graph it is known of: a forward pass whose outputs reach only `argmax`",
            runtime='main([(torch.randn(4, 4), torch.tensor([0, 1, 0, 1]))], [(torch.randn(3, 4), torch.tensor([0, 1, 1]))])\nlogged = []\naccuracy_on([(torch.randn(3, 4), torch.tensor([0, 1, 1]))], lambda X: logged.append(net(X)) or logged[-1])\nassert has_graph(logged[0])',
        ),
        Invalid(
            """
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 2)
        self.dec = nn.Linear(2, 6)

    def encode(self, x):
        return torch.tanh(self.enc(x))

    def decode(self, z):
        return self.dec(z)


def to_frames(x):
    x = x.detach().cpu()
    return (x.clamp(-1, 1) * 127.5 + 127.5).numpy()


def reconstruct(ae, batch):
    codes = ae.encode(batch)
    return to_frames(ae.decode(codes))


model = AutoEncoder()
outputs = []
model.enc.register_forward_hook(lambda m, i, o: outputs.append(o))
frames = reconstruct(model, torch.randn(4, 6))
""",
            range=(25, 12, 25, 28),
            message='`ae.encode(batch)` runs with grad enabled and its outputs reach only `.numpy()` (line 21), never a `.backward()`: autograd records the graph and keeps its activations for nothing; so does 1 more forward pass in the same block',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass AutoEncoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.enc = nn.Linear(6, 2)\n        self.dec = nn.Linear(2, 6)\n\n    def encode(self, x):\n        return torch.tanh(self.enc(x))\n\n    def decode(self, z):\n        return self.dec(z)\n\n\ndef to_frames(x):\n    x = x.detach().cpu()\n    return (x.clamp(-1, 1) * 127.5 + 127.5).numpy()\n\n\n@torch.no_grad()\ndef reconstruct(ae, batch):\n    codes = ae.encode(batch)\n    return to_frames(ae.decode(codes))\n\n\nmodel = AutoEncoder()\noutputs = []\nmodel.enc.register_forward_hook(lambda m, i, o: outputs.append(o))\nframes = reconstruct(model, torch.randn(4, 6))\n',
            ),
            note="a model's own encode()/decode() methods run it: their outputs, only turned into frames through a detaching helper, are the graph built for nothing",
            runtime='assert outputs[0].grad_fn is not None',
        ),
        Invalid(
            """
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self, vocab=7, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        states, _ = self.encoder(self.embed(tokens))
        return self.head(states)


def tag(wrapped, tokens):
    states, _ = wrapped.module.encoder(wrapped.module.embed(tokens))
    return wrapped.module.head(states).argmax(-1).tolist()
""",
            range=(19, 39, 19, 67),
            message='`wrapped.module.embed(tokens)` runs with grad enabled and its outputs reach only `.argmax()` (line 20), never a `.backward()`: autograd records the graph and keeps its activations for nothing; so do 2 more forward passes in the same block',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Tagger(nn.Module):\n    def __init__(self, vocab=7, dim=8):\n        super().__init__()\n        self.embed = nn.Embedding(vocab, dim)\n        self.encoder = nn.GRU(dim, dim, batch_first=True)\n        self.head = nn.Linear(dim, vocab)\n\n    def forward(self, tokens):\n        states, _ = self.encoder(self.embed(tokens))\n        return self.head(states)\n\n\n@torch.no_grad()\ndef tag(wrapped, tokens):\n    states, _ = wrapped.module.encoder(wrapped.module.embed(tokens))\n    return wrapped.module.head(states).argmax(-1).tolist()\n',
            ),
            note="nlp-tutorial's greedy decoder: the model reached through `DataParallel`'s `.module` is the file's `Tagger` (the only class whose `__init__` builds `embed`, `encoder` and `head`); its outputs end in `argmax`",
            runtime='wrapped = nn.DataParallel(Tagger())\nseen = []\nwrapped.module.head.register_forward_hook(lambda m, i, o: seen.append(o))\ntags = tag(wrapped, torch.randint(0, 7, (2, 5)))\nassert has_graph(seen[0]) and isinstance(tags, list)',
        ),
        Invalid(
            """
import random

import torch
import torch.nn.functional as F
from torch import nn


class Qnet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

    def sample_action(self, obs, epsilon):
        out = self.forward(obs)
        if random.random() < epsilon:
            return random.randint(0, 1)
        return out.argmax().item()
""",
            range=(19, 14, 19, 31),
            message='`self.forward(obs)` runs with grad enabled and its outputs reach only `.argmax()` (line 22), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport random\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Qnet(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc1 = nn.Linear(4, 16)\n        self.fc2 = nn.Linear(16, 2)\n\n    def forward(self, x):\n        return self.fc2(F.relu(self.fc1(x)))\n\n    @torch.no_grad()\n    def sample_action(self, obs, epsilon):\n        out = self.forward(obs)\n        if random.random() < epsilon:\n            return random.randint(0, 1)\n        return out.argmax().item()\n',),
            note="minimalRL's DQN: a model's own acting method that returns a number on every path - the epsilon branch's `random.randint(0, 1)` is a Python number, the greedy branch's `.item()` too - keeps nothing and returns no graph: an evaluation at every environment step",
            runtime='q = Qnet()\nbuilt = []\nq.fc2.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\na = q.sample_action(torch.randn(4), 0.0)\nassert built == [True] and isinstance(a, int)',
        ),
        Invalid(
            """
import torch
from torch import nn


class Hook:
    def after_epoch(self, runner):
        pass


class SavePreview(Hook):
    def __init__(self, noise):
        self.noise = noise
        self.previews = []

    def after_epoch(self, runner):
        preview = runner.generator(self.noise)
        self.previews.append(preview.detach().numpy())


class Runner:
    def __init__(self, generator, hooks):
        self.generator = generator
        self.hooks = hooks
        self.opt = torch.optim.Adam(generator.parameters(), lr=1e-3)

    def run(self, batches, epochs):
        for _ in range(epochs):
            for z, target in batches:
                loss = nn.functional.mse_loss(self.generator(z), target)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            for hook in self.hooks:
                hook.after_epoch(self)
""",
            range=(17, 18, 17, 46),
            message='`runner.generator(self.noise)` runs with grad enabled and its outputs reach only `.numpy()` (line 18), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Hook:\n    def after_epoch(self, runner):\n        pass\n\n\nclass SavePreview(Hook):\n    def __init__(self, noise):\n        self.noise = noise\n        self.previews = []\n\n    @torch.no_grad()\n    def after_epoch(self, runner):\n        preview = runner.generator(self.noise)\n        self.previews.append(preview.detach().numpy())\n\n\nclass Runner:\n    def __init__(self, generator, hooks):\n        self.generator = generator\n        self.hooks = hooks\n        self.opt = torch.optim.Adam(generator.parameters(), lr=1e-3)\n\n    def run(self, batches, epochs):\n        for _ in range(epochs):\n            for z, target in batches:\n                loss = nn.functional.mse_loss(self.generator(z), target)\n                self.opt.zero_grad()\n                loss.backward()\n                self.opt.step()\n            for hook in self.hooks:\n                hook.after_epoch(self)\n',
            ),
            note="a trainer's hook saving a preview of the generator every epoch (CycleGAN's sample translations): `hook.after_epoch(self)` can only run `SavePreview`'s body - the base class's `after_epoch` is a no-op - so `runner` is the `Runner`, whose `generator` it trains",
            runtime='gen = nn.Linear(3, 2)\npreview = SavePreview(torch.randn(1, 3))\nbuilt = []\ngen.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nRunner(gen, [preview]).run([(torch.randn(4, 3), torch.randn(4, 2))], 1)\nassert built == [True, True] and len(preview.previews) == 1',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
        self.decoder = nn.Linear(4, 8)

    def forward(self, x):
        return self.decoder(self.encoder(x))


def embed(net, batches):
    codes = []
    for x in batches:
        z = net.module.encoder(x)
        codes.append(z.detach().cpu().numpy())
    return np.concatenate(codes)
""",
            range=(20, 12, 20, 33),
            message='`net.module.encoder(x)` runs with grad enabled in `embed()`, which turns its results into NumPy, in a file that never trains: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport numpy as np\nimport torch\nfrom torch import nn\n\n\nclass AutoEncoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.encoder = nn.Sequential(nn.Linear(8, 4), nn.ReLU())\n        self.decoder = nn.Linear(4, 8)\n\n    def forward(self, x):\n        return self.decoder(self.encoder(x))\n\n\n@torch.no_grad()\ndef embed(net, batches):\n    codes = []\n    for x in batches:\n        z = net.module.encoder(x)\n        codes.append(z.detach().cpu().numpy())\n    return np.concatenate(codes)\n',
            ),
            note="DAFormer's t-SNE features: behind `.module`, where DataParallel keeps the wrapped model, one submodule the file's `AutoEncoder` builds (`encoder`) says the model is that class - elsewhere one common attribute name alone says nothing",
            runtime='net = nn.DataParallel(AutoEncoder())\nbuilt = []\nnet.module.encoder.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nembed(net, [torch.randn(2, 8)])\nassert built == [True]',
        ),
        Invalid(
            """
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self, vocab=7, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        states, _ = self.encoder(self.embed(tokens))
        return self.head(states)


def tag(tagger, tokens):
    states, _ = tagger.encoder(tagger.embed(tokens))
    best = tagger.head(states).max(dim=-1)[1]
    return best.tolist()
""",
            range=(19, 31, 19, 51),
            message='`tagger.embed(tokens)` runs with grad enabled and its outputs reach only `tagger.head(states).max(...)[1]` (line 20), never a `.backward()`: autograd records the graph and keeps its activations for nothing; so do 2 more forward passes in the same block',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Tagger(nn.Module):\n    def __init__(self, vocab=7, dim=8):\n        super().__init__()\n        self.embed = nn.Embedding(vocab, dim)\n        self.encoder = nn.GRU(dim, dim, batch_first=True)\n        self.head = nn.Linear(dim, vocab)\n\n    def forward(self, tokens):\n        states, _ = self.encoder(self.embed(tokens))\n        return self.head(states)\n\n\n@torch.no_grad()\ndef tag(tagger, tokens):\n    states, _ = tagger.encoder(tagger.embed(tokens))\n    best = tagger.head(states).max(dim=-1)[1]\n    return best.tolist()\n',
            ),
            note='a parameter whose members are submodules only `Tagger.__init__` builds is a `Tagger`; the indices item of `.max(dim=-1)` ends the graph as `.argmax()` does',
            runtime='tagger = Tagger()\nseen = []\ntagger.head.register_forward_hook(lambda m, i, o: seen.append(o))\ntags = tag(tagger, torch.randint(0, 7, (2, 5)))\nassert has_graph(seen[0]) and isinstance(tags, list)',
        ),
        Invalid(
            """
import torch
from skorch import NeuralNetClassifier
from torch import nn


class Module(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x):
        return self.net(x).softmax(-1)


X = torch.randn(64, 4)
y = torch.randint(0, 2, (64,))
clf = NeuralNetClassifier(Module, max_epochs=2, lr=0.1)
clf.fit(X, y)
module = Module()
module.load_state_dict(clf.module_.state_dict())
scores = module(X[:5])
print(scores.argmax(1))
""",
            range=(22, 9, 22, 22),
            message='`module(X[:5])` runs with grad enabled and its outputs reach only `.argmax()` (line 23), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\nfrom skorch import NeuralNetClassifier\nfrom torch import nn\n\n\nclass Module(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n\n    def forward(self, x):\n        return self.net(x).softmax(-1)\n\n\nX = torch.randn(64, 4)\ny = torch.randint(0, 2, (64,))\nclf = NeuralNetClassifier(Module, max_epochs=2, lr=0.1)\nclf.fit(X, y)\nmodule = Module()\nmodule.load_state_dict(clf.module_.state_dict())\nwith torch.no_grad():\n    scores = module(X[:5])\nprint(scores.argmax(1))\n',
            ),
            note="skorch's fit() trains the module (a framework's loop, no `.backward()` in the file): the message says what the outputs reach, never that the file does not train",
            runtime='assert has_graph(scores) and activations_alive(scores)',
        ),
        Invalid(
            """
import torch


def run_model(model, x):
    out = model(x)
    return out


def evaluate(model, criterion, batches):
    total = 0.0
    for x, y in batches:
        out = run_model(model, x)
        total += criterion(out, y).item()
    return total / len(batches)
""",
            range=(13, 14, 13, 33),
            message='`run_model(model, x)` runs with grad enabled and its outputs reach only `.item()` (line 14), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\n\n\ndef run_model(model, x):\n    out = model(x)\n    return out\n\n\n@torch.no_grad()\ndef evaluate(model, criterion, batches):\n    total = 0.0\n    for x, y in batches:\n        out = run_model(model, x)\n        total += criterion(out, y).item()\n    return total / len(batches)\n',),
            note='a helper of the file runs the model and returns its outputs: the evaluation function that calls it is where the forward runs with grad on',
            runtime='model = torch.nn.Linear(3, 2)\nseen = []\nmodel.register_forward_hook(lambda m, i, o: seen.append(o))\nevaluate(model, torch.nn.functional.cross_entropy, [(torch.randn(4, 3), torch.tensor([0, 1, 0, 1]))])\nassert has_graph(seen[0])',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch.autograd import Variable


def accuracy(net, batches):
    correct = 0
    for x, y in batches:
        x = Variable(x, volatile=True)
        out = net(x)
        correct += (out.argmax(1) == y).sum().item()
    return correct


def fit(net, batches, opt):
    for x, y in batches:
        loss = F.cross_entropy(net(Variable(x)), Variable(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            range=(11, 14, 11, 20),
            message="`net(x)` runs with grad enabled and its outputs reach only `.argmax()` (line 12), never a "
            "`.backward()`: autograd records the graph and keeps its activations for nothing (`volatile=True` on "
            "line 10 has done nothing since torch 0.4)",
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch.autograd import Variable\n\n\n"
                "def accuracy(net, batches):\n    correct = 0\n    with torch.no_grad():\n        for x, y in batches:\n"
                "            x = Variable(x, volatile=True)\n            out = net(x)\n"
                "            correct += (out.argmax(1) == y).sum().item()\n    return correct\n\n\n"
                "def fit(net, batches, opt):\n    for x, y in batches:\n"
                "        loss = F.cross_entropy(net(Variable(x)), Variable(y))\n        opt.zero_grad()\n"
                "        loss.backward()\n        opt.step()\n",
            ),
            runtime="net = torch.nn.Linear(4, 3)\nseen = []\nnet.register_forward_hook(lambda m, i, o: seen.append(o))\n"
            "accuracy(net, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))])\nassert has_graph(seen[0])",
            note="issue 29: old code's only no-grad sign, `Variable(x, volatile=True)`, only warns since torch 0.4; "
            "a callable given a volatile input is a model",
        ),
        Invalid(
            """
import torch
from torch.autograd import Variable


class Encoder:
    def __init__(self, net, device):
        self.net = net
        self.device = device

    def embed(self, images):
        images = Variable(images, volatile=True).to(self.device)
        return self.net(images)
""",
            range=(13, 15, 13, 31),
            message="`self.net(images)` runs with grad enabled although its input was made with `volatile=True` "
            "(line 12), which has done nothing since torch 0.4: autograd records the graph and keeps its "
            "activations for nothing",
            fixes=(
                "\nimport torch\nfrom torch.autograd import Variable\n\n\nclass Encoder:\n"
                "    def __init__(self, net, device):\n        self.net = net\n        self.device = device\n\n"
                "    def embed(self, images):\n        images = Variable(images, volatile=True).to(self.device)\n"
                "        with torch.no_grad():\n            return self.net(images)\n",
            ),
            runtime='out = Encoder(torch.nn.Linear(4, 2), "cpu").embed(torch.randn(3, 4))\nassert has_graph(out)',
            note="issue 29: returned to a caller out of sight, which before torch 0.4 could not back-propagate a "
            "volatile result; the fix is unsafe (that caller is not seen)",
        ),
        Invalid(
            """
import torch


def step2(aa, bb):
    aa.eval()
    kk = []
    for cc in bb:
        kk.append(aa(cc).softmax(dim=-1))
    return kk
""",
            range=(9, 18, 9, 24),
            message='`aa(cc)` runs with grad enabled after `.eval()` on line 6 and its output never reaches a `.backward()`: '
            'autograd records the graph and keeps its activations for nothing (`eval()` does not disable gradients)',
            fixes=(
                "\nimport torch\n\n\ndef step2(aa, bb):\n    aa.eval()\n    kk = []\n    with torch.no_grad():\n"
                "        for cc in bb:\n            kk.append(aa(cc).softmax(dim=-1))\n    return kk\n",
            ),
            note="no name says it evaluates: after `.eval()`, each iteration's outputs are kept on top of the last's by a "
            "loop that never back-propagates - evaluation iterations, returned or not",
            runtime='net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))\n'
            'kept = step2(net, [torch.randn(2, 4) for _ in range(3)])\nassert all(activations_alive(k) for k in kept)',
        ),
        Invalid(
            """
import torch
from torch import nn


class C1(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.body(x))

    def step2(self, x):
        return self.head(self.body(x)).argmax(1)
""",
            range=(16, 25, 16, 37),
            message='`self.body(x)` runs with grad enabled and its outputs reach only `.argmax()` (line 16), never a '
            '`.backward()`: autograd records the graph and keeps its activations for nothing; so does 1 more forward '
            'pass in the same block',
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass C1(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())\n        self.head = nn.Linear(8, 3)\n\n    def forward(self, x):\n        return self.head(self.body(x))\n\n    @torch.no_grad()\n    def step2(self, x):\n        return self.head(self.body(x)).argmax(1)\n',),
            note="a model's own method, named for nothing, whose forward passes end in `.argmax()` and return no graph: "
            "an evaluation whatever it is called",
            runtime='m = C1()\nseen = []\nm.head.register_forward_hook(lambda mod, i, o: seen.append(o))\n'
            'm.step2(torch.randn(2, 4))\nassert has_graph(seen[0])',
        ),
        Invalid(
            """
import torch
from torch import nn

G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
opt = torch.optim.SGD(G.parameters(), lr=0.1)
for _ in range(2):
    loss = G(torch.randn(5, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

z = torch.randn(3, 4)
fake = G(z)
print(fake.detach().numpy())
""",
            range=(14, 7, 14, 11),
            message='`G(z)` runs with grad enabled and its outputs reach only `.numpy()` and `print()` (line 15), never a '
            '`.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\n\nG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))\nopt = torch.optim.SGD(G.parameters(), lr=0.1)\nfor _ in range(2):\n    loss = G(torch.randn(5, 4)).pow(2).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n\nz = torch.randn(3, 4)\nwith torch.no_grad():\n    fake = G(z)\nprint(fake.detach().numpy())\n',),
            note="a model the script built and then trained, sampled after the training loop for a look (keon's gan.py, "
            "a tutorial's prediction cell): not a smoke test of an untrained model, though built in the same scope",
            runtime="assert has_graph(fake) and activations_alive(fake)",
        ),
        Invalid(
            """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    loss = nn.functional.cross_entropy(net(torch.randn(5, 4)), torch.randint(0, 3, (5,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

outputs = net(torch.randn(4, 4))
_, predicted = torch.max(outputs, 1)
print(" ".join(str(int(p)) for p in predicted))
""",
            range=(13, 10, 13, 32),
            message="`net(torch.randn(4, 4))` runs with grad enabled and its outputs reach only the indices of "
            "`torch.max()` (line 14), never a `.backward()`: autograd records the graph and keeps its activations for nothing",
            fixes=('\nimport torch\nfrom torch import nn\n\nnet = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\nfor _ in range(2):\n    loss = nn.functional.cross_entropy(net(torch.randn(5, 4)), torch.randint(0, 3, (5,)))\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n\nwith torch.no_grad():\n    outputs = net(torch.randn(4, 4))\n_, predicted = torch.max(outputs, 1)\nprint(" ".join(str(int(p)) for p in predicted))\n',),
            note="the tutorial's prediction: `_, predicted = torch.max(outputs, 1)` keeps only the indices, the unpacked "
            "form of `outputs.max(1)[1]` - the graph ends there as at `.argmax()`",
            runtime="assert has_graph(outputs) and activations_alive(outputs)",
        ),
        Invalid(
            """
import io

import torch
from torch import nn

net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 3), torch.randn(8, 1))] * 3:
    opt.zero_grad()
    nn.functional.mse_loss(net(x), y).backward()
    opt.step()

prediction = net(torch.randn(4, 3))
buffer = io.BytesIO()
torch.save(prediction.data, buffer)
""",
            range=(14, 13, 14, 35),
            message='`net(torch.randn(4, 3))` runs with grad enabled and its outputs reach only `.data` (line 16), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport io\n\nimport torch\nfrom torch import nn\n\nnet = nn.Linear(3, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\nfor x, y in [(torch.randn(8, 3), torch.randn(8, 1))] * 3:\n    opt.zero_grad()\n    nn.functional.mse_loss(net(x), y).backward()\n    opt.step()\n\nwith torch.no_grad():\n    prediction = net(torch.randn(4, 3))\nbuffer = io.BytesIO()\ntorch.save(prediction.data, buffer)\n',
            ),
            note='a prediction after training read only through `.data` (the pre-0.4 way to look at values): nothing can back-propagate through it',
            runtime='assert has_graph(prediction) and activations_alive(prediction)',
        ),
        Invalid(
            """
import torch
from torch import nn

generator = nn.Sequential(nn.Linear(2, 4), nn.Tanh())
g_optimizer = torch.optim.Adam(generator.parameters())


def train_generator(optimizer, fake):
    optimizer.zero_grad()
    loss = (1 - fake).pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss.item()


for step in range(3):
    train_generator(g_optimizer, generator(torch.randn(5, 2)))

samples = generator(torch.randn(4, 2))
print(samples.tolist())
""",
            range=(20, 10, 20, 38),
            message='`generator(torch.randn(4, 2))` runs with grad enabled and its outputs reach only `.tolist()` (line 21), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\ngenerator = nn.Sequential(nn.Linear(2, 4), nn.Tanh())\ng_optimizer = torch.optim.Adam(generator.parameters())\n\n\ndef train_generator(optimizer, fake):\n    optimizer.zero_grad()\n    loss = (1 - fake).pow(2).mean()\n    loss.backward()\n    optimizer.step()\n    return loss.item()\n\n\nfor step in range(3):\n    train_generator(g_optimizer, generator(torch.randn(5, 2)))\n\nwith torch.no_grad():\n    samples = generator(torch.randn(4, 2))\nprint(samples.tolist())\n',
            ),
            note='the generator is trained by a function of the file handed its outputs (`train_generator(g_optimizer, generator(z))`): the sample after the loop is a use of the trained model, not a smoke test of an untrained one',
            runtime='assert has_graph(samples) and activations_alive(samples)',
        ),
        Invalid(
            """
import torch

features = torch.randn(20, 2)
labels = features @ torch.tensor([[2.0], [-3.4]]) + 4.2
w = torch.zeros(2, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):
    return torch.mm(X, w) + b


net = linreg
for epoch in range(3):
    l = ((net(features, w, b) - labels) ** 2).mean()
    l.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad.zero_()
    b.grad.zero_()
    train_l = net(features, w, b)
    print(epoch, ((train_l - labels) ** 2).mean().item())
""",
            range=(23, 14, 23, 33),
            message='`net(features, w, b)` runs with grad enabled and its outputs reach only `.item()` (line 24), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=(
                '\nimport torch\n\nfeatures = torch.randn(20, 2)\nlabels = features @ torch.tensor([[2.0], [-3.4]]) + 4.2\nw = torch.zeros(2, 1, requires_grad=True)\nb = torch.zeros(1, requires_grad=True)\n\n\ndef linreg(X, w, b):\n    return torch.mm(X, w) + b\n\n\nnet = linreg\nfor epoch in range(3):\n    l = ((net(features, w, b) - labels) ** 2).mean()\n    l.backward()\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n        b -= 0.1 * b.grad\n    w.grad.zero_()\n    b.grad.zero_()\n    with torch.no_grad():\n        train_l = net(features, w, b)\n    print(epoch, ((train_l - labels) ** 2).mean().item())\n',
            ),
            note="d2l's linear regression from scratch: `linreg(X, w, b)` is given the leaves the code trains (it reads `w.grad`), so it is a hand-written model; the per-epoch loss over the whole set is only printed",
            runtime='assert has_graph(train_l) and activations_alive(train_l)',
        ),
        Invalid(
            """
import torch
from torch import nn
from torch.distributions import Categorical


class C1(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(x).softmax(-1)

    def m1(self, state):
        dist = Categorical(self(torch.as_tensor(state, dtype=torch.float32)))
        return dist.sample().item()
""",
            range=(16, 27, 16, 76),
            message='`self(torch.as_tensor(state, dtype=...` runs with grad enabled and its outputs reach only `.sample()` (line 17), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\nfrom torch.distributions import Categorical\n\n\nclass C1(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.head = nn.Linear(4, 2)\n\n    def forward(self, x):\n        return self.head(x).softmax(-1)\n\n    @torch.no_grad()\n    def m1(self, state):\n        dist = Categorical(self(torch.as_tensor(state, dtype=torch.float32)))\n        return dist.sample().item()\n',),
            note="an agent's acting step, named for nothing: the policy's probabilities only reach a `Categorical` "
            "whose `sample()` carries no graph (sampling runs without grad), and nothing is kept",
            runtime="policy = C1()\nseen = []\npolicy.head.register_forward_hook(lambda m, i, o: seen.append(o))\n"
            "policy.m1([0.1, 0.2, 0.3, 0.4])\nassert has_graph(seen[0])",
        ),
        Invalid(
            """
import torch
from torch import nn


class VideoVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 2)
        self.dec = nn.Linear(2, 6)

    def encode(self, x):
        return self.enc(x)

    def decode(self, z):
        return self.dec(z)


def reconstruct(vae, frames):
    latents = vae.encode(frames)
    recon = vae.decode(latents)
    return (255 * recon.detach().clamp(0, 1)).numpy().astype("uint8")
""",
            range=(20, 14, 20, 32),
            message='`vae.encode(frames)` runs with grad enabled in `reconstruct()`, which turns its results into NumPy, in a file that never trains: autograd records the graph and keeps its activations for nothing; so does 1 more forward pass in the same block',
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass VideoVAE(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.enc = nn.Linear(6, 2)\n        self.dec = nn.Linear(2, 6)\n\n    def encode(self, x):\n        return self.enc(x)\n\n    def decode(self, z):\n        return self.dec(z)\n\n\n@torch.no_grad()\ndef reconstruct(vae, frames):\n    latents = vae.encode(frames)\n    recon = vae.decode(latents)\n    return (255 * recon.detach().clamp(0, 1)).numpy().astype("uint8")\n',),
            note="Open-Sora-Plan's reconstruction script: the parameter calls `encode()` and `decode()`, the "
            "interface of one nn.Module class of the file (no other class defines either), so it holds that model, "
            "whose outputs only become uint8 frames",
            runtime="vae = VideoVAE()\nseen = []\nvae.dec.register_forward_hook(lambda m, i, o: seen.append(o))\n"
            "reconstruct(vae, torch.rand(3, 6))\nassert has_graph(seen[0]) and activations_alive(seen[0])",
        ),
        Invalid(
            """
import torch
from torch import nn
from torch.distributions import Categorical


class C1(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)
        self.data = []

    def m1(self, x):
        return torch.softmax(self.fc(x), dim=-1)

    def m2(self):
        s = torch.stack([t[0] for t in self.data])
        loss = -torch.log(self.m1(s)).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.data = []


def f1(states):
    model = C1()
    for s in states:
        prob = model.m1(s)
        a = Categorical(prob).sample().item()
        model.data.append((s, a, prob[a].item()))
    model.m2()
""",
            range=(29, 15, 29, 26),
            message='`model.m1(s)` runs with grad enabled and its outputs reach only `.sample()` and `.item()` (lines 30, 31), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\nfrom torch.distributions import Categorical\n\n\nclass C1(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)\n        self.data = []\n\n    def m1(self, x):\n        return torch.softmax(self.fc(x), dim=-1)\n\n    def m2(self):\n        s = torch.stack([t[0] for t in self.data])\n        loss = -torch.log(self.m1(s)).mean()\n        self.opt.zero_grad()\n        loss.backward()\n        self.opt.step()\n        self.data = []\n\n\ndef f1(states):\n    model = C1()\n    with torch.no_grad():\n        for s in states:\n            prob = model.m1(s)\n            a = Categorical(prob).sample().item()\n            model.data.append((s, a, prob[a].item()))\n    model.m2()\n',),
            note="minimalRL's PPO rollout: the model the function builds is trained by a method of its own class "
            "(`m2` back-propagates), so the rollout's forward is no smoke test; its outputs only reach `sample()` "
            "and `.item()`",
            runtime="model = C1()\nseen = []\nmodel.fc.register_forward_hook(lambda m, i, o: seen.append(o))\n"
            "model.m1(torch.randn(4))\nassert has_graph(seen[0])\nf1([torch.randn(4) for _ in range(3)])",
        ),
        Invalid(
            """
import torch
from torch import nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)

    def act(self, state):
        m = Categorical(self.forward(state))
        action = m.sample()
        return action.item(), m.log_prob(action)


def watch(policy, env):
    state = env.reset()
    for _ in range(100):
        action, log_prob = policy.act(state)
        state, done = env.step(action)
        if done:
            break
""",
            range=(24, 27, 24, 44),
            message='`policy.act(state)` runs with grad enabled and of its outputs only those without a graph are read, so the graph never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\nfrom torch.distributions import Categorical\n\n\nclass Policy(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n        return torch.softmax(self.fc(x), dim=-1)\n\n    def act(self, state):\n        m = Categorical(self.forward(state))\n        action = m.sample()\n        return action.item(), m.log_prob(action)\n\n\n@torch.no_grad()\ndef watch(policy, env):\n    state = env.reset()\n    for _ in range(100):\n        action, log_prob = policy.act(state)\n        state, done = env.step(action)\n        if done:\n            break\n',),
            note="REINFORCE's notebook watching the trained agent: `act()` returns the action as a number and the log-probability with its graph; the code reads only the action, so the graph built at every step reaches no backward",
            runtime='class Env:\n    def reset(self):\n        return torch.randn(4)\n\n    def step(self, action):\n        return torch.randn(4), True\np = Policy()\nbuilt = []\np.fc.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nwatch(p, Env())\nassert built == [True]',
        ),
        Invalid(
            """
import torch
from torch import nn


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(8, 8)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(torch.relu(self.features(x)))


model = Student()
optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
for _ in range(10):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

pred = model(torch.randn(1, 8)).argmax(1).item()
print(pred)
""",
            range=(25, 7, 25, 31),
            message='`model(torch.randn(1, 8))` runs with grad enabled and its outputs reach only `.argmax()` (line 25), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Student(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.features = nn.Linear(8, 8)\n        self.fc = nn.Linear(8, 2)\n\n    def forward(self, x):\n        return self.fc(torch.relu(self.features(x)))\n\n\nmodel = Student()\noptimizer = torch.optim.SGD(model.fc.parameters(), lr=0.1)\nx, y = torch.randn(16, 8), torch.randint(0, 2, (16,))\nfor _ in range(10):\n    loss = nn.functional.cross_entropy(model(x), y)\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n\nwith torch.no_grad():\n    pred = model(torch.randn(1, 8)).argmax(1).item()\nprint(pred)\n',),
            note="one-shot-kill poisoning notebook: only the head's parameters go to the optimizer (`model.fc.parameters()`), which says the model the file built is trained - the final prediction is not a smoke test of an untrained model",
            runtime='built = []\nmodel.fc.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nmodel(torch.randn(1, 8)).argmax(1).item()\nassert built == [True]',
        ),
        Invalid(
            """
import torch
import torchvision


def classify(image):
    net = torchvision.models.resnet18(weights="IMAGENET1K_V1")
    return net(image).argmax(1).item()
""",
            range=(8, 11, 8, 21),
            message='`net(image)` runs with grad enabled and its outputs reach only `.argmax()` (line 8), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nimport torchvision\n\n\n@torch.no_grad()\ndef classify(image):\n    net = torchvision.models.resnet18(weights="IMAGENET1K_V1")\n    return net(image).argmax(1).item()\n',),
            note='a model built with trained weights (`weights=`, `pretrained=True`) and run once is a prediction, not the smoke test of a fresh model',
            runtime='import torchvision\nbuilt = []\nnet = torchvision.models.resnet18(weights=None)\nnet.fc.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nnet(torch.rand(1, 3, 64, 64)).argmax(1).item()\nassert built == [True]',
        ),
        Invalid(
            """
import torch
from torch.autograd import Variable


def extract(net, loader, use_gpu):
    feats = []
    for img in loader:
        if use_gpu:
            img = Variable(img, volatile=True).cuda()
        else:
            img = Variable(img, volatile=True)
        feats.append(net(img.unsqueeze(0)).data)
    return torch.cat(feats)
""",
            range=(13, 21, 13, 42),
            message='`net(img.unsqueeze(0))` runs with grad enabled and its outputs reach only `.data` (line 13), never a `.backward()`: autograd records the graph and keeps its activations for nothing (`volatile=True` on line 12 has done nothing since torch 0.4)',
            fixes=('\nimport torch\nfrom torch.autograd import Variable\n\n\ndef extract(net, loader, use_gpu):\n    feats = []\n    with torch.no_grad():\n        for img in loader:\n            if use_gpu:\n                img = Variable(img, volatile=True).cuda()\n            else:\n                img = Variable(img, volatile=True)\n            feats.append(net(img.unsqueeze(0)).data)\n    return torch.cat(feats)\n',),
            note="L1aoXingyu's feature extraction: the input is made `volatile=True` on both branches of the `if` (then `.cuda()`-ed or not) and reshaped with `.unsqueeze(0)`: still the volatile input, so `net` is a model whose forward builds a graph nobody wanted",
            runtime='class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(3, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n\nnet = Net()\nbuilt = []\nnet.fc.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\nextract(net, [torch.randn(3)], False)\nassert built == [True]',
        ),
        Invalid(
            """
import torch
from torch import nn


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.i2h = nn.Linear(6, 2)
        self.i2o = nn.Linear(6, 4)

    def forward(self, x, hidden):
        both = torch.cat((x, hidden), 1)
        return self.i2o(both), self.i2h(both)


rnn = CharRNN()
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)


def train_step(x, y):
    out, _ = rnn.forward(x, torch.zeros(1, 2))
    loss = nn.functional.mse_loss(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()


def generate(start, steps):
    hidden = torch.zeros(1, 2)
    x = start
    for _ in range(steps):
        out, hidden = rnn.forward(x, hidden.detach())
        print(out.data.argmax().item())
        x = out.data
""",
            range=(33, 22, 33, 53),
            message='`rnn.forward(x, hidden.detach())` runs with grad enabled and its outputs reach only `.data` (line 34), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass CharRNN(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.i2h = nn.Linear(6, 2)\n        self.i2o = nn.Linear(6, 4)\n\n    def forward(self, x, hidden):\n        both = torch.cat((x, hidden), 1)\n        return self.i2o(both), self.i2h(both)\n\n\nrnn = CharRNN()\nopt = torch.optim.SGD(rnn.parameters(), lr=0.1)\n\n\ndef train_step(x, y):\n    out, _ = rnn.forward(x, torch.zeros(1, 2))\n    loss = nn.functional.mse_loss(out, y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n\n\n@torch.no_grad()\ndef generate(start, steps):\n    hidden = torch.zeros(1, 2)\n    x = start\n    for _ in range(steps):\n        out, hidden = rnn.forward(x, hidden.detach())\n        print(out.data.argmax().item())\n        x = out.data\n',),
            note="Kind-PyTorch-Tutorial's char-RNN: `rnn.forward(x, h)` is `rnn(x, h)` - each item of the tuple it returns carries the call's graph, so the generation loop reading only `.data` is evaluation",
            runtime='built = []\nrnn.i2o.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\ngenerate(torch.randn(1, 4), 2)\nassert built == [True, True]',
        ),
        Invalid(
            """
import torch
from torch import nn


class Record:
    def __init__(self, **fields):
        self.fields = fields


def accuracy(model, batches):
    hits = 0
    for x, y in batches:
        logits = Record(out=model(x)).fields["out"]
        hits += int((logits.argmax(1) == y).sum())
    return hits


def train(model, batches, opt):
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return accuracy(model, batches)
""",
            range=(14, 28, 14, 36),
            message='`model(x)` runs with grad enabled and its outputs reach only `.argmax()` (line 15), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Record:\n    def __init__(self, **fields):\n        self.fields = fields\n\n\n@torch.no_grad()\ndef accuracy(model, batches):\n    hits = 0\n    for x, y in batches:\n        logits = Record(out=model(x)).fields["out"]\n        hits += int((logits.argmax(1) == y).sum())\n    return hits\n\n\ndef train(model, batches, opt):\n    for x, y in batches:\n        opt.zero_grad()\n        nn.functional.cross_entropy(model(x), y).backward()\n        opt.step()\n    return accuracy(model, batches)\n',),
            note='a forward routed through an object of the file: `Record(out=model(x))` keeps it on `self` (its __init__), and the object dies with the statement - what `.fields["out"]` reads only reaches `.argmax()`',
            runtime='built = []\nmodel = nn.Linear(4, 3)\nmodel.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\naccuracy(model, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))])\nassert built == [True]',
        ),
        Invalid(
            """
import torch
from torch import nn


def as_dict(value):
    return {"out": value}


def train(net, loss, batches, features, labels, opt):
    for epoch in range(2):
        for X, y in batches:
            opt.zero_grad()
            l = loss(net(X), y).sum()
            l.backward()
            opt.step()
        for key, value in as_dict(loss(net(features), labels)).items():
            train_l = value
        print(f"epoch {epoch}, loss {train_l.mean().item():f}")
""",
            range=(17, 39, 17, 52),
            message='`net(features)` runs with grad enabled and its outputs reach only `.item()` (line 19), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\n\n\ndef as_dict(value):\n    return {"out": value}\n\n\ndef train(net, loss, batches, features, labels, opt):\n    for epoch in range(2):\n        for X, y in batches:\n            opt.zero_grad()\n            l = loss(net(X), y).sum()\n            l.backward()\n            opt.step()\n        with torch.no_grad():\n            for key, value in as_dict(loss(net(features), labels)).items():\n                train_l = value\n        print(f"epoch {epoch}, loss {train_l.mean().item():f}")\n',),
            note="d2l's epoch loss read through a loop over a dict: `train_l`, bound from the loop's `value`, is the loss of the forward, and it is only looked at (`.item()`)",
            runtime='built = []\nnet = nn.Linear(4, 1)\nnet.register_forward_hook(lambda m, i, o: built.append(o.requires_grad))\ntrain(net, lambda p, y: (p - y) ** 2, [(torch.randn(5, 4), torch.randn(5, 1))], torch.randn(5, 4), torch.randn(5, 1),\n      torch.optim.SGD(net.parameters(), lr=0.1))\nassert built[-1] is True',
        ),
        Invalid(
            """
import torch

import d2l

features, labels = torch.randn(20, 3), torch.randn(20, 1)
w = torch.zeros((3, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
net, loss = d2l.linreg, d2l.squared_loss
for epoch in range(3):
    l = loss(net(features, w, b), labels).sum()
    l.backward()
    d2l.sgd([w, b], 0.03, 20)
    w.grad.data.zero_()
    b.grad.data.zero_()
    train_l = loss(net(features, w, b), labels)
    print(epoch, train_l.mean().item())
""",
            range=(16, 19, 16, 38),
            message='`net(features, w, b)` runs with grad enabled and its outputs reach only `.item()` (line 17), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\n\nimport d2l\n\nfeatures, labels = torch.randn(20, 3), torch.randn(20, 1)\nw = torch.zeros((3, 1), requires_grad=True)\nb = torch.zeros(1, requires_grad=True)\nnet, loss = d2l.linreg, d2l.squared_loss\nfor epoch in range(3):\n    l = loss(net(features, w, b), labels).sum()\n    l.backward()\n    d2l.sgd([w, b], 0.03, 20)\n    w.grad.data.zero_()\n    b.grad.data.zero_()\n    with torch.no_grad():\n        train_l = loss(net(features, w, b), labels)\n    print(epoch, train_l.mean().item())\n',),
            settings={"imported": (("d2l.linreg", Returns("linreg", False, path="d2l.py")),
                                  ("d2l.squared_loss", Returns("squared_loss", False, path="d2l.py", through=((0, "y_hat"),))))},
            note="d2l's weight-decay notebook: `linreg` and `squared_loss` are another file's (the project's summaries, given here: `linreg` returns a graph it makes, `squared_loss` the graph of its `y_hat`); `linreg` is given the leaves the code trains, so it is a hand-written model, and the epoch loss of its outputs is only printed",
            runtime='assert has_graph(train_l) and activations_alive(train_l)',
        ),
        Invalid(
            """
import torch
from torch import nn

import d2l

features, labels = torch.randn(20, 3), torch.randn(20, 1)
net, loss = nn.Linear(3, 1), d2l.squared_loss
opt = torch.optim.SGD(net.parameters(), lr=0.03)
for epoch in range(3):
    l = loss(net(features), labels).mean()
    opt.zero_grad()
    l.backward()
    opt.step()
    train_l = loss(net(features), labels)
    print(epoch, train_l.mean().item())
""",
            range=(15, 19, 15, 32),
            message='`net(features)` runs with grad enabled and its outputs reach only `.item()` (line 16), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\n\nimport d2l\n\nfeatures, labels = torch.randn(20, 3), torch.randn(20, 1)\nnet, loss = nn.Linear(3, 1), d2l.squared_loss\nopt = torch.optim.SGD(net.parameters(), lr=0.03)\nfor epoch in range(3):\n    l = loss(net(features), labels).mean()\n    opt.zero_grad()\n    l.backward()\n    opt.step()\n    with torch.no_grad():\n        train_l = loss(net(features), labels)\n    print(epoch, train_l.mean().item())\n',),
            settings={"imported": (("d2l.linreg", Returns("linreg", False, path="d2l.py")),
                                  ("d2l.squared_loss", Returns("squared_loss", False, path="d2l.py", through=((0, "y_hat"),))))},
            note="another file's loss that returns what its argument's graph becomes and does nothing else with it (its summary): the model's outputs given to it reach only `.item()`",
            runtime='assert has_graph(train_l) and activations_alive(train_l)',
        ),
        Invalid(
            """
import torch
from torch import nn


def get_params():
    W_xh = nn.Parameter(torch.randn(4, 8) * 0.1)
    W_hh = nn.Parameter(torch.randn(8, 8) * 0.1)
    W_hq = nn.Parameter(torch.randn(8, 4) * 0.1)
    return nn.ParameterList([W_xh, W_hh, W_hq])


def rnn(inputs, state, params):
    W_xh, W_hh, W_hq = params
    H, = state
    outputs = []
    for X in inputs:
        H = torch.tanh(X @ W_xh + H @ W_hh)
        outputs.append(H @ W_hq)
    return outputs, (H,)


def predict(first, num_chars, params):
    state = (torch.zeros(1, 8),)
    output = [first]
    for t in range(num_chars):
        X = [nn.functional.one_hot(torch.tensor([output[-1]]), 4).float()]
        Y, state = rnn(X, state, params)
        output.append(int(Y[0].argmax(dim=1).item()))
    return output


params = get_params()
for epoch in range(2):
    outputs, _ = rnn([torch.randn(2, 4) for _ in range(3)], (torch.zeros(2, 8),), params)
    l = torch.cat(outputs).pow(2).mean()
    for p in params:
        p.grad = None
    l.backward()
    with torch.no_grad():
        for p in params:
            p -= 0.1 * p.grad
    print(epoch, predict(0, 5, params))
""",
            range=(28, 19, 28, 40),
            message='`rnn(X, state, params)` runs with grad enabled and its outputs reach only `.argmax()` (line 29), never a `.backward()`: autograd records the graph and keeps its activations for nothing',
            fixes=('\nimport torch\nfrom torch import nn\n\n\ndef get_params():\n    W_xh = nn.Parameter(torch.randn(4, 8) * 0.1)\n    W_hh = nn.Parameter(torch.randn(8, 8) * 0.1)\n    W_hq = nn.Parameter(torch.randn(8, 4) * 0.1)\n    return nn.ParameterList([W_xh, W_hh, W_hq])\n\n\ndef rnn(inputs, state, params):\n    W_xh, W_hh, W_hq = params\n    H, = state\n    outputs = []\n    for X in inputs:\n        H = torch.tanh(X @ W_xh + H @ W_hh)\n        outputs.append(H @ W_hq)\n    return outputs, (H,)\n\n\n@torch.no_grad()\ndef predict(first, num_chars, params):\n    state = (torch.zeros(1, 8),)\n    output = [first]\n    for t in range(num_chars):\n        X = [nn.functional.one_hot(torch.tensor([output[-1]]), 4).float()]\n        Y, state = rnn(X, state, params)\n        output.append(int(Y[0].argmax(dim=1).item()))\n    return output\n\n\nparams = get_params()\nfor epoch in range(2):\n    outputs, _ = rnn([torch.randn(2, 4) for _ in range(3)], (torch.zeros(2, 8),), params)\n    l = torch.cat(outputs).pow(2).mean()\n    for p in params:\n        p.grad = None\n    l.backward()\n    with torch.no_grad():\n        for p in params:\n            p -= 0.1 * p.grad\n    print(epoch, predict(0, 5, params))\n',),
            note="d2l's RNN from scratch: its weights an `nn.ParameterList` whose items' gradients the code reads (`for p in params: p.grad`); decoding feeds the call's own state back, and only `.argmax()` is used",
            runtime='seen = []\nreal = rnn\npredict.__globals__["rnn"] = lambda *a: seen.append(real(*a)) or seen[-1]\npredict(0, 3, params)\nassert has_graph(seen[-1][0][0]) and has_graph(seen[-1][1][0])',
        ),
    ]


def _in_chain(call: cst.Call, value: cst.BaseExpression) -> bool:
    """Is `call` the value or a receiver in its method chain (`model.eval().to(device)`)?"""
    while True:
        if value is call:
            return True
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            value = value.func.value
        else:
            return False


def _returns_values(fn) -> bool:
    """Does the method return only values without a graph (`scores.argmax(1)`, `.tolist()`, a
    float)? A model's `predict()` that does is an evaluation (pytorch/examples' forward-forward
    `Net.predict`); one that returns a graph is part of a forward pass."""
    r = fn.returns
    return fn.returned and r.kind in (Kind.TENSOR, Kind.NUMBER) and r.grad is Grad.NO and not r.has_graph


KEEPING_METHODS = frozenset(("append", "extend", "insert", "add", "put", "push"))


class _Keeps(cst.CSTVisitor):
    """What a function puts where it outlives the call (`self.saved_log_probs.append(...)`,
    `memory.logprobs.append(...)`, `self.last = ...`): the attribute names, None for anything else
    (an item of a container)."""

    def __init__(self):
        self.kept: set = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in KEEPING_METHODS:
            holder = node.func.value
            self.kept.add(holder.attr.value if isinstance(holder, cst.Attribute) else None)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Attribute):
            self.kept.add(node.target.attr.value)
        elif isinstance(node.target, cst.Subscript):
            self.kept.add(None)


class _DetachedReads(cst.CSTVisitor):
    """How a module reads the attributes `names`: detached (under a `.detach()`:
    `torch.stack(memory.logprobs).detach()`), otherwise (`trained`), or only about the container
    (`.append(...)`, `del memory.logprobs[:]`, `len(...)`, an assignment)."""

    def __init__(self, names: set):
        self.names = names
        self.detaching = 0
        self.neutral: set = set()  # ids of Attribute nodes in container-only uses
        self.trained = False  # a read that may reach a backward
        self.read = False  # a detached read: the file shows where the kept values go

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "detach":
            self.detaching += 1
        elif isinstance(func, cst.Attribute) and func.attr.value in KEEPING_METHODS | {"clear", "pop"}:
            self.neutral.add(id(func.value))
        elif isinstance(func, cst.Name) and func.value == "len" and node.args:
            self.neutral.add(id(node.args[0].value))

    def leave_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "detach":
            self.detaching -= 1

    def visit_Del(self, node: cst.Del) -> None:
        target = node.target.value if isinstance(node.target, cst.Subscript) else node.target
        self.neutral.add(id(target))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target.value if isinstance(node.target, cst.Subscript) else node.target
        self.neutral.add(id(target))  # `self.logprobs = []`, `Cls.saved[i] = out`: a write

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in self.names and id(node) not in self.neutral:
            if self.detaching:
                self.read = True
            else:
                self.trained = True


def kept_for_training(module: cst.Module, *names: str) -> bool:
    """May what is kept in the attributes `names` reach a backward? Yes unless the file reads
    them, and only `.detach()`-ed (read nowhere in the file: perhaps trained on elsewhere)."""
    reads = _DetachedReads(set(names))
    walk(module, reads)
    return reads.trained or not reads.read


def _frozen_in(code: str, target: str) -> bool:
    """Does `code` freeze the module's parameters (`target.requires_grad_(False)`, or
    `for p in target.parameters(): p.requires_grad = False`)? A frozen module builds no graph
    from inputs that need none, so its forward with grad on costs nothing."""
    t = re.escape(target)
    return bool(
        re.search(rf"\b{t}\s*\.\s*requires_grad_\s*\(\s*(?:False|requires_grad\s*=\s*False)", code)
        or re.search(rf"\b{t}\s*\.\s*(?:parameters|named_parameters)\s*\(", code) and re.search(r"requires_grad\s*=\s*False", code)
    )


@lru_cache(maxsize=512)
def _never_trained_in(source: str, name: str) -> bool:
    """GG103._never_trained's reading of the text, once per file and name: no mention of `name` (not
    after a word or a dot) that loads weights into it or takes its parameters (a submodule's too:
    `model.fc.parameters()` for an optimizer that trains the head), or that hands it on as an
    argument or a list item (`SGD(params=[net.weight], ...)`; `print(model)` hands on nothing)."""
    for m in re.finditer(rf"(?<![\w.]){re.escape(name)}", source):
        end = m.end()
        if _TRAINED_AFTER.match(source, end):
            return False
        before = m.start() - 1
        while before >= 0 and source[before].isspace():
            before -= 1
        opener = source[before] if before >= 0 else ""
        if opener in "(," and opener and not source.endswith(("print", "str", "repr", "type", "len"), 0, before) \
                and _HANDED_AFTER.match(source, end):
            return False
        if opener == "[" and _ITEM_AFTER.match(source, end):
            return False
    return True


_TRAINED_AFTER = re.compile(r"(?:\s*\.\s*\w+)*\s*\.\s*(?:load_state_dict|parameters|named_parameters|train)\s*\(")
_HANDED_AFTER = re.compile(r"\s*[,)]")
_ITEM_AFTER = re.compile(r"(?:\s*\.\s*\w+)+\s*[,\]]")
