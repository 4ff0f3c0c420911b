from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.evidence import dotted, returned_names
from gradguard.engine.model import GradMode, forward_code
from gradguard.engine.values import UNKNOWN, Grad, Kind, Value, holds_graph
from gradguard.engine.walk import descendants
from gradguard.engine.walk import walk as walk_tree
from gradguard.findings import Safety, Severity
from gradguard.rules._build import method_chain, short
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid
from gradguard.rules.gg102_recurrent_state_not_detached import (
    SECOND_TIME,
    _detach_lines,
)

# Reading these of the previous call's tensor reads no graph.
METADATA = ("shape", "dtype", "device", "ndim", "is_cuda", "requires_grad")
METADATA_METHODS = ("size", "dim", "numel", "__len__")
CUTS = ("detach", "item", "tolist", "numpy")  # what comes out carries no graph
# Methods whose arguments are sizes, dtypes or devices: only their receiver carries values.
SHAPING_METHODS = ("to", "type", "view", "reshape", "expand", "repeat", "permute", "transpose", "flatten", "unsqueeze",
                   "squeeze", "new_zeros", "new_ones", "new_full", "new_empty", "cuda", "cpu")
# A cache of past keys/states for generation (`use_cache`, `self.kv_cache`): an inference idiom
# (generation runs under no_grad); training runs with the cache off.
CACHE = re.compile(r"(?i)cache|past_key")


# In-place updates that accumulate into a tensor (`running_mean.mul_(m).add_(x)`).
INPLACE_UPDATES = frozenset("add_ sub_ mul_ div_ addcmul_ addcdiv_ lerp_ copy_ clamp_".split())


@dataclass(eq=False)
class Carried:
    """`self.<attr>` given a graph in a forward after the same forward read the previous call's value."""

    node: cst.CSTNode  # the assignment
    target: cst.Attribute  # `self.hidden` among its targets
    attr: str
    value: Value  # what the attribute now holds
    read: cst.Attribute  # where this call read the previous call's value
    statement: cst.CSTNode  # the statement of that read (a detach goes before it, for tuple targets)
    function: object
    stamp: tuple
    read_after: bool = False  # read again later in the same call (a detach there changes this call's values)
    inplace: bool = False  # `self.running_mean.mul_(m).add_(...)`: updated in place, not assigned
    grows_only: bool = False  # a statistic a helper returns: not known to reach the output (no backward claim)
    also: tuple = ()  # other attributes the same assignment carries (`Y, self.mean, self.var = f(...)`)
    owner: object = None  # the method whose call this one's events belong to (see _owner)
    reset_elsewhere: str = ""  # its reset, as the project's other files call it: "`init_sequence()` ... (train.py, ...)"
    reset_at: object = None  # engine.outside.At: that call, for a related location in the other file


class StateCarriedAcrossForward(Rule):
    """
    ## What it does
    Finds a module attribute that `forward()` (or a method only `forward()`
    calls, as part of the same call: `self.update_stats(x.mean(0))`) assigns
    from a value with an autograd graph, after reading the value the previous
    call left there: `out, self.hidden = self.lstm(x, self.hidden)`,
    `self.memory = torch.cat([self.memory, h])`, `self.avg = 0.9 * self.avg +
    0.1 * h.mean(0)` - also through a function of the file that returns the
    updated statistics (`Y, self.moving_mean, self.moving_var =
    batch_norm(X, ..., self.moving_mean, self.moving_var)` computing them from
    `X.mean(0)`), or a state integrating the input's time steps
    (`self.v_mem = a * self.v_mem + x[:, t]` in `for t in range(...)`, a spiking
    neuron's membrane). A move (`self.avg = self.avg.to(x.device)`) keeps the graph.
    Statistics that do not reach the output raise nothing: their memory only
    grows, and the message says so.

    ## Why is this bad?
    Each call's graph now hangs off the next one: every past batch stays
    reachable from the attribute, memory grows with every step, and the second
    `loss.backward()` fails with "Trying to backward through the graph a second
    time" (the first backward freed the saved tensors the chain still needs).

    ## Example
    ```python
    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)
        return self.head(out)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        out, hidden = self.lstm(x, self.hidden)
        self.hidden = tuple(h.detach() for h in hidden)
        return self.head(out)
    ```

    ## Fix safety
    Safe when the attribute is not read again in the same call: the fix
    detaches the stored value (`self.avg = (...).detach()`), or, for a tuple
    target such as `out, self.hidden = ...`, detaches the carried state before
    the call reads it (a tensor, a tuple such as an LSTM's `(h, c)`, or the
    `None` of the first call). The values of the current call and its gradients
    are unchanged; only the link to past calls is cut (truncated
    backpropagation through time). Unsafe when the same call reads the
    attribute after assigning it: its gradient would change. Silent when the
    update runs under `torch.no_grad()`, assigns a detached value, or the
    attribute is reset from a value without a graph before it is read.
    """

    code = "GG104"
    name = "state-carried-across-forward"
    severity = Severity.WARNING
    summary = "A module attribute keeps the previous call's graph: it grows every batch"

    def __init__(self, flow, settings, reports):
        super().__init__(flow, settings, reports)
        self.reads: dict = {}  # (stamp, attr) -> the first read of the previous call's value
        self.fresh: set = set()  # (stamp, attr): reset or detached in this call: later reads see no past graph
        self.candidates: list[Carried] = []
        self.inputs: set = set()  # assignments whose graph is that of the forward's input
        self._helper_calls: set = set()  # `batch_norm(X, ...)` calls whose items carry the input's graph
        self._returned: dict = {}  # helper node -> evidence.returned_names
        self._helper_stats: dict = {}  # (helper node, its parameters given the input) -> names reducing them
        self._derived: dict = {}  # (function node, parameters given the input, given reductions) -> _inputs
        self._call_sites: Optional[dict] = None  # name -> call sites (see _calls)

    def _from_input(self, node, attr: str) -> bool:
        """A running statistic of the forward's input: `self.avg = m * self.avg + (1 - m) * mean`
        where `mean` is a reduction (`x.mean(0)`, `x.var(...)`) of the input. Only that shape: an
        unknown value merely computed from the input (`self.pe = self.extend_pe(x, self.pe)`, a
        window size from its shape) is no evidence of a graph."""
        fn = self.flow.function
        if fn is None or not forward_code(_owner(fn)) or not isinstance(node, (cst.Assign, cst.AugAssign)):
            return False
        value = self.flow.handed_on(node.value)  # (through a helper that hands it on: `as_pair(m * self.avg + ...)[0]`)
        if not isinstance(value, cst.BinaryOperation) and not isinstance(node, cst.AugAssign):
            return False
        if isinstance(node, cst.Assign) and not _reads_attr(value, attr):
            return False
        return self._reduces_input(fn, value) or self._time_step(fn, value)

    def _time_step(self, fn, expr: cst.CSTNode) -> bool:
        """`self.v_mem = a * self.v_mem + x[:, t]` in `for t in range(x.shape[1]):` of the forward: a
        state integrating the input's time steps (a spiking neuron's membrane) carries the graph of
        the layers before, like a running statistic."""
        steps = {n.value for loop in self.flow.frame.loops if isinstance(loop, cst.For)
                 for n in _names_in(loop.target)} | _steps_given(fn)
        if not steps:
            return False
        derived = self._inputs(fn)[0]
        return any(isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value in derived
                   and any(m.value in steps for e in n.slice for m in _names_in(e))
                   for n in descendants(expr))

    def _reduces_input(self, fn, expr: cst.CSTNode) -> bool:
        """Does `expr` use a reduction of the forward's input (`mean = x.mean(0)`, `x.var(0)`)?"""
        derived, stats = self._inputs(fn)
        return any(n.value in stats for n in _names_in(expr)) or _reduces(expr, derived)

    def _inputs(self, fn) -> tuple[set, set]:
        """(names of `fn` computed from the forward's input, the reductions among them): from the
        forward's parameters, or, in a method the forward calls (`self.update_stats(m, mean)`), from
        the parameters that call gives those names - the helper is part of the forward's computation."""
        if fn.name == "forward" or _owner(fn) is fn and forward_code(fn):
            params = frozenset({p.name.value for p in fn.node.params.params[1:]} | {
                p.name.value for p in fn.node.params.kwonly_params})
            seeds = frozenset()
        elif _owner(fn) is not fn:
            call, caller = fn.walked_at
            derived, stats = self._inputs(caller)
            params, seeds = _given(fn.node, call, derived, 1), _given(fn.node, call, stats, 1, reducing=derived)
        else:
            return set(), set()
        key = (fn.node, params, seeds)
        if key not in self._derived:
            self._derived[key] = derived_names(fn.node, params, seeds)
        return self._derived[key]

    def _key(self) -> tuple:
        """The stamp reads and writes of `self.<attr>` are matched under: the owner's analysis."""
        fn = self.flow.function
        owner = _owner(fn) if fn is not None else None
        return (owner, owner.analyses if owner is not None else 0)

    def _self_attr(self, node: cst.BaseExpression) -> Optional[str]:
        fn = self.flow.function
        if fn is None or fn.cls is None or fn.name == "__init__" or not fn.cls.module_like:
            return None  # `__init__` runs once: what it assigns is no state carried across calls
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            return node.attr.value
        return None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in METADATA:
            self._unread(node.value)
        attr = self._self_attr(node)
        if attr is None:
            return
        key = (self._key(), attr)
        for c in self.candidates:
            if c.attr == attr and c.owner == key[0]:
                c.read_after = True
        if key not in self.fresh:
            self.reads.setdefault(key, (node, self.flow.statement))

    def _unread(self, node: cst.BaseExpression) -> None:
        """`node` turned out to read no tensor of the previous call: `self.h is None`, `self.h.shape`."""
        attr = self._self_attr(node)
        if attr is not None:
            key = (self._key(), attr)
            if key in self.reads and self.reads[key][0] is node:
                del self.reads[key]

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in node.comparisons):
            self._unread(node.left)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in METADATA_METHODS:
            self._unread(func.value)
        elif isinstance(func, cst.Name) and func.value in ("isinstance", "len", "type") and node.args:
            self._unread(node.args[0].value)
        elif isinstance(func, cst.Attribute) and func.attr.value in INPLACE_UPDATES:
            self._updated_in_place(node)

    def _updated_in_place(self, node: cst.Call) -> None:
        """`self.running_mean.mul_(1 - m).add_(m * mean)` in a forward: the state accumulates, in
        place, a value with a graph (or a reduction of the input: the graph of the layers before)."""
        root = self.flow.handed_on(node.func.value)
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) and root.func.attr.value in INPLACE_UPDATES:
            root = self.flow.handed_on(root.func.value)
        attr = self._self_attr(root)
        fn = self.flow.function
        if attr is None or self.flow.frame.mode is not GradMode.ON or not forward_code(_owner(fn)):
            return
        args = [a.value for a in node.args]
        values = [self.flow.value(a) for a in args]
        if not any(holds_graph(v) for v in values):
            if any(v.grad is Grad.NO for v in values):
                return  # known to carry no graph (computed under no_grad, detached): no evidence to weigh
            if not any(self._reduces_input(fn, a) for a in args):
                return
            self.inputs.add(node)
        value = Value(kind=Kind.TENSOR, grad=Grad.YES, origins=frozenset((node,)))
        self.flow.top_of.setdefault(root, self.flow.top)
        self.candidates.append(Carried(node, root, attr, value, root, self.flow.statement, fn, self.stamp(), inplace=True,
                                       owner=self._key()))

    def leave_Assign(self, node: cst.Assign) -> None:
        value = self.flow.value(node.value)
        given = self.flow.handed_on(node.value)
        for t in node.targets:
            if isinstance(t.target, (cst.Tuple, cst.List)) and isinstance(given, cst.Call) and any(
                    self._self_attr(e.value) is not None for e in t.target.elements):
                value = self._helper_statistics(given, value, len(t.target.elements))
            self._assigned(node, t.target, value, tuple_target=False)

    def _helper_statistics(self, call: cst.Call, value: Value, n: int) -> Value:
        """`Y, self.moving_mean, self.moving_var = batch_norm(X, ..., self.moving_mean, ...)` in a
        forward: the items of what a function of this file returns that it computes from a reduction
        of the forward's input (d2l's from-scratch BatchNorm: `momentum * moving_mean + (1 - momentum)
        * X.mean(0)`) carry the graph of the layers before, as in the forward itself."""
        fn = self.flow.function
        callee = self.flow.value(call.func)
        helper = callee.cls if callee.kind is Kind.FUNCTION else None
        if (fn is None or not forward_code(_owner(fn)) or helper is None or not hasattr(helper, "node")
                or self.flow.frame.mode is not GradMode.ON):
            return value
        returned = self._returned.get(helper.node)
        if returned is None:
            returned = self._returned[helper.node] = returned_names(helper.node)
        if len(returned) != n:
            return value  # `q, k = apply_rotary(q, k)` of a helper returning two: a question for each call
        inputs = _given(helper.node, call, self._inputs(fn)[0], 0)
        if not inputs:
            return value
        key = (helper.node, frozenset(inputs))
        stats = self._helper_stats.get(key)
        if stats is None:
            stats = self._helper_stats[key] = derived_names(helper.node, inputs)[1]
        if not stats.intersection(r for r in returned if r):
            return value
        parts = value.elements if value.elements is not None and len(value.elements) == n else [value] * n
        self._helper_calls.add(call)
        return value.but(elements=tuple(
            p.but(kind=Kind.TENSOR, grad=Grad.YES, leaf=False, origins=frozenset((call,)))
            if r in stats and not holds_graph(p) and p.grad is Grad.UNKNOWN
            else p for p, r in zip(parts, returned)))

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        attr = self._self_attr(node.target)
        if attr is not None:  # `self.total += h.sum()` reads the previous value
            self.reads.setdefault((self._key(), attr), (node.target, self.flow.statement))
            self._assigned(node, node.target, self.flow.value(node.value), tuple_target=False)

    def _assigned(self, node, target, value: Value, tuple_target: bool) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            parts = value.elements if value.elements is not None and len(value.elements) == len(target.elements) \
                else [value] * len(target.elements)
            for e, part in zip(target.elements, parts):
                self._assigned(node, e.value, part, True)
            return
        attr = self._self_attr(target)
        if attr is None:
            return
        key = (self._key(), attr)
        if (not holds_graph(value) and value.grad is Grad.UNKNOWN and key in self.reads and not tuple_target
                and self.flow.frame.mode is GradMode.ON and self._from_input(node, attr)):
            # Computed from the forward's input (`x.mean(0)`): inside a model in training it carries the
            # graph of the layers before (a running-statistics update is the classic case).
            value = value.but(grad=Grad.YES, origins=frozenset((node,)))
            self.inputs.add(node)
        if not holds_graph(value):
            # Reset (on every path) or detached (`self.h = self.h.detach()`, on any path): later
            # reads see no past graph. A reset in a branch (`if self.h is None: self.h = ...`) is not,
            # nor a move (`self.m = self.m.to(x.device)`: it keeps the previous call's graph).
            rhs = self.flow.handed_on(node.value) if isinstance(node, (cst.Assign, cst.AugAssign)) else None
            if _moved(rhs, attr):
                # the value read next is still the previous call's: the fix detaches before that read
                # (this one may sit in a branch: `if self.m.device != x.device:`)
                self.reads.pop(key, None)
                return
            if _reads_attr(rhs, attr) or self._unconditional(self.flow.statement):
                self.reads.pop(key, None)
                self.fresh.add(key)
            return
        read = self.reads.get(key)
        if read is None:
            if self._unconditional(self.flow.statement):
                # set from this call's values before any read (`rnn_out, self.hidden = self.rnn(X)`, then
                # `self.hidden, self.cell = self.hidden`): later reads see this call's, not the previous one's
                self.fresh.add(key)
            return
        self.flow.top_of.setdefault(target, self.flow.top)  # its range is resolved with its statement's
        grows_only = isinstance(node, cst.Assign) and self.flow.handed_on(node.value) in self._helper_calls
        self.candidates.append(Carried(node, target, attr, value, read[0], read[1], self.flow.function, self.stamp(),
                                       grows_only=grows_only, owner=key[0]))

    def _unconditional(self, statement) -> bool:
        """Does `statement` run on every call of the current function (its body, or a `with` in it)?"""
        fn = self.flow.function
        body = list(fn.node.body.body) if isinstance(fn.node.body, cst.IndentedBlock) else []
        while body:
            stmt = body.pop()
            if stmt is statement:
                return True
            if isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock):
                body.extend(stmt.body.body)
        return False

    def finish(self) -> None:
        done = set()
        for c in self.candidates:
            if c.node in done or not self.current(c.stamp) or CACHE.search(c.attr):
                continue
            if not _in_forward(c.function):
                continue
            if any(CACHE.search(self.code_of(test)) for test in _conditions(c.function.node, c.node)):
                continue
            if self._reset_per_batch(c):
                continue
            done.add(c.node)
            others = tuple(o.attr for o in self.candidates if o.node is c.node and o is not c and o.attr != c.attr
                           and self.current(o.stamp) and not self._reset_per_batch(o))
            if others:
                c.also = tuple(dict.fromkeys(others))
            self._report(c)

    def _calls(self) -> dict:
        """Every call in the file by the name called: [(function, loops around it, loops around
        each backward of that function)], from one walk of the module (cached)."""
        if self._call_sites is None:
            walk = _CallSites()
            walk_tree(self.flow.module, walk)
            self._call_sites = walk.by_name
        return self._call_sites

    def _reset_per_batch(self, c: Carried) -> bool:
        """A method of the class other than `__init__` and the forward assigns the attribute (a
        `reset()`, `init_hidden()`), and this file calls it where every batch runs it: in a
        forward, or in the same loop body (or loop-free function) as the `backward()`."""
        cls = c.function.cls
        names = {m.name.value for m in _methods(self.flow.module, cls.node)
                 if m is not c.function.node and m.name.value not in ("__init__", "forward")
                 and (_reads_attr(m, c.attr, assigned=True) or _detaches_in_place(m))}
        if not names:
            return False
        calls = self._calls()
        sites = [site for name in names for site in calls.get(name, ())]
        for _ in range(3):  # `init_sequence()` that calls `self.memory.reset()`: callers by name
            # a caller that neither back-propagates nor is a forward passes the reset on (`init_sequence()`)
            callers = {fn.name.value for fn, _, backs in sites
                       if fn is not None and not backs and not self._forward_node(fn)} - names
            if not callers:
                break
            names |= callers
            sites = [site for name in names for site in calls.get(name, ())]
        # a resetter calling another (`init_sequence()` calling `self.memory.reset()`): its own callers decide
        sites = [(fn, loops, backs) for fn, loops, backs in sites if fn is None or fn.name.value not in names]
        if not sites:
            # a reset nobody here calls: the training code elsewhere may call it every batch - unless the
            # project's other files, which call it, never do
            told = [(f, self.flow.outside_of(f, "per_batch")) for f in self.flow.functions if f.name in names and f.cls is not None]
            if any(o is not None and o.per_batch for _, o in told):
                return True
            never = [(f, o) for f, o in told if o is not None and o.per_batch is False]
            if never:
                f, o = never[0]
                c.reset_elsewhere = f"`{f.name}()`, its reset, is called only outside the training steps: {o.where}"
                c.reset_at = o.at and (o.at, f"`{f.name}()` is called here, outside the training steps")
            return not never
        for fn, loops, backs in sites:
            if fn is None:
                continue
            if self._forward_node(fn):
                return True
            if backs and all(set(b) <= set(loops) for b in backs):
                return True
        return False

    def _forward_node(self, node: cst.FunctionDef) -> bool:
        """model.forward_code of the function defined by `node` (a `forward` the walk never saw: by the API name)."""
        info = next((f for f in self.flow.functions if f.node is node), None)
        return forward_code(info) if info is not None else node.name.value == "forward"

    def _report(self, c: Carried) -> None:
        name = f"self.{c.attr}"
        fixes = []
        safety = Safety.UNSAFE if c.read_after else Safety.SAFE
        if isinstance(c.node, cst.Assign) and c.node.targets[0].target is c.target and len(c.node.targets) == 1:
            if c.value.elements is None:
                code = short(self.code_of(c.node.value))
                if not isinstance(c.node.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                    code = f"({code})"
                fixes.append(PendingFix(f"Store `{code}.detach()`", safety,
                                        [(c.node.value, method_chain(c.node.value, "detach"))]))
        else:
            names = [name] + [f"self.{a}" for a in c.also]
            lines = [line for n in names for line in _detach_lines(n, UNKNOWN, self.flow.module.default_indent)[0]]
            shown = "`, `".join(names)
            title = f"Detach `{shown}` (a tensor, a tuple or `None`) before this call reads {'them' if c.also else 'it'}"
            fixes.append(PendingFix(title, safety, [(("before", c.statement), lambda spot, lines=lines: "".join(
                f"{line}\n{spot.indent}" for line in lines))]))

        if c.inplace:  # no fix offered: detach the update's operand, or update under torch.no_grad()
            def message(line_of):
                return (
                    f"`{name}` is updated in place in `{c.function.name}()` with a value that carries a graph: the "
                    f"state keeps every past batch's graph reachable, memory grows with every call, and the next "
                    f"`.backward()` fails with \"{SECOND_TIME}\"; update it under `torch.no_grad()` or from "
                    f"detached values"
                )

            self.report(c.target, message, related=[(c.node, "updated in place here")])
            return

        def message(line_of):
            shown = "`, `".join([name] + [f"self.{a}" for a in c.also])
            what = f"`{shown}` are assigned values" if c.also else f"`{name}` is assigned a value"
            fails = "" if c.grows_only else f", and the next `.backward()` fails with \"{SECOND_TIME}\""
            elsewhere = f" ({c.reset_elsewhere})" if c.reset_elsewhere else ""
            return (
                f"{what} with a graph in `{c.function.name}()` after reading the previous "
                f"call's `{name}` (line {line_of(c.read)}): every past batch's graph stays reachable, memory grows "
                f"with every call{fails}; detach {'them' if c.also else 'it'} when storing {'them' if c.also else 'it'}"
                f"{elsewhere}"
            )

        related = [(c.read, "the previous call's value is read here")] + ([c.reset_at] if c.reset_at else [])
        self.report(c.target, message, fixes=fixes, related=related)

    VALID = [
        Valid(
            """
import torch
from torch import nn


class Whitening(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n)
        self.gram = torch.zeros(n, n)

    def forward(self, x):
        self.gram = self.gram + (x.T @ x).detach()
        return self.linear(x)

""",
            runtime='encoder = nn.Linear(4, 4)\nhead = Whitening(4)\nfor _ in range(3):\n    head(encoder(torch.randn(8, 4)))\nassert head.gram.grad_fn is None',
            note="the same Gram matrix of the input accumulated across calls, detached: no graph carried",
        ),
        Valid(
            """
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8)
        self.hidden = None

    def forward(self, x):
        out, hidden = self.lstm(x, self.hidden)
        self.hidden = tuple(h.detach() for h in hidden)
        return out


model = Tagger()
for step in range(2):
    model(torch.randn(5, 3, 4)).pow(2).mean().backward()
""",
            runtime='assert all(p.grad is not None for p in model.parameters())',
            note='the state detached when stored',
        ),
        Valid(
            """
import torch
from torch import nn


class Centered(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("center", torch.zeros(4))

    def forward(self, x):
        h = self.fc(x)
        with torch.no_grad():
            self.center = 0.9 * self.center + 0.1 * h.mean(0)
        return (h - self.center).pow(2).mean()


net = Centered()
for step in range(2):
    net(torch.randn(6, 4)).backward()
""",
            runtime='assert not has_graph(net.center)',
            note='the running center updated under no_grad',
        ),
        Valid(
            """
import torch
from torch import nn


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8)

    def forward(self, x):
        self.state = (torch.zeros(1, x.size(1), 8), torch.zeros(1, x.size(1), 8))
        out, self.state = self.lstm(x, self.state)
        return out


model = Seq()
for step in range(2):
    model(torch.randn(5, 3, 4)).pow(2).mean().backward()
""",
            runtime='assert all(p.grad is not None for p in model.parameters())',
            note='the state reset from zeros at every call before it is read',
        ),
        Valid(
            """
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.last_weights = None

    def forward(self, x):
        weights = torch.softmax(self.q(x) @ x.T, dim=-1)
        self.last_weights = weights.detach()
        return weights @ x


attn = Attention()
for step in range(2):
    attn(torch.randn(3, 4)).sum().backward()
""",
            runtime='assert not has_graph(attn.last_weights)',
            note='a detached copy kept for inspection, never read by the next call',
        ),
        Valid(
            """
import torch
from torch import nn


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.key = nn.Linear(4, 4)
        self.k_cache = None

    def forward(self, x, use_cache=False):
        k = self.key(x)
        if use_cache:
            if self.k_cache is not None:
                k = torch.cat([self.k_cache, k])
            self.k_cache = k
        return (x @ k.T).sum()


layer = DecoderLayer()
for step in range(2):
    layer(torch.randn(3, 4)).backward()
""",
            runtime='assert layer.k_cache is None and layer.key.weight.grad is not None',
            note='a key cache for generation (use_cache): an inference idiom, off in training',
        ),
        Valid(
            """
import torch
from torch import nn


class BatchRenorm(nn.Module):
    def __init__(self, n=4, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(n))

    def forward(self, x):
        b_mean = x.mean(0)
        if self.training:
            self.running_mean += self.momentum * (b_mean.detach() - self.running_mean)
        return x - b_mean


net = nn.Sequential(nn.Linear(4, 4), BatchRenorm())
for step in range(2):
    net(torch.randn(8, 4)).pow(2).mean().backward()
""",
            runtime='assert not has_graph(net[1].running_mean) and net[0].weight.grad is not None',
            note="running statistics of the input, updated from detached batch statistics (torchrl's BatchRenorm)",
        ),
        Valid(
            """
import torch
from torch import nn


class RunningNorm(nn.Module):
    def __init__(self, n=4, momentum=0.1):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(n))

    def forward(self, x):
        h = self.fc(x)
        mean = h.mean(0)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
        return (h - self.running_mean).pow(2).mean()


norm = RunningNorm()
for step in range(2):
    norm(torch.randn(8, 4)).backward()
""",
            note='the same update under torch.no_grad(): the buffer holds values only',
        ),
        Valid(
            """
import torch
from torch import nn


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps=1e-5, momentum=0.9):
    mean = X.mean(dim=0)
    var = ((X - mean) ** 2).mean(dim=0)
    X_hat = (X - mean) / torch.sqrt(var + eps)
    moving_mean = momentum * moving_mean + (1.0 - momentum) * mean.detach()
    moving_var = momentum * moving_var + (1.0 - momentum) * var.detach()
    return gamma * X_hat + beta, moving_mean, moving_var


class BatchNorm(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(num_features))
        self.beta = nn.Parameter(torch.zeros(num_features))
        self.moving_mean = torch.zeros(num_features)
        self.moving_var = torch.ones(num_features)

    def forward(self, X):
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean, self.moving_var)
        return Y
""",
            note="the from-scratch batch norm of d2l after its fix: the helper updates the moving statistics from detached batch statistics",
            runtime="lin, bn = nn.Linear(3, 3), BatchNorm(3)\nfor _ in range(3):\n    bn(lin(torch.randn(8, 3))).pow(2).mean().backward()\nassert not has_graph(bn.moving_mean) and bn.gamma.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class LIF(nn.Module):
    def __init__(self, alpha=0.9, threshold=1.0):
        super().__init__()
        self.alpha, self.threshold = alpha, threshold
        self.register_buffer("v_mem", torch.zeros(1))

    def forward(self, x):
        self.v_mem = self.v_mem.detach()
        spikes = []
        for t in range(x.shape[1]):
            self.v_mem = self.alpha * self.v_mem + x[:, t]
            spk = torch.sigmoid(4 * (self.v_mem - self.threshold))
            spikes.append(spk)
        return torch.stack(spikes, 1)
""",
            note="a spiking neuron whose membrane is detached at the start of every call: its time steps keep their graph within the call only",
            runtime="lin, lif = nn.Linear(4, 4), LIF()\nfor _ in range(2):\n    lif(lin(torch.randn(2, 3, 4)).transpose(1, 2)).sum().backward()\nassert lin.weight.grad is not None",
        ),
        Valid(
            """
import math

import torch
import torch.nn.functional as F
from torch import nn


class EMAModule(nn.Module):
    def __init__(self, channels, num_bases, num_stages, momentum):
        super().__init__()
        self.num_stages, self.momentum = num_stages, momentum
        bases = torch.zeros(1, channels, num_bases)
        bases.normal_(0, math.sqrt(2.0 / num_bases))
        self.register_buffer("bases", F.normalize(bases, dim=1, p=2))

    def forward(self, feats):
        batch_size, channels, height, width = feats.size()
        feats = feats.view(batch_size, channels, height * width)
        bases = self.bases.repeat(batch_size, 1, 1)
        with torch.no_grad():
            for i in range(self.num_stages):
                attention = F.softmax(torch.einsum("bcn,bck->bnk", feats, bases), dim=2)
                bases = torch.einsum("bcn,bnk->bck", feats, F.normalize(attention, dim=1, p=1))
                bases = F.normalize(bases, dim=1, p=2)
        feats_recon = torch.einsum("bck,bnk->bcn", bases, attention).view(batch_size, channels, height, width)
        if self.training:
            bases = bases.mean(dim=0, keepdim=True)
            bases = F.normalize(bases, dim=1, p=2)
            self.bases = (1 - self.momentum) * self.bases + self.momentum * bases
        return feats_recon
""",
            note="mmseg's EMA head (vendored in ControlNet): the bases it keeps are computed from the input under torch.no_grad(), so the moving average carries no graph",
            runtime="conv, ema = nn.Conv2d(3, 8, 1), EMAModule(8, 4, 2, 0.1)\nfor _ in range(2):\n    h = conv(torch.randn(2, 3, 5, 5))\n    (h + ema(h)).pow(2).mean().backward()  # mmseg adds the reconstruction to a residual\nassert not has_graph(ema.bases) and conv.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


def with_count(value, n):
    return value, n


class RunningNorm(nn.Module):
    def __init__(self, n=4, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(n))

    def forward(self, x):
        self.mean = with_count((1 - self.momentum) * self.mean + self.momentum * x.mean(0).detach(), x.shape[0])[0]
        return x - self.mean


net = nn.Sequential(nn.Linear(4, 4), RunningNorm())
for _ in range(2):
    net(torch.randn(8, 4)).pow(2).mean().backward()
""",
            note="the same update from a detached reduction of the input",
            runtime="assert net[1].mean.grad_fn is None",
        ),
        Valid(
            """
import torch
from torch import nn


def with_count(value, n):
    return value, n


class RunningNorm(nn.Module):
    def __init__(self, n=4, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(n))

    def forward(self, x):
        self.mean = (1 - self.momentum) * self.mean + self.momentum * x.mean(0).detach()
        return x - self.mean


net = nn.Sequential(nn.Linear(4, 4), RunningNorm())
for _ in range(2):
    net(torch.randn(8, 4)).pow(2).mean().backward()
""",
            note="regression: a running mean updated from `x.mean(0).detach()` holds no graph of the input",
            runtime="assert net[1].mean.grad_fn is None",
        ),
        Valid(
            """
import torch
from torch import nn


class Memory(nn.Module):
    def __init__(self, n, m):
        super().__init__()
        self.register_buffer("bias", torch.full((n, m), 1e-6))

    def reset(self, batch_size):
        self.memory = self.bias.clone().repeat(batch_size, 1, 1)

    def write(self, w, add):
        self.memory = self.memory + torch.matmul(w.unsqueeze(-1), add.unsqueeze(1))


class Controller(nn.Module):
    def __init__(self):
        super().__init__()
        self.memory = Memory(6, 5)
        self.address = nn.Linear(4, 6)
        self.add = nn.Linear(4, 5)

    def init_sequence(self, batch_size):
        self.memory.reset(batch_size)

    def forward(self, x):
        self.memory.write(self.address(x).softmax(1), self.add(x))
        return self.memory.memory.sum((1, 2))
""",
            note="a memory rewritten from a graph within one sequence on purpose, reset through `init_sequence()` - which "
                 "the training code of another file calls before every batch",
            runtime="net = Controller()\nfor _ in range(3):\n    net.init_sequence(2)\n    sum(net(torch.randn(2, 4)) for _ in range(3)).sum().backward()\nassert net.add.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class Leaky(nn.Module):
    def __init__(self, beta=0.9):
        super().__init__()
        self.beta = beta
        self.mem = None

    def integrate(self, cur):
        self.mem = self.beta * self.mem + cur

    def forward(self, cur):
        self.mem = torch.zeros_like(cur)
        self.integrate(cur)
        return torch.sigmoid(self.mem - 1.0)


class SpikingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.lif = Leaky()

    def forward(self, x):
        return self.lif(self.fc(x))
""",
            note='the same method, with the state reset at every forward',
            runtime='net = SpikingNet()\nfor _ in range(2):\n    net(torch.randn(2, 4)).sum().backward()\nassert net.fc.weight.grad is not None',
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
from torch import nn


class Whitening(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n)
        self.gram = torch.zeros(n, n)

    def forward(self, x):
        self.gram = self.gram + torch.einsum("bi,bj->ij", x, x)
        return self.linear(x)

""",
            range=(13, 8, 13, 17),
            message='`self.gram` is assigned a value with a graph in `forward()` after reading the previous call\'s `self.gram` (line 13): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Whitening(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.linear = nn.Linear(n, n)\n        self.gram = torch.zeros(n, n)\n\n    def forward(self, x):\n        self.gram = (self.gram + torch.einsum("bi,bj->ij", x, x)).detach()\n        return self.linear(x)\n\n',
            ),
            runtime='encoder = nn.Linear(4, 4)\nhead = Whitening(4)\nfor _ in range(3):\n    head(encoder(torch.randn(8, 4)))\nassert head.gram.grad_fn is not None',
            note='`torch.einsum("bi,bj->ij", x, x)`: the result keeps no operand\'s first index (the batch) - the same '
                 "sum over the batch as `x.T @ x`",
        ),
        Invalid(
            """
import torch
from torch import nn


class Whitening(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n)
        self.gram = torch.zeros(n, n)

    def forward(self, x):
        self.gram = self.gram + x.T @ x
        return self.linear(x)

""",
            range=(13, 8, 13, 17),
            message='`self.gram` is assigned a value with a graph in `forward()` after reading the previous call\'s `self.gram` (line 13): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Whitening(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.linear = nn.Linear(n, n)\n        self.gram = torch.zeros(n, n)\n\n    def forward(self, x):\n        self.gram = (self.gram + x.T @ x).detach()\n        return self.linear(x)\n\n',
            ),
            runtime='encoder = nn.Linear(4, 4)\nhead = Whitening(4)\nfor _ in range(3):\n    head(encoder(torch.randn(8, 4)))\nassert head.gram.grad_fn is not None',
            note="`x.T @ x` (the Gram matrix of the input) is the sum over the batch of each row's outer product - "
                 "`(x[:, :, None] * x[:, None, :]).sum(0)` - a reduction of the input like `x.sum(0)`, accumulated across calls",
        ),
        Invalid(
            """
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8)
        self.head = nn.Linear(8, 2)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)
        return self.head(out)


model = Tagger()
for step in range(2):
    loss = model(torch.randn(5, 3, 4)).pow(2).mean()
    loss.backward()
""",
            range=(14, 13, 14, 24),
            message='`self.hidden` is assigned a value with a graph in `forward()` after reading the previous call\'s `self.hidden` (line 14): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Tagger(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lstm = nn.LSTM(4, 8)\n        self.head = nn.Linear(8, 2)\n        self.hidden = None\n\n    def forward(self, x):\n        if isinstance(self.hidden, tuple):\n            self.hidden = type(self.hidden)(*(s.detach() for s in self.hidden)) if hasattr(self.hidden, \"_fields\") else tuple(s.detach() for s in self.hidden)\n        elif self.hidden is not None:\n            self.hidden = self.hidden.detach()\n        out, self.hidden = self.lstm(x, self.hidden)\n        return self.head(out)\n\n\nmodel = Tagger()\nfor step in range(2):\n    loss = model(torch.randn(5, 3, 4)).pow(2).mean()\n    loss.backward()\n',
            ),
            raises=SECOND_TIME,
            note="an LSTM's state kept on the module (the tagger tutorials' self.hidden)",
        ),
        Invalid(
            """
import torch
from torch import nn


class EncoderWithMemory(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.memory = torch.zeros(0, 4)

    def forward(self, x):
        h = self.proj(x)
        self.memory = torch.cat([self.memory, h])
        return h.sum() + self.memory.mean()


enc = EncoderWithMemory()
for step in range(2):
    enc(torch.randn(3, 4)).backward()
""",
            range=(14, 8, 14, 19),
            message='`self.memory` is assigned a value with a graph in `forward()` after reading the previous call\'s `self.memory` (line 14): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass EncoderWithMemory(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(4, 4)\n        self.memory = torch.zeros(0, 4)\n\n    def forward(self, x):\n        h = self.proj(x)\n        self.memory = torch.cat([self.memory, h]).detach()\n        return h.sum() + self.memory.mean()\n\n\nenc = EncoderWithMemory()\nfor step in range(2):\n    enc(torch.randn(3, 4)).backward()\n',
            ),
            raises=SECOND_TIME,
            note='a memory concatenated call after call; read again in the same call: the fix is unsafe',
        ),
        Invalid(
            """
import torch
from torch import nn


class FeatureTracker(nn.Module):
    def __init__(self, dim=4, momentum=0.9):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.momentum = momentum
        self.register_buffer("center", torch.zeros(dim))

    def _update_center(self, feats):
        self.center = self.momentum * self.center + (1 - self.momentum) * feats.mean(0)

    def forward(self, x):
        feats = self.fc(x)
        self._update_center(feats)
        return feats.pow(2).mean()


tracker = FeatureTracker()
for step in range(2):
    tracker(torch.randn(6, 4)).backward()
""",
            range=(14, 8, 14, 19),
            message='`self.center` is assigned a value with a graph in `_update_center()` after reading the previous call\'s `self.center` (line 14): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass FeatureTracker(nn.Module):\n    def __init__(self, dim=4, momentum=0.9):\n        super().__init__()\n        self.fc = nn.Linear(dim, dim)\n        self.momentum = momentum\n        self.register_buffer("center", torch.zeros(dim))\n\n    def _update_center(self, feats):\n        self.center = (self.momentum * self.center + (1 - self.momentum) * feats.mean(0)).detach()\n\n    def forward(self, x):\n        feats = self.fc(x)\n        self._update_center(feats)\n        return feats.pow(2).mean()\n\n\ntracker = FeatureTracker()\nfor step in range(2):\n    tracker(torch.randn(6, 4)).backward()\n',
            ),
            runtime='sizes = []\nfor _ in range(2):\n    tracker(torch.randn(6, 4)).backward()\n    sizes.append(graph_size(tracker.center))\nassert sizes[0] < sizes[1]',
            note='a moving average in a helper only forward calls: nothing saved, so no error, but the graph grows every call',
        ),
        Invalid(
            """
import torch
from torch import nn


class CharRNN(nn.Module):
    def __init__(self, vocab=10, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        self.h = None

    def forward(self, tokens):
        if self.h is None:
            self.h = torch.zeros(1, tokens.size(0), self.gru.hidden_size)
        y, self.h = self.gru(self.embed(tokens), self.h)
        return self.out(y)


net = CharRNN()
for step in range(2):
    logits = net(torch.randint(0, 10, (2, 5)))
    logits.logsumexp(-1).mean().backward()
""",
            range=(17, 11, 17, 17),
            message='`self.h` is assigned a value with a graph in `forward()` after reading the previous call\'s `self.h` (line 17): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass CharRNN(nn.Module):\n    def __init__(self, vocab=10, hidden=16):\n        super().__init__()\n        self.embed = nn.Embedding(vocab, hidden)\n        self.gru = nn.GRU(hidden, hidden, batch_first=True)\n        self.out = nn.Linear(hidden, vocab)\n        self.h = None\n\n    def forward(self, tokens):\n        if self.h is None:\n            self.h = torch.zeros(1, tokens.size(0), self.gru.hidden_size)\n        if isinstance(self.h, tuple):\n            self.h = type(self.h)(*(s.detach() for s in self.h)) if hasattr(self.h, \"_fields\") else tuple(s.detach() for s in self.h)\n        elif self.h is not None:\n            self.h = self.h.detach()\n        y, self.h = self.gru(self.embed(tokens), self.h)\n        return self.out(y)\n\n\nnet = CharRNN()\nfor step in range(2):\n    logits = net(torch.randint(0, 10, (2, 5)))\n    logits.logsumexp(-1).mean().backward()\n',
            ),
            raises=SECOND_TIME,
            note='a GRU state created lazily in a branch, then carried',
        ),
        Invalid(
            """
import torch
from torch import nn


class RunningNorm(nn.Module):
    def __init__(self, n=4, momentum=0.1):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(n))

    def forward(self, x):
        h = self.fc(x)
        mean = h.mean(0)
        self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
        return (h - self.running_mean).pow(2).mean()


norm = RunningNorm()
for step in range(2):
    norm(torch.randn(8, 4)).backward()
""",
            range=(16, 8, 16, 25),
            message='`self.running_mean` is updated in place in `forward()` with a value that carries a graph: the state keeps every past batch\'s graph reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; update it under `torch.no_grad()` or from detached values',
            raises=SECOND_TIME,
            note="a running statistic updated in place from a graph-carrying batch mean (nflows' BatchNorm): the buffer chains every batch's graph",
        ),
        Invalid(
            """
import torch
from torch import nn


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps=1e-5, momentum=0.9):
    mean = X.mean(dim=0)
    var = ((X - mean) ** 2).mean(dim=0)
    X_hat = (X - mean) / torch.sqrt(var + eps)
    moving_mean = momentum * moving_mean + (1.0 - momentum) * mean
    moving_var = momentum * moving_var + (1.0 - momentum) * var
    return gamma * X_hat + beta, moving_mean, moving_var


class BatchNorm(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(num_features))
        self.beta = nn.Parameter(torch.zeros(num_features))
        self.moving_mean = torch.zeros(num_features)
        self.moving_var = torch.ones(num_features)

    def forward(self, X):
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean, self.moving_var)
        return Y
""",
            range=(24, 11, 24, 27),
            message="`self.moving_mean`, `self.moving_var` are assigned values with a graph in `forward()` after reading the previous call's `self.moving_mean` (line 25): every past batch's graph stays reachable, memory grows with every call; detach them when storing them",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef batch_norm(X, gamma, beta, moving_mean, moving_var, eps=1e-5, momentum=0.9):\n    mean = X.mean(dim=0)\n    var = ((X - mean) ** 2).mean(dim=0)\n    X_hat = (X - mean) / torch.sqrt(var + eps)\n    moving_mean = momentum * moving_mean + (1.0 - momentum) * mean\n    moving_var = momentum * moving_var + (1.0 - momentum) * var\n    return gamma * X_hat + beta, moving_mean, moving_var\n\n\nclass BatchNorm(nn.Module):\n    def __init__(self, num_features):\n        super().__init__()\n        self.gamma = nn.Parameter(torch.ones(num_features))\n        self.beta = nn.Parameter(torch.zeros(num_features))\n        self.moving_mean = torch.zeros(num_features)\n        self.moving_var = torch.ones(num_features)\n\n    def forward(self, X):\n        if isinstance(self.moving_mean, tuple):\n            self.moving_mean = type(self.moving_mean)(*(s.detach() for s in self.moving_mean)) if hasattr(self.moving_mean, \"_fields\") else tuple(s.detach() for s in self.moving_mean)\n        elif self.moving_mean is not None:\n            self.moving_mean = self.moving_mean.detach()\n        if isinstance(self.moving_var, tuple):\n            self.moving_var = type(self.moving_var)(*(s.detach() for s in self.moving_var)) if hasattr(self.moving_var, \"_fields\") else tuple(s.detach() for s in self.moving_var)\n        elif self.moving_var is not None:\n            self.moving_var = self.moving_var.detach()\n        Y, self.moving_mean, self.moving_var = batch_norm(\n            X, self.gamma, self.beta, self.moving_mean, self.moving_var)\n        return Y\n',
            ),
            runtime="lin, bn, sizes = nn.Linear(3, 3), BatchNorm(3), []\nfor _ in range(3):\n    bn(lin(torch.randn(8, 3))).pow(2).mean().backward()\n    sizes.append(graph_size(bn.moving_mean))\nassert sizes[0] < sizes[1] < sizes[2]",
            note="d2l's from-scratch batch norm before its fix: a helper returns the moving statistics computed from the input's batch statistics, and the forward stores them - each keeps the graph of every batch before (they do not reach the output, so nothing raises: memory only grows)",
        ),
        Invalid(
            """
import torch
from torch import nn


class LIF(nn.Module):
    def __init__(self, alpha=0.9, threshold=1.0):
        super().__init__()
        self.alpha, self.threshold = alpha, threshold
        self.register_buffer("v_mem", torch.zeros(1))

    def forward(self, x):
        spikes = []
        for t in range(x.shape[1]):
            self.v_mem = self.alpha * self.v_mem + x[:, t]
            spk = torch.sigmoid(4 * (self.v_mem - self.threshold))
            spikes.append(spk)
        return torch.stack(spikes, 1)
""",
            range=(15, 12, 15, 22),
            message='`self.v_mem` is assigned a value with a graph in `forward()` after reading the previous call\'s `self.v_mem` (line 15): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass LIF(nn.Module):\n    def __init__(self, alpha=0.9, threshold=1.0):\n        super().__init__()\n        self.alpha, self.threshold = alpha, threshold\n        self.register_buffer("v_mem", torch.zeros(1))\n\n    def forward(self, x):\n        spikes = []\n        for t in range(x.shape[1]):\n            self.v_mem = (self.alpha * self.v_mem + x[:, t]).detach()\n            spk = torch.sigmoid(4 * (self.v_mem - self.threshold))\n            spikes.append(spk)\n        return torch.stack(spikes, 1)\n',
            ),
            runtime="lin, lif = nn.Linear(4, 4), LIF()\nlif(lin(torch.randn(2, 3, 4)).transpose(1, 2)).sum().backward()\ntry:\n    lif(lin(torch.randn(2, 3, 4)).transpose(1, 2)).sum().backward()\n    raised = ''\nexcept RuntimeError as e:\n    raised = str(e)\nassert 'Trying to backward through the graph a second time' in raised",
            note="sinabs' LIF layer: the membrane integrates the input's time steps (`x[:, t]`, the output of the layers before) and is carried into the next call",
        ),
        Invalid(
            """
import torch
from torch import nn


class RunningNorm(nn.Module):
    def __init__(self, features, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.scale = nn.Parameter(torch.ones(features))
        self.register_buffer("running_mean", torch.zeros(features))

    def update_stats(self, mean):
        self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean

    def forward(self, x):
        self.update_stats(x.mean(0))
        return (x - self.running_mean) * self.scale
""",
            range=(14, 8, 14, 25),
            message='`self.running_mean` is assigned a value with a graph in `update_stats()` after reading the previous call\'s `self.running_mean` (line 14): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass RunningNorm(nn.Module):\n    def __init__(self, features, momentum=0.1):\n        super().__init__()\n        self.momentum = momentum\n        self.scale = nn.Parameter(torch.ones(features))\n        self.register_buffer("running_mean", torch.zeros(features))\n\n    def update_stats(self, mean):\n        self.running_mean = ((1 - self.momentum) * self.running_mean + self.momentum * mean).detach()\n\n    def forward(self, x):\n        self.update_stats(x.mean(0))\n        return (x - self.running_mean) * self.scale\n',
            ),
            runtime="lin, norm, sizes = nn.Linear(3, 3), RunningNorm(3), []\nfor _ in range(3):\n    out = norm(lin(torch.randn(8, 3)))\n    sizes.append(graph_size(norm.running_mean))\nassert sizes[0] < sizes[1] < sizes[2]\nout.sum().backward()\ntry:\n    norm(lin(torch.randn(8, 3))).sum().backward()\n    raised = ''\nexcept RuntimeError as e:\n    raised = str(e)\nassert 'Trying to backward through the graph a second time' in raised",
            note="the running-statistics update moved into a method forward() calls, given the batch mean: it is part of forward()'s computation, as inline; forward() reads the statistic again after the call, so the fix is unsafe",
        ),
        Invalid(
            """
import torch
from torch import nn


def with_count(value, n):
    return value, n


class RunningNorm(nn.Module):
    def __init__(self, n=4, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(n))

    def forward(self, x):
        self.mean = with_count((1 - self.momentum) * self.mean + self.momentum * x.mean(0), x.shape[0])[0]
        return x - self.mean


net = nn.Sequential(nn.Linear(4, 4), RunningNorm())
for _ in range(2):
    net(torch.randn(8, 4)).pow(2).mean().backward()
""",
            range=(17, 8, 17, 17),
            message="`self.mean` is assigned a value with a graph in `forward()` after reading the previous "
            "call's `self.mean` (line 17): every past batch's graph stays reachable, memory grows with "
            'every call, and the next `.backward()` fails with "Trying to backward through the graph a '
            'second time"; detach it when storing it',
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\ndef with_count(value, n):\n    return value, n\n\n\n"
                "class RunningNorm(nn.Module):\n    def __init__(self, n=4, momentum=0.1):\n"
                "        super().__init__()\n        self.momentum = momentum\n"
                '        self.register_buffer("mean", torch.zeros(n))\n\n    def forward(self, x):\n'
                "        self.mean = with_count((1 - self.momentum) * self.mean + self.momentum * x.mean(0), x.shape[0])[0].detach()\n"
                "        return x - self.mean\n\n\nnet = nn.Sequential(nn.Linear(4, 4), RunningNorm())\n"
                "for _ in range(2):\n    net(torch.randn(8, 4)).pow(2).mean().backward()\n",
            ),
            raises=SECOND_TIME,
            note="a running mean updated from the input and handed through a helper's tuple (`with_count(...)[0]`): the value is the update itself",
        ),
        Invalid(
            """
import torch
from torch import nn


class Leaky(nn.Module):
    def __init__(self, beta=0.9):
        super().__init__()
        self.beta = beta
        self.mem = None

    def integrate(self, cur):
        self.mem = self.beta * self.mem + cur

    def forward(self, cur):
        if self.mem is None:
            self.mem = torch.zeros_like(cur)
        self.integrate(cur)
        return torch.sigmoid(self.mem - 1.0)


class SpikingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.lif = Leaky()

    def forward(self, x):
        return self.lif(self.fc(x))
""",
            range=(13, 8, 13, 16),
            message='`self.mem` is assigned a value with a graph in `integrate()` after reading the previous call\'s `self.mem` (line 13): every past batch\'s graph stays reachable, memory grows with every call, and the next `.backward()` fails with "Trying to backward through the graph a second time"; detach it when storing it',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Leaky(nn.Module):\n    def __init__(self, beta=0.9):\n        super().__init__()\n        self.beta = beta\n        self.mem = None\n\n    def integrate(self, cur):\n        self.mem = (self.beta * self.mem + cur).detach()\n\n    def forward(self, cur):\n        if self.mem is None:\n            self.mem = torch.zeros_like(cur)\n        self.integrate(cur)\n        return torch.sigmoid(self.mem - 1.0)\n\n\nclass SpikingNet(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 6)\n        self.lif = Leaky()\n\n    def forward(self, x):\n        return self.lif(self.fc(x))\n',
            ),
            note="the state is integrated by a method the forward calls; the forward is first walked on its own, then for the network's call that gives it a graph: the method is given that graph",
            runtime='net = SpikingNet()\nnet(torch.randn(2, 4)).sum().backward()\ntry:\n    net(torch.randn(2, 4)).sum().backward()\nexcept RuntimeError as e:\n    assert "backward through the graph a second time" in str(e)\nelse:\n    raise AssertionError("no error")',
        ),
    ]


def _in_forward(fn, seen=None) -> bool:
    """`forward` (or `__call__`) itself, or a method only forwards of this file call. Unlike
    GG101's guess, a method nobody here calls is not taken for a forward helper: `__init__`,
    `set_input_size()` or `reset_classifier()` assign attributes from what they read, once."""
    if forward_code(fn) or fn.name == "__call__":
        return True
    seen = seen if seen is not None else set()
    seen.add(fn)
    callers = [c for c in fn.callers if c not in seen]
    return bool(callers) and all(_in_forward(c, seen) for c in callers)


def _owner(fn):
    """The method whose call `fn`'s events belong to: for a method walked at `self.helper(...)` in
    another method's walk (the helper's `self` is the caller's), that caller's owner; else `fn`."""
    seen = set()
    while fn.walked_at is not None and fn.cls is not None and fn not in seen:
        seen.add(fn)
        call, caller = fn.walked_at
        func = call.func
        if (caller is None or caller.cls is None or not caller.in_progress or not isinstance(func, cst.Attribute)
                or not isinstance(func.value, cst.Name) or func.value.value != "self"):
            break
        fn = caller
    return fn


def _steps_given(fn) -> frozenset:
    """The parameters of a method the forward calls in a `for` loop that the call gives the loop's
    variable (`self.integrate(x, t)` in `for t in range(x.shape[1]):`)."""
    if _owner(fn) is fn:
        return frozenset()
    call, caller = fn.walked_at
    steps = {n.value for test in _enclosing(caller.node, call) if isinstance(test, cst.For)
             for n in _names_in(test.target)} | _steps_given(caller)
    return _given(fn.node, call, steps, 1)


def _enclosing(root: cst.CSTNode, target: cst.CSTNode) -> list:
    """The statements around `target` inside `root`."""
    walk = _PathTo(target)
    root.visit(walk)
    return walk.around


def _given(fn: cst.FunctionDef, call: cst.Call, names: set, skip: int, reducing: frozenset = frozenset()) -> frozenset:
    """The parameters of `fn` (past the first `skip`: a method's `self`) that `call` gives an
    argument mentioning one of `names` (or a reduction of one of `reducing`: `x.mean(0)`)."""
    ps = fn.params
    params = [p.name.value for p in (*ps.posonly_params, *ps.params)][skip:]

    def gives(arg: cst.Arg) -> bool:
        return any(m.value in names for m in _names_in(arg.value)) or bool(reducing) and _reduces(arg.value, reducing)

    given = {params[i] for i, a in enumerate(a for a in call.args if a.keyword is None)
             if i < len(params) and gives(a)}
    given |= {a.keyword.value for a in call.args if a.keyword is not None and gives(a)}
    return frozenset(given)


def _reads_attr(expr, attr: str, assigned: bool = False) -> bool:
    """Does `expr` read `self.<attr>` (with `assigned`: does a statement in it assign one)?"""
    if expr is None:
        return False
    find = _FindAttr(attr, assigned)
    walk_tree(expr, find)
    return find.found


class _FindAttr(cst.CSTVisitor):
    def __init__(self, attr: str, assigned: bool):
        self.attr = attr
        self.assigned = assigned
        self.found = False

    def _is_attr(self, node) -> bool:
        return (isinstance(node, cst.Attribute) and node.attr.value == self.attr
                and isinstance(node.value, cst.Name) and node.value.value == "self")

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not self.assigned and self._is_attr(node):
            self.found = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if self.assigned and self._is_attr(node.target):
            self.found = True


class _CallSites(cst.CSTVisitor):
    """Every call by the name called (`x.reset_hidden()` -> "reset_hidden"), each with its
    function, the loops around it and, per `backward()` of that function, the loops around it."""

    def __init__(self):
        self.loops: list = []
        self.by_name: dict = {}
        self._open: list = []  # per function being walked: [(name, loops) of its calls], [loops of its backwards]

    def visit_FunctionDef(self, node) -> None:
        self._open.append(([], []))

    def leave_FunctionDef(self, node) -> None:
        calls, backs = self._open.pop()
        for name, loops in calls:
            self.by_name.setdefault(name, []).append((node, loops, backs))

    def visit_For(self, node) -> None:
        self.loops.append(node)

    def leave_For(self, node) -> None:
        self.loops.pop()

    def visit_While(self, node) -> None:
        self.loops.append(node)

    def leave_While(self, node) -> None:
        self.loops.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name is None:
            return
        if name == "backward" and self._open:
            self._open[-1][1].append(tuple(self.loops))
        elif self._open:
            self._open[-1][0].append((name, tuple(self.loops)))
        else:
            self.by_name.setdefault(name, []).append((None, tuple(self.loops), []))


def _conditions(root: cst.CSTNode, target: cst.CSTNode) -> list:
    """The tests of the `if`s (and `while`s) around `target` inside `root`."""
    walk = _PathTo(target)
    root.visit(walk)  # on_visit: libcst's own walk
    return walk.tests


class _PathTo(cst.CSTVisitor):
    def __init__(self, target: cst.CSTNode):
        self.target = target
        self.path: list = []
        self.tests: list = []
        self.around: list = []
        self.done = False

    def on_visit(self, node) -> bool:
        if self.done:
            return False
        if node is self.target:
            self.tests = [n.test for n in self.path if isinstance(n, (cst.If, cst.While))]
            self.around = list(self.path)
            self.done = True
            return False
        self.path.append(node)
        return True

    def on_leave(self, node) -> None:
        if self.path and self.path[-1] is node:
            self.path.pop()


def _names_in(expr: cst.CSTNode) -> list:
    collect = _NameCollector()
    walk_tree(expr, collect)
    return collect.names


class _NameCollector(cst.CSTVisitor):
    def __init__(self):
        self.names: list = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value not in METADATA and node.attr.value != "data":  # `x.device`, `x.data`: no graph
            walk_tree(node.value, self)  # `x.mean` reads `x`
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in CUTS:
            return False  # `b_var.detach()`: no graph comes through it
        if isinstance(func, cst.Attribute) and func.attr.value in METADATA_METHODS:
            for arg in node.args:  # `x.size(0)` reads no values of `x`
                walk_tree(arg, self)
            return False
        if isinstance(func, cst.Attribute) and func.attr.value in SHAPING_METHODS:
            walk_tree(func.value, self)  # `t.to(dtype=dtype, device=device)`, `t.view(b, -1)`: only `t` is a value
            return False
        walk_tree(func, self)
        for arg in node.args:  # `torch.zeros(n, device=x.device, dtype=dtype)`: keywords that are no values
            if arg.keyword is None or arg.keyword.value not in ("dtype", "device", "layout", "memory_format"):
                walk_tree(arg.value, self)
        return False


def derived_names(fn: cst.FunctionDef, params: set, stats: frozenset = frozenset()) -> tuple[set, set]:
    """(names computed from `params`, the subset that are reductions of them: `mean = x.mean(0)`,
    or among the parameters `stats` given reductions), from the function's assignments in source order."""
    derived, stats, params = set(params) | stats, set(stats), frozenset(params) | stats
    for _ in range(2):  # assignments in loops may feed earlier ones
        walk = _Derive(derived, stats, params)
        walk_tree(fn.body, walk)
    return derived, stats


def _turns_grad_off(item: cst.BaseExpression) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)`."""
    code = item.func if isinstance(item, cst.Call) else item
    name = dotted(code) or ""
    if name.endswith("set_grad_enabled"):
        return isinstance(item, cst.Call) and bool(item.args) and isinstance(item.args[0].value, cst.Name) \
            and item.args[0].value.value == "False"
    return name.endswith(("no_grad", "inference_mode"))


REDUCTIONS = ("mean", "var", "std", "sum", "norm", "amax", "amin", "var_mean")


def _reduces(expr: cst.CSTNode, derived: set) -> bool:
    """Does `expr` reduce a value computed from the input (`x.mean(0)`, `torch.var(h, 0)`)?"""
    find = _Reduction(derived)
    walk_tree(expr, find)
    return find.found


class _Reduction(cst.CSTVisitor):
    def __init__(self, derived: set):
        self.derived = derived
        self.found = False

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in K.NEVER_GRAD_METHODS:
            return False  # `x.mean(0).detach()`, `.item()`: no graph of the input left in it
        if isinstance(func, cst.Attribute) and func.attr.value in REDUCTIONS:
            operands = [func.value] + ([node.args[0].value] if node.args and _is_torch(func.value) else [])
            if any(n.value in self.derived for o in operands for n in _names_in(o) if n.value != "torch"):
                self.found = True
        if _batch_contracted(node) and any(n.value in self.derived for a in node.args[1:] for n in _names_in(a.value)):
            self.found = True  # `torch.einsum("bi,bj->ij", x, x)`: summed over the batch, as `x.T @ x`
        return None

    def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
        return False if node.attr.value == "data" else None

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> Optional[bool]:
        # `x.T @ x`: the sum over the rows (the batch) of their outer products - `(x[:, :, None] *
        # x[:, None, :]).sum(0)` - a reduction over the batch like `x.sum(0)`
        if isinstance(node.operator, cst.MatrixMultiply) and _transposed(node.left) is not None and any(
                n.value in self.derived for o in (_transposed(node.left), node.right) for n in _names_in(o)):
            self.found = True
        return None


def _batch_contracted(node: cst.Call) -> bool:
    """`torch.einsum("bi,bj->ij", x, y)`: an einsum whose result keeps no operand's first index (the
    batch) - a sum over it."""
    if (dotted(node.func) or "").rsplit(".", 1)[-1] != "einsum" or len(node.args) < 2:
        return False
    spec = node.args[0].value
    if not isinstance(spec, cst.SimpleString) or "->" not in spec.evaluated_value:
        return False
    inputs, _, output = spec.evaluated_value.replace(" ", "").partition("->")
    firsts = [term[:1] for term in inputs.split(",")]
    return all(f.isalpha() and f not in output for f in firsts)


def _transposed(node) -> Optional[cst.BaseExpression]:
    """`x` of `x.T`, `x.t()`, `x.transpose(0, 1)`: a matrix whose rows became its columns."""
    if isinstance(node, cst.Attribute) and node.attr.value == "T":
        return node.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        args = [a.value for a in node.args]
        if node.func.attr.value == "t" and not args:
            return node.func.value
        if node.func.attr.value == "transpose" and len(args) == 2 and all(isinstance(a, cst.Integer) for a in args) \
                and sorted(int(a.value) for a in args) == [0, 1]:
            return node.func.value
    return None


def _is_torch(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "torch"


class _Derive(cst.CSTVisitor):
    def __init__(self, derived: set, stats: set, params: frozenset = frozenset()):
        self.derived = derived
        self.stats = stats
        self.params = params
        self.off = 0  # depth of `with torch.no_grad():` blocks around the statement

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_With(self, node: cst.With) -> None:
        if any(_turns_grad_off(item.item) for item in node.items):
            self.off += 1

    def leave_With(self, node: cst.With) -> None:
        if any(_turns_grad_off(item.item) for item in node.items):
            self.off -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        names = {n.value for n in _names_in(node.value)}
        if self.off:  # computed under no_grad (mmseg's EMA bases): no graph of the input behind it
            bound = {n for t in node.targets for n in _bound_names(t.target)}
            self.derived.difference_update(bound - self.params)
            self.stats.difference_update(bound)
            return
        if names & self.derived:
            bound = [n for t in node.targets for n in _bound_names(t.target)]
            self.derived.update(bound)
            if names & self.stats or _reduces(node.value, self.derived):
                self.stats.update(bound)


# Methods that return the same values elsewhere or in another type, with the graph.
MOVES = frozenset("to cuda cpu float double half type contiguous".split())


def _moved(rhs: Optional[cst.BaseExpression], attr: str) -> bool:
    """`self.<attr>.to(device)`, `self.<attr>.cuda().float()`: the attribute's value moved, graph and all."""
    node, moved = rhs, False
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in MOVES:
        node, moved = node.func.value, True
    return (moved and isinstance(node, cst.Attribute) and node.attr.value == attr
            and isinstance(node.value, cst.Name) and node.value.value == "self")


def _bound_names(target: cst.BaseExpression) -> list:
    """The plain names a target binds (`a, (b, self.c)` -> a, b)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound_names(e.value)]
    return []


def _detaches_in_place(fn: cst.FunctionDef) -> bool:
    """Does the method call `.detach_()` (a reset that cuts its buffers from every graph)?"""
    return any(isinstance(n, cst.Attribute) and n.attr.value == "detach_" for n in descendants(fn))


def _methods(module: cst.Module, cls: cst.ClassDef, depth: int = 0) -> list:
    """The methods of a class and of its base classes defined at the top of the same file."""
    found = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)] if isinstance(cls.body, cst.IndentedBlock) else []
    if depth < 5:
        bases = {b.value.value for b in cls.bases if isinstance(b.value, cst.Name)}
        for stmt in module.body:
            if isinstance(stmt, cst.ClassDef) and stmt.name.value in bases and stmt is not cls:
                found += _methods(module, stmt, depth + 1)
    return found
