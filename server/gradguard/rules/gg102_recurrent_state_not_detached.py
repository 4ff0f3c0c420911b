from __future__ import annotations

import re

import libcst as cst

from gradguard.engine import steps
from gradguard.engine.handing import argument
from gradguard.engine.reaching import reaches_backward
from gradguard.engine.model import Binding, GradMode
from gradguard.engine.syntax import is_self_attribute, place_key
from gradguard.engine.values import UNKNOWN, Kind, all_origins, holds_graph
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

SECOND_TIME = "Trying to backward through the graph a second time"


class RecurrentStateNotDetached(Rule):
    """
    ## What it does
    Finds a variable carried from one loop iteration into the next and fed back
    into the model - `hidden = model(x, hidden)`, `out, (h, c) = lstm(x, (h, c))`,
    `state = state + net(state)` - while each iteration back-propagates a loss
    that depends on it, with no `state.detach()` at the iteration boundary.
    A method's own `self.state` is followed like a local, and a function of the
    file that runs the model (`out, h = step(model, x, h)`) counts as the model.

    ## Why is this bad?
    The new state's graph reaches back through every earlier batch. The second
    `backward()` fails with "Trying to backward through the graph a second time"
    (the previous batch's part was freed), and with `retain_graph=True` memory
    and backward time grow without bound. Truncated backpropagation through time
    detaches the state at the start of each batch.

    An unrolled sequence that is back-propagated once after the loop (time steps
    of one sequence) is left alone, as is a loop that detaches the state anywhere
    in its body. A state reset only under an `if` (`if done: hx = torch.zeros(...)`
    with no `else: hx = hx.detach()`) is carried on by the other iterations: the
    fix then detaches it just after that `if`.

    Also an inference loop that feeds a model its own state with grad on - a
    loop that picks discrete outputs from what the model computes
    (`scores.argmax(-1)`, `torch.multinomial(...)`, `dist.sample()`) or reads
    them out as numbers (`.item()`, `.numpy()`: a rollout's actions), whatever
    the function is called, that back-propagates nothing and returns, yields or
    keeps no graph: every step's graph stays reachable from the state until the
    loop ends. Its fix wraps the loop in `torch.no_grad()`. (After `.eval()`,
    GG103 reports the forward pass instead.)

    ## Example
    ```python
    hidden = torch.zeros(1, batch, size)
    for x, y in batches:
        out, hidden = rnn(x, hidden)
        loss = criterion(out, y)
        loss.backward()
    ```

    ## Use instead
    ```python
    hidden = torch.zeros(1, batch, size)
    for x, y in batches:
        hidden = hidden.detach()
        out, hidden = rnn(x, hidden)
        loss = criterion(out, y)
        loss.backward()
    ```

    ## Fix safety
    Safe: detaching the state at the start of the loop body keeps every value
    and every parameter's gradient (from the current batch on). A state that
    starts as a tensor gets `state = state.detach()`, a tuple
    `state = tuple(s.detach() for s in state)`; one that starts as `None` (the
    usual `hidden = None` before an `nn.LSTM` / `nn.GRU` loop) or as something
    the analysis cannot see gets four lines that work for `None`, a tensor and
    an LSTM's `(h, c)` tuple alike. The fix is safe only where the state is fed
    into a model with parameters (its output has a graph of its own); fed into
    anything else, the detached state may be all the graph there is and the
    next `backward()` would raise, so the fix is marked unsafe there.
    Like every fix that inserts code, it is unsafe where the state may be
    unbound at the top of the body, and not offered where the body binds it
    only later (it would raise UnboundLocalError on the first batch).
    """

    code = "GG102"
    name = "recurrent-state-not-detached"
    severity = Severity.WARNING
    summary = "Recurrent state is fed into the next iteration without `detach()`: the graph grows every batch"

    def __init__(self, *args):
        super().__init__(*args)
        self._fed: dict = {}  # (loop, outer binding) -> [(call node, name node)], in the order of the calls
        self._fed_name: dict = {}  # (loop, place) -> the calls fed what the place held from before the iteration
        self._before: dict = {}  # Assign node -> {name: binding before it}
        self._candidates: list = []  # (loop, name, old binding, new value, call, name node, stamp)
        self._cleared: set = set()  # (loop, name): rebound to a value without a graph in the loop
        self._ifs: list = []  # (innermost loop, node) of each enclosing `if`
        self._resets: dict = {}  # (loop, name) -> the `if` that resets the state only sometimes
        self._previous_step: dict = {}  # (step function, `self.h`) -> what the previous step left (_binding)

    def visit_Call(self, node: cst.Call) -> None:
        loops = self.flow.frame.loops
        if not loops:
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "detach_" and place_key(func.value) is not None:
            self._cleared.add((loops[-1], place_key(func.value)))
            return
        callee = self.flow.value(func)
        if callee.kind not in (Kind.MODULE, Kind.FUNCTION):
            return
        if callee.kind is Kind.FUNCTION and callee.cls is not None and not callee.cls.makes_graph:
            return  # a helper that calls no model (`accumulate(total, loss)`): no recurrence
        for place in [p for arg in node.args for p in _places(arg.value)] + self._fed_by_method(node, callee):
            b = self._binding(place)
            if b is not None and loops[-1] not in b.loops:
                self._fed.setdefault((loops[-1], b), []).append((node, place))
                self._fed_name.setdefault((loops[-1], place_key(place)), []).append(node)

    def _fed_by_method(self, node: cst.Call, callee) -> list:
        """The `self.x` a method of the class, called on `self` (`self.run(text)`), feeds into a model
        itself (`self(text, self.previous_hidden)` in its body): the call feeds them as if they were its
        arguments - a place the method assigns is its own, not the caller's state."""
        fn = callee.cls if callee.kind is Kind.FUNCTION else None
        current = self.flow.function
        if fn is None or current is None or fn.cls is None or fn.cls is not current.cls or fn is current \
                or not (isinstance(node.func, cst.Attribute) and is_self_attribute(node.func)):
            return []
        assigned = {place_key(t) for n in descendants(fn.node.body) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign))
                    for t in ([x.target for x in n.targets] if isinstance(n, cst.Assign) else [n.target])
                    for t in [t, *descendants(t)] if is_self_attribute(t)}
        places = []
        for call in descendants(fn.node.body):
            if not isinstance(call, cst.Call) or not _model_call(self.flow, call):
                continue
            places += [p for arg in call.args for p in _places(arg.value) if is_self_attribute(p) and place_key(p) not in assigned]
        return places

    def visit_If(self, node: cst.If) -> None:
        loops = self.flow.frame.loops
        self._ifs.append((loops[-1] if loops else None, node))

    def leave_If(self, node: cst.If) -> None:
        self._ifs.pop()

    def _conditional_reset(self, loop, name: str, node: cst.Assign) -> bool:
        """`if done: hx = torch.zeros(...)` with no detach on the other path: the iterations that
        skip the `if` carry the state on (A3C without its `else: hx = hx.detach()`). A detach, even
        a conditional one (`if step % k == 0`), still counts as the code's own cut."""
        ifs = [n for l, n in self._ifs if l is loop]
        if not ifs or re.search(rf"(?<![\w.]){re.escape(name)}\b", self.code_of(node.value)):
            return False
        self._resets.setdefault((loop, name), ifs[0])
        return True

    def _restarted(self, loop, name: str, node: cst.Assign) -> bool:
        """`state = initial` from a value made before the loop, or from one this iteration computed
        without the state (`decoder_hidden = encoder_hidden` for each sentence): the graph starts over."""
        rhs = node.value
        if place_key(rhs) in (None, name):
            return False
        source = self.flow.place_binding(rhs)
        if source is None:
            return False
        if loop not in source.loops:
            return True
        return not _depends_on(loop, place_key(rhs), name, frozenset(self._fed_name.get((loop, name), ())))

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.flow.frame.loops:
            self._before[node] = {
                place_key(p): (p, self._binding(p)) for t in node.targets for p in _places(t.target)
            }

    def _binding(self, place):
        """The binding `place` reads here; in a method a framework runs once per training step
        (`training_step`), a `self.h` not yet set in it holds what the previous step left."""
        b = self.flow.place_binding(place)
        loop = self.flow.frame.loops[-1] if self.flow.frame.loops else None
        if b is None and isinstance(loop, cst.FunctionDef) and is_self_attribute(place):
            b = self._previous_step.setdefault((loop, place_key(place)), Binding(UNKNOWN, ()))
        return b

    def leave_Assign(self, node: cst.Assign) -> None:
        before = self._before.pop(node, None)
        if before is None:
            return
        loops = self.flow.frame.loops
        for name, (place, old) in before.items():
            new = self.flow.place_binding(place)
            if new is None:
                continue
            # the loop that carries the state: the innermost that fed it to a model, an enclosing one when
            # the state is rebound in an inner loop of its iteration (`out, h = value` in
            # `for key, value in step(model, x, h).items():`)
            loop = next((l for l in reversed(loops) if (l, old) in self._fed), loops[-1]) if old is not None else loops[-1]
            if not holds_graph(new.value) or self._restarted(loop, name, node):
                # (a state set back each iteration to a value made before the loop - PPLM's
                # `curr_unpert_past = unpert_past` - starts over: its graph does not grow)
                if not self._conditional_reset(loop, name, node):
                    self._cleared.add((loop, name))
                continue
            calls = self._fed.get((loop, old), []) if old is not None else []
            # the call's graph is in the new state; a method of the file returns its own nodes' graph
            # (a helper of the file that runs the model, `out, h = step(model, x, h)`, returns its graph,
            # and `state = outputs["state"]` after `outputs = step(model, x, state)` reads part of it);
            # failing those, the first call whose own graph the new state holds (read back from a dict it
            # returned, through `.items()`)
            given = self.flow.handed_on(node.value)  # (`as_pair(model(x, h))[0]` is the call's result)
            # (the call whose result the state is bound to first: `h, c = cell(x, (h, c))` after `a = attend(h)`)
            fed = next((f for f in calls if new.node is f[0] or given is f[0] or self._part_of(given, f[0])), None) \
                or next((f for f in calls if f[0] in all_origins(new.value)), None) or next(
                (f for f in calls if self._made_by(f[0]) & all_origins(new.value)), None)
            if fed is None and not self._from_fed(loops, name, new.value):
                # `h = embed(word)` at the top of the iteration, then `for name, layer in layers.items():
                # h = layer(h)`: a graph made afresh, from no call the state was fed - the state starts over
                if not self._conditional_reset(loops[-1], name, node):
                    self._cleared.add((loops[-1], name))
            if fed is not None:
                outer = loops[:loops.index(loop) + 1]  # (an inner loop runs within one of its iterations)
                mode = self.flow.frame.mode if self.flow.frame.mode_nodes[-1] is None else None  # None: enable_grad
                self._candidates.append((outer, name, old, new.value, fed[0], fed[1], self.stamp(), mode))

    def _from_fed(self, loops, name: str, value) -> bool:
        """Does `value` hold a graph of a call that one of `loops` fed the state `name` (`h = torch.tanh(z)`
        after `z = cell(x, h)`)?"""
        graphs = all_origins(value)
        return any(call in graphs or self._made_by(call) & graphs
                   for loop in loops for call in self._fed_name.get((loop, name), ()))

    def _made_by(self, call: cst.Call) -> frozenset:
        """The graphs `call` returns that none of its arguments carried in: its own (a helper's
        `cell(x, h)`, in the dict it returns or read back through `.items()`)."""
        given = frozenset().union(*(all_origins(self.flow.value(a.value)) for a in call.args))
        return all_origins(self.flow.value(call)) - given

    def _part_of(self, expr, call) -> bool:
        """Is `expr` a part of what `call` returned (`outputs["state"]` after `outputs = call`)?"""
        while isinstance(expr, (cst.Subscript, cst.Attribute)) and not is_self_attribute(expr):
            expr = expr.value
        b = self.flow.place_binding(expr)
        return b is not None and b.node is call

    def finish(self) -> None:
        reported = set()
        for loops, name, old, new, call, name_node, stamp, mode in self._candidates:
            if not self.current(stamp):
                continue
            # The loop whose every iteration back-propagates the state's graph: the innermost one,
            # or an outer one (`for batch in loader:` around `for step in range(T):`) when no loop
            # in between resets the state.
            carried = None
            across = []  # the loops the state is carried across, innermost first (up to one that resets it)
            for loop in reversed(loops):
                if (loop, name) in self._cleared:
                    break
                reset = self._resets.get((loop, name))
                if reset is not None and call in descendants(reset.body):
                    break  # reset by the `if` that holds every use of the state (PPLM's horizon)
                across.append(loop)
                fn = stamp[0]
                if any(loop in b.loops and b.origins & all_origins(new) and _reaches(b, call, name_node)
                       for b in self.flow.backwards) or (
                        fn is not None and loop is fn.node and steps.framework_backward(fn, all_origins(new))):
                    carried = loop  # (a `training_step()`: the framework back-propagates the loss it returns)
                    break
            if carried is None:
                loop = self._generation_loop(across, new, call, stamp) if mode is GradMode.ON else None
                if loop is not None and (loop, None) not in reported:
                    reported.add((loop, None))  # one finding a loop: its fix (or no_grad) covers every state
                    self._report(loop, name, old, call, name_node, generating=True)
                continue  # nothing backwards it each iteration: an unrolled sequence, or GG103's business
            if (carried, name) in reported:
                continue
            reported.add((carried, name))
            self._report(carried, name, old, call, name_node)

    def _generation_loop(self, loops, new, call, stamp):
        """The innermost of `loops` (innermost first: those the state is carried across) that is an
        inference loop feeding a model its own state with grad on:
        `logits, state = model(x, state)` generating tokens, a world model stepped through an
        episode. Nothing in the function back-propagates the state's graph and nothing hands it
        on (returned), so it only grows; and the loop takes the model's outputs out of autograd
        step after step (_decodes), so it runs the model for them, whatever the function is called
        (a name, `generate` or `rollout`, is never the reason: rules.md). The callee must be a model
        with parameters."""
        fn = stamp[0]
        if fn is None or fn.decorated_mode is not None:
            return None
        if fn.cls is not None and fn.cls.module_like:
            return None  # a model's own method: its caller may back-propagate through the loop
        if not _model_call(self.flow, call):
            return None
        state = all_origins(new)
        if any(b.function is fn for b in self.flow.backwards) or state & all_origins(fn.returns):
            return None
        if any(st.function is fn for st in self.flow.stores):
            return None  # a graph kept for later (a rollout's log-probs in a memory): the update may need the state's
        # (the loop that decodes: an inner one running within one of its iterations - `for key, value in
        # as_dict(decoder).items():` around the step - picks nothing itself)
        loop = next((loop for loop in loops if self._decodes(fn, loop)), None)
        if loop is None:
            return None
        if self._evaluates(fn):
            return None  # after `.eval()`, GG103 reports the forward pass, with its no_grad fix
        return loop

    def _decodes(self, fn, loop) -> bool:
        """A loop that picks discrete outputs from what the model computes (`logits.argmax(-1)`,
        `torch.multinomial(probs, 1)`, `dist.sample()`) or reads them out as numbers (`.item()`,
        `.tolist()`, `.numpy()`: an action for an environment), and hands on no graph (no `yield` of
        one): a decoding, streaming or rollout loop, whatever the function is called (`stream_text`,
        `align_frames`, `run_episode`)."""
        finder = _Picks()
        walk(loop.body, finder)
        if not finder.found:
            return False
        yields = _Yields()
        walk(fn.node.body, yields)
        return not any(self.flow.value(y.value).has_graph for y in yields.found if y.value is not None)

    def _evaluates(self, fn) -> bool:
        """`model.eval()` somewhere in the function."""
        finder = _EvalCall()
        walk(fn.node, finder)
        return finder.found

    def _detach_spot(self, loop, name):
        """Where the detach goes: the start of the iteration, or just after an `if` that resets the
        state only sometimes (at the start, the first iteration would read a name not yet bound)."""
        reset = self._resets.get((loop, name))
        if reset is None:
            return loop.body.body[0]
        body = list(loop.body.body)
        i = next((i for i, st in enumerate(body) if st is reset), None)
        return body[i + 1] if i is not None and i + 1 < len(body) else None

    def _report(self, loop, name, old, call, name_node, generating: bool = False) -> None:
        fixes = []
        if generating:
            # Every state the loop feeds back (one finding a loop): no_grad stops them all, and the
            # loop's values stay the same - nothing in the function back-propagates or keeps them.
            if not has_multiline_string(self.code_of(loop)):
                torch = torch_name(self.flow) or "torch"
                fixes.append(PendingFix("Wrap the loop in `with torch.no_grad():`", Safety.SAFE,
                                        [(loop, wrap_in_no_grad(torch))] + import_torch(self.flow)))
        elif isinstance(loop.body, cst.IndentedBlock):
            lines, title = _detach_lines(name, old.value, self.flow.module.default_indent)
            first = self._detach_spot(loop, name)
            # Safe when the state is fed into a model with parameters: its output has a graph of
            # its own after the detach. Fed into anything else (a loss function), the detached
            # state may be all the graph there is, and the next backward would raise.
            callee = self.flow.value(call.func) if isinstance(call, cst.Call) else None
            model = callee is not None and (callee.kind is Kind.MODULE and callee.parameterized and not callee.loss or (
                callee.kind is Kind.FUNCTION and callee.cls is not None and callee.cls.makes_graph))  # a helper running one
            safety = Safety.SAFE if model else Safety.UNSAFE
            if first is not None:
                fixes.append(PendingFix(title, safety, [(("before", first), lambda spot, lines=lines: "".join(
                    f"{line}\n{spot.indent}" for line in lines))]))

        def message(line_of):
            if generating:
                return (
                    f"`{name}` carries the previous step's graph into `{short(self.code_of(call))}` with grad enabled "
                    f"and nothing back-propagates it: the graph grows with every step of the loop on line "
                    f"{line_of(loop)}; run the loop under `torch.no_grad()`"
                )
            reset = self._resets.get((loop, name))
            where = "at the start of the iteration" if reset is None else (
                f"after the `if` on line {line_of(reset)}, which resets it only sometimes,")
            previous = "previous iteration's"
            if isinstance(loop, cst.FunctionDef) and reset is None:  # a step the framework runs once per batch
                where, previous = f"at the start of `{loop.name.value}()`", "previous step's"
            return (
                f"`{name}` carries the {previous} graph into `{short(self.code_of(call))}`: without "
                f"`{name}.detach()` {where} the graph grows with every batch, and the next "
                f"`.backward()` fails with \"{SECOND_TIME}\""
            )

        related = [(call, "fed back into the model here")]
        self.report(name_node, message, fixes=fixes, related=related)

    VALID = [
        Valid(
            """
import torch
from torch import nn

rnn = nn.RNN(3, 5)
hidden = torch.zeros(1, 2, 5)
for x in [torch.randn(4, 2, 3) for _ in range(3)]:
    hidden = hidden.detach()
    out, hidden = rnn(x, hidden)
    loss = out.pow(2).mean()
    loss.backward()
""",
            note="truncated BPTT done right",
            runtime="assert rnn.weight_hh_l0.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn

cell = nn.GRUCell(3, 4)
h = torch.zeros(2, 4)
for t in range(5):
    h = cell(torch.randn(2, 3), h)
loss = h.pow(2).mean()
loss.backward()
""",
            note="the time steps of one sequence, back-propagated once",
            runtime="assert cell.weight_hh.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


def repackage(h):
    return h.detach()


lstm = nn.LSTM(3, 4)
h, c = torch.zeros(1, 2, 4), torch.zeros(1, 2, 4)
for x in [torch.randn(5, 2, 3) for _ in range(2)]:
    out, (h, c) = lstm(x, (h, c))
    out.mean().backward()
    h, c = repackage(h), repackage(c)
""",
            note="detached at the end of the iteration instead",
        ),
        Valid(
            """
import torch
from torch import nn

decoder = nn.GRUCell(4, 4)
head = nn.Linear(4, 4)


@torch.no_grad()
def rollout(start, steps):
    h = torch.zeros(1, 4)
    x = start
    tokens = []
    for _ in range(steps):
        h = decoder(x, h)
        x = torch.softmax(head(h), -1)
        tokens.append(int(x.argmax()))
    return tokens
""",
            note='the same rollout under @torch.no_grad()',
        ),
        Valid(
            """
import torch
from torch import nn

decoder = nn.GRUCell(4, 4)
head = nn.Linear(4, 4)


def rollout(start, steps):
    h = torch.zeros(1, 4)
    x = start
    tokens = []
    for _ in range(steps):
        h = decoder(x, h)
        x = torch.softmax(head(h), -1)
        tokens.append(int(x.argmax()))
    return tokens, h
""",
            note='the final state is returned: its caller may back-propagate through the unrolled steps',
        ),
        Valid(
            """
import torch
from torch import nn

cell = nn.GRUCell(4, 8)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
done = True
for update in range(3):
    if done:
        h = torch.zeros(1, 8)
    else:
        h = h.detach()
    for step in range(4):
        h = cell(torch.randn(1, 4), h)
        done = step == 9
    opt.zero_grad()
    h.pow(2).mean().backward()
    opt.step()
""",
            runtime='assert cell.weight_hh.grad is not None',
            note='A3C as written: reset when an episode ends, detached otherwise',
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


def greedy_decode(tokenizer, ids, max_len=5):
    text = tokenizer.decode(ids)
    for _ in range(max_len):
        ids = tokenizer.encode(text)
        text = tokenizer.decode(ids)
    return text
""",
            note="`encode`/`decode` are names other objects share (a tokenizer's): that one nn.Module of the file defines them does not make `tokenizer` one",
        ),
        Valid(
            """
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, frame, memory):
        return self.fc(frame + memory)


def smooth_labels(update, frames):
    memory = torch.zeros(1, 4)
    labels = []
    for frame in frames:
        memory = update(frame, memory, decay=0.9)
        labels.append(memory.argmax(-1))
    return labels
""",
            note="a smoothing function fed its own output: `decay=` is no parameter of `Scorer.forward()`, so `update` is not taken for a Scorer, and an update of plain tensors keeps no graph",
            runtime="labels = smooth_labels(lambda f, m, decay: decay * m + (1 - decay) * f, [torch.randn(1, 4) for _ in range(3)])\nassert all(l.grad_fn is None for l in labels)",
        ),
        Valid(
            """
import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = nn.Linear(4, 4)

    def forward(self, past_key_values, inputs_embeds):
        hidden = torch.tanh(self.step(past_key_values + inputs_embeds))
        return {"past_key_values": hidden, "hidden_states": [hidden]}


def perturb(model, classifier, unpert_past, inputs_embeds, loss_type, num_iterations=2, horizon_length=3):
    delta = torch.zeros_like(inputs_embeds, requires_grad=True)
    for i in range(num_iterations):
        loss = 0.0
        if loss_type == 2:
            curr_unpert_past = unpert_past
            accumulated = 0.0
            for _ in range(horizon_length):
                lm_output = model(past_key_values=curr_unpert_past, inputs_embeds=inputs_embeds + delta)
                curr_unpert_past, curr_all_hidden = lm_output["past_key_values"], lm_output["hidden_states"]
                accumulated = accumulated + curr_all_hidden[-1]
            loss = loss + classifier(accumulated).pow(2).mean()
        loss.backward()
        delta.data -= 0.01 * delta.grad
        delta.grad.zero_()
    return delta.detach()


model, classifier = TinyLM(), nn.Linear(4, 1)
for param in model.parameters():
    param.requires_grad = False
delta = perturb(model, classifier, torch.zeros(1, 4), torch.randn(1, 4), loss_type=2)
""",
            note="PPLM's horizon: inside the `if` that uses it, the state restarts each step from `unpert_past`, made before the loop, and the step back-propagates through the short horizon on purpose",
            runtime='assert delta.abs().sum() > 0',
        ),
        Valid(
            """
import torch
from torch import nn


def train_pair(input_tensor, target_tensor, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
    encoder_hidden = encoder.init_hidden()
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    loss = 0
    for ei in range(input_tensor.size(0)):
        encoder_output, encoder_hidden = encoder(input_tensor[ei], encoder_hidden)
    decoder_input = torch.zeros(1, 4)
    for di in range(target_tensor.size(0)):
        if di == 0:
            decoder_output, decoder_hidden = decoder(decoder_input, encoder_hidden)
        else:
            decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
        loss = loss + criterion(decoder_output, target_tensor[di])
        decoder_input = decoder_output.detach()
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item() / target_tensor.size(0)
""",
            note="the decoder's hidden state carried across the decoding steps of one sequence, with one backward after the loop: back-propagation through time, as sequence models train",
            runtime='class Enc(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.cell = nn.GRUCell(4, 4)\n    def init_hidden(self):\n        return torch.zeros(1, 4)\n    def forward(self, x, h):\n        h = self.cell(x.view(1, 4), h)\n        return h, h\nenc, dec = Enc(), Enc()\nvalue = train_pair(torch.randn(3, 4), torch.randn(2, 1, 4), enc, dec, torch.optim.SGD(enc.parameters(), lr=0.1),\n                   torch.optim.SGD(dec.parameters(), lr=0.1), nn.functional.mse_loss)\nassert isinstance(value, float) and enc.cell.weight_ih.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


def step(cell, x, h):
    return {"hidden": cell(x, h)}


def train(cell, head, batches, opt):
    h = torch.zeros(2, 4)
    for x, y in batches:
        opt.zero_grad()
        for name, value in step(cell, x, h).items():
            h = value
        loss = (head(h) - y).pow(2).mean()
        loss.backward()
        opt.step()
        h = h.detach()


cell, head = nn.RNNCell(3, 4), nn.Linear(4, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
train(cell, head, [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(3)], opt)
""",
            note="the same loop detaching the state at the end of each iteration",
            runtime="assert cell.weight_hh.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


def train(rnn, batches, opt):
    hidden = None
    for x in batches:
        out, hidden = tagged(rnn(x, hidden), "step")[0]
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        hidden = hidden.detach()
""",
            note="the same loop detaching the state after each step",
            runtime='rnn = nn.RNN(3, 4)\ntrain(rnn, [torch.randn(5, 2, 3) for _ in range(3)], torch.optim.SGD(rnn.parameters(), lr=0.1))\nassert rnn.weight_hh_l0.grad is not None',
        ),
        Valid(
            """
import lightning as L
import torch
from torch import nn


class CharModel(L.LightningModule):
    def __init__(self, vocab=10, dim=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)
        self.state = None

    def forward(self, tokens, state=None):
        out, state = self.rnn(self.embed(tokens), state)
        return self.head(out), state

    def training_step(self, batch, batch_idx):
        tokens, targets = batch
        logits, state = self(tokens, self.state)
        self.state = state.detach()
        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
""",
            note='the state kept for the next training step is detached: each step back-propagates through its own batch only',
            runtime='model = CharModel()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nbatch = (torch.randint(0, 10, (2, 5)), torch.randint(0, 10, (2, 5)))\nfor i in range(2):\n    loss = model.training_step(batch, i)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\nassert model.rnn.weight_hh_l0.grad is not None',
        ),
        Valid(
            """
import torch


def step(rnn, x, h):
    out, h = rnn(x, h)
    return out, h


def train(rnn, head, batches, opt):
    for x, y in batches:
        h = torch.zeros(1, 2, 4)
        out, h = step(rnn, x, h)
        loss = (head(out) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            note='the same helper, with the state started afresh for every batch',
            runtime='rnn, head = torch.nn.RNN(3, 4), torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)\ntrain(rnn, head, [(torch.randn(5, 2, 3), torch.randn(5, 2, 1)) for _ in range(2)], opt)\nassert rnn.weight_hh_l0.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn

embed, head = nn.Embedding(10, 4), nn.Linear(4, 10)
layers = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})


def train(batches, opt):
    for x, y in batches:
        h = embed(x)
        for name, layer in layers.items():
            h = layer(h)
        loss = nn.functional.cross_entropy(head(h), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            note='layers run in sequence over a dict (`for name, layer in layers.items(): h = layer(h)`), `h` made afresh from each batch first: the inner loop is one forward, and nothing carries over from the last batch',
            runtime='opt = torch.optim.SGD([*embed.parameters(), *layers.parameters(), *head.parameters()], lr=0.1)\ntrain([(torch.randint(0, 10, (3,)), torch.randint(0, 10, (3,))) for _ in range(3)], opt)\nassert head.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn

embed, head = nn.Embedding(10, 4), nn.Linear(4, 10)
layers = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})


@torch.no_grad()
def warm_up():
    head(torch.zeros(1, 4))


def greedy(steps):
    word = torch.zeros(1, dtype=torch.long)
    words = []
    for _ in range(steps):
        h = embed(word)
        for name, layer in layers.items():
            h = layer(h)
        word = head(h).argmax(1)
        words.append(word)
    return words
""",
            note="a decoding loop that rebuilds `h` from the token each step before the layers of a dict run on it: no state carries over from one step to the next (the forward's own no_grad question is GG103's)",
            runtime='words = greedy(3)\nassert len(words) == 3 and not words[0].requires_grad',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def fit(net, opt, x, y, epochs):
    total = 0.0
    for _ in range(epochs):
        total = add_step(total, net, opt, x, y)
    return total / epochs


def add_step(total, net, opt, x, y):
    total = total + one_step(net, opt, x, y)
    return total


def one_step(net, opt, x, y):
    loss = F.huber_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss
""",
            note="a running sum a helper adds to (issue 33's extract variant of brax): the backward inside it "
                 "never reaches what the caller passes for `total` (it shares only the nodes every call makes); "
                 "GG101 reports the sum",
            runtime='net = torch.nn.Linear(3, 1)\nmean = fit(net, torch.optim.SGD(net.parameters(), lr=0.01), torch.randn(4, 3), torch.randn(4, 1), 3)\nassert mean.requires_grad',
        ),
        Valid(
            """
import lightning as L
import torch
from torch import nn


class CharModel(L.LightningModule):
    def __init__(self, vocab=10, dim=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)
        self.state = None

    def forward(self, tokens, state=None):
        out, state = self.rnn(self.embed(tokens), state)
        return self.head(out), state

    def training_step(self, batch, batch_idx):
        tokens, targets = batch
        logits, state = self.run(tokens)
        self.state = state.detach()
        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())

    def run(self, tokens):
        return self(tokens, self.state)
""",
            note="the state a method of the step feeds to the model, stored detached",
            runtime='model = CharModel()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nbatch = (torch.randint(0, 10, (2, 5)), torch.randint(0, 10, (2, 5)))\nfor i in range(2):\n    loss = model.training_step(batch, i)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\nassert model.rnn.weight_hh_l0.grad is not None',
        ),
    ]

    INVALID = [
        Invalid(
            """
import lightning as L
import torch
from torch import nn


class CharModel(L.LightningModule):
    def __init__(self, vocab=10, dim=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)
        self.state = None

    def forward(self, tokens, state=None):
        out, state = self.rnn(self.embed(tokens), state)
        return self.head(out), state

    def training_step(self, batch, batch_idx):
        tokens, targets = batch
        logits, state = self.run(tokens)
        self.state = state
        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())

    def run(self, tokens):
        return self(tokens, self.state)
""",
            range=(26, 28, 26, 38),
            message='`self.state` carries the previous step\'s graph into `self.run(tokens)`: without `self.state.detach()` at the start of `training_step()` the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=('\nimport lightning as L\nimport torch\nfrom torch import nn\n\n\nclass CharModel(L.LightningModule):\n    def __init__(self, vocab=10, dim=6):\n        super().__init__()\n        self.embed = nn.Embedding(vocab, dim)\n        self.rnn = nn.GRU(dim, dim, batch_first=True)\n        self.head = nn.Linear(dim, vocab)\n        self.state = None\n\n    def forward(self, tokens, state=None):\n        out, state = self.rnn(self.embed(tokens), state)\n        return self.head(out), state\n\n    def training_step(self, batch, batch_idx):\n        if isinstance(self.state, tuple):\n            self.state = type(self.state)(*(s.detach() for s in self.state)) if hasattr(self.state, "_fields") else tuple(s.detach() for s in self.state)\n        elif self.state is not None:\n            self.state = self.state.detach()\n        tokens, targets = batch\n        logits, state = self.run(tokens)\n        self.state = state\n        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())\n\n    def run(self, tokens):\n        return self(tokens, self.state)\n',),
            note="the step's model call moved into a method of the class (issue 33's extract variants): `run()` reads "
                 "`self.state` itself, so the call `self.run(tokens)` feeds it",
            runtime="model = CharModel()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nbatch = (torch.randint(0, 10, (2, 5)), torch.randint(0, 10, (2, 5)))\nfor i in range(2):\n    loss = model.training_step(batch, i)\n    opt.zero_grad()\n    try:\n        loss.backward()\n    except RuntimeError as e:\n        assert 'backward through the graph a second time' in str(e) and i == 1\n    else:\n        assert i == 0\n    opt.step()",
        ),
        Invalid(
            """
import torch
from torch import nn


def step(rnn, opt, x, h):
    out, h = rnn(x, h)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return h


rnn = nn.RNN(3, 5)
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
h = torch.zeros(1, 2, 5)
for x in [torch.randn(4, 2, 3) for _ in range(3)]:
    h = step(rnn, opt, x, h)
""",
            range=(19, 26, 19, 27),
            message='`h` carries the previous iteration\'s graph into `step(rnn, opt, x, h)`: without `h.detach()` at the start of the iteration the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=('\nimport torch\nfrom torch import nn\n\n\ndef step(rnn, opt, x, h):\n    out, h = rnn(x, h)\n    loss = out.pow(2).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    return h\n\n\nrnn = nn.RNN(3, 5)\nopt = torch.optim.SGD(rnn.parameters(), lr=0.1)\nh = torch.zeros(1, 2, 5)\nfor x in [torch.randn(4, 2, 3) for _ in range(3)]:\n    h = h.detach()\n    h = step(rnn, opt, x, h)\n',),
            note="the backward runs inside the helper the state is fed to: the parameter given the state reaches what it back-propagates",
            raises=SECOND_TIME,
        ),
        Invalid(
            """
import torch


def train_tbptt(model, chunks, optimizer, criterion):
    model.train()
    hidden = None
    for x, y in chunks:
        optimizer.zero_grad()
        out, hidden = run_chunk(model, x, hidden)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()


def run_chunk(model, x, hidden):
    out, hidden = model(x, hidden)
    return out, hidden
""",
            range=(10, 42, 10, 48),
            message='`hidden` carries the previous iteration\'s graph into `run_chunk(model, x, hidden)`: without `hidden.detach()` at the start of the iteration the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=('\nimport torch\n\n\ndef train_tbptt(model, chunks, optimizer, criterion):\n    model.train()\n    hidden = None\n    for x, y in chunks:\n        if isinstance(hidden, tuple):\n            hidden = type(hidden)(*(s.detach() for s in hidden)) if hasattr(hidden, "_fields") else tuple(s.detach() for s in hidden)\n        elif hidden is not None:\n            hidden = hidden.detach()\n        optimizer.zero_grad()\n        out, hidden = run_chunk(model, x, hidden)\n        loss = criterion(out, y)\n        loss.backward()\n        optimizer.step()\n\n\ndef run_chunk(model, x, hidden):\n    out, hidden = model(x, hidden)\n    return out, hidden\n',),
            note="the call is made by a helper of the file (issue 33's extract variants): `model` is fed its own state there, "
                 "and `model.train()` alone says nothing either way",
            runtime='rnn, head = torch.nn.LSTM(3, 4), torch.nn.Linear(4, 1)\n'
                    'model = lambda x, h: (lambda o, s: (head(o), s))(*rnn(x, h))\n'
                    'model.train = lambda: None\n'
                    'opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)\n'
                    'try:\n    train_tbptt(model, [(torch.randn(5, 2, 3), torch.randn(5, 2, 1)) for _ in range(2)], opt, torch.nn.MSELoss())\n'
                    'except RuntimeError as e:\n    assert "backward through the graph a second time" in str(e)\n'
                    'else:\n    raise AssertionError("no error")',
        ),
        Invalid(
            """
import torch
from torch import nn

rnn = nn.RNN(3, 5)
hidden = torch.zeros(1, 2, 5)
for x in [torch.randn(4, 2, 3) for _ in range(3)]:
    out, hidden = rnn(x, hidden)
    loss = out.pow(2).mean()
    loss.backward()
""",
            range=(8, 25, 8, 31),
            message="`hidden` carries the previous iteration's graph into `rnn(x, hidden)`: without `hidden.detach()` at "
            f"the start of the iteration the graph grows with every batch, and the next `.backward()` fails with \"{SECOND_TIME}\"",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nrnn = nn.RNN(3, 5)\nhidden = torch.zeros(1, 2, 5)\n"
                "for x in [torch.randn(4, 2, 3) for _ in range(3)]:\n    hidden = hidden.detach()\n"
                "    out, hidden = rnn(x, hidden)\n    loss = out.pow(2).mean()\n    loss.backward()\n",
            ),
            raises=SECOND_TIME,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train(lstm, head, batches, opt):
    state = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
    for x, y in batches:
        opt.zero_grad()
        out, state = lstm(x, state)
        loss = F.mse_loss(head(out), y)
        loss.backward()
        opt.step()


lstm, head = nn.LSTM(3, 4), nn.Linear(4, 1)
opt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)
train(lstm, head, [(torch.randn(5, 2, 3), torch.randn(5, 2, 1)) for _ in range(3)], opt)
""",
            range=(11, 29, 11, 34),
            message="`state` carries the previous iteration's graph into `lstm(x, state)`: without `state.detach()` at "
            f"the start of the iteration the graph grows with every batch, and the next `.backward()` fails with \"{SECOND_TIME}\"",
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def train(lstm, head, batches, opt):\n    state = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))\n"
                "    for x, y in batches:\n        state = tuple(s.detach() for s in state)\n        opt.zero_grad()\n"
                "        out, state = lstm(x, state)\n        loss = F.mse_loss(head(out), y)\n        loss.backward()\n"
                "        opt.step()\n\n\nlstm, head = nn.LSTM(3, 4), nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)\n"
                "train(lstm, head, [(torch.randn(5, 2, 3), torch.randn(5, 2, 1)) for _ in range(3)], opt)\n",
            ),
            raises=SECOND_TIME,
            note="an LSTM's (h, c) tuple, in a function",
        ),
        Invalid(
            """
import torch
from torch import nn

net = nn.Linear(4, 4)
state = torch.zeros(2, 4)
step = 0
while step < 3:
    delta = net(state)
    state = state + delta
    state.pow(2).sum().backward()
    step += 1
""",
            range=(9, 16, 9, 21),
            message="`state` carries the previous iteration's graph into `net(state)`: without `state.detach()` at "
            f"the start of the iteration the graph grows with every batch, and the next `.backward()` fails with \"{SECOND_TIME}\"",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nnet = nn.Linear(4, 4)\nstate = torch.zeros(2, 4)\nstep = 0\n"
                "while step < 3:\n    state = state.detach()\n    delta = net(state)\n    state = state + delta\n"
                "    state.pow(2).sum().backward()\n    step += 1\n",
            ),
            raises=SECOND_TIME,
            note="`state = state + delta` in a `while` loop",
        ),
        Invalid(
            """
import torch
from torch import nn


class LanguageModelTrainer:
    def __init__(self):
        self.rnn = nn.GRU(3, 4)
        self.decoder = nn.Linear(4, 3)
        params = list(self.rnn.parameters()) + list(self.decoder.parameters())
        self.opt = torch.optim.SGD(params, lr=0.1)

    def fit(self, chunks):
        memory = torch.zeros(1, 2, 4)
        for chunk, target in chunks:
            self.opt.zero_grad()
            output, memory = self.rnn(chunk, memory)
            err = (self.decoder(output) - target).pow(2).mean()
            err.backward()
            self.opt.step()


trainer = LanguageModelTrainer()
trainer.fit([(torch.randn(5, 2, 3), torch.randn(5, 2, 3)) for _ in range(3)])
""",
            range=(17, 45, 17, 51),
            message="`memory` carries the previous iteration's graph into `self.rnn(chunk, memory)`: without "
            "`memory.detach()` at the start of the iteration the graph grows with every batch, and the next "
            "`.backward()` fails with \"Trying to backward through the graph a second time\"",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\nclass LanguageModelTrainer:\n    def __init__(self):\n"
                "        self.rnn = nn.GRU(3, 4)\n        self.decoder = nn.Linear(4, 3)\n"
                "        params = list(self.rnn.parameters()) + list(self.decoder.parameters())\n"
                "        self.opt = torch.optim.SGD(params, lr=0.1)\n\n    def fit(self, chunks):\n"
                "        memory = torch.zeros(1, 2, 4)\n        for chunk, target in chunks:\n"
                "            memory = memory.detach()\n            self.opt.zero_grad()\n"
                "            output, memory = self.rnn(chunk, memory)\n"
                "            err = (self.decoder(output) - target).pow(2).mean()\n            err.backward()\n"
                "            self.opt.step()\n\n\ntrainer = LanguageModelTrainer()\n"
                "trainer.fit([(torch.randn(5, 2, 3), torch.randn(5, 2, 3)) for _ in range(3)])\n",
            ),
            raises=SECOND_TIME,
            note="a trainer class's fit() method; the state is renamed `memory`",
        ),
        Invalid(
            """
import torch
from torch import nn

gru = nn.GRU(3, 4)
head = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
h_n = torch.zeros(1, 2, 4)
for epoch in range(2):
    for seq in [torch.randn(5, 2, 3) for _ in range(2)]:
        out, h_n = gru(seq, h_n)
        head(out).mean().backward()
""",
            range=(10, 28, 10, 31),
            message="`h_n` carries the previous iteration's graph into `gru(seq, h_n)`: without `h_n.detach()` at "
            "the start of the iteration the graph grows with every batch, and the next `.backward()` fails "
            "with \"Trying to backward through the graph a second time\"",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\ngru = nn.GRU(3, 4)\n"
                "head = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))\nh_n = torch.zeros(1, 2, 4)\n"
                "for epoch in range(2):\n    for seq in [torch.randn(5, 2, 3) for _ in range(2)]:\n"
                "        h_n = h_n.detach()\n        out, h_n = gru(seq, h_n)\n"
                "        head(out).mean().backward()\n",
            ),
            raises=SECOND_TIME,
            note="nested epoch / batch loops with an `nn.Sequential` head",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train_lm(lstm, decoder, batches, optimizer):
    hidden = None
    for inputs, targets in batches:
        optimizer.zero_grad()
        output, hidden = lstm(inputs, hidden)
        loss = F.mse_loss(decoder(output), targets)
        loss.backward()
        optimizer.step()


lstm, decoder = nn.LSTM(3, 4), nn.Linear(4, 3)
optimizer = torch.optim.SGD(list(lstm.parameters()) + list(decoder.parameters()), lr=0.1)
train_lm(lstm, decoder, [(torch.randn(5, 2, 3), torch.randn(5, 2, 3)) for _ in range(3)], optimizer)
""",
            range=(11, 38, 11, 44),
            message='`hidden` carries the previous iteration\'s graph into `lstm(inputs, hidden)`: without `hidden.detach()` at the start of the iteration the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                """
import torch
import torch.nn.functional as F
from torch import nn


def train_lm(lstm, decoder, batches, optimizer):
    hidden = None
    for inputs, targets in batches:
        if isinstance(hidden, tuple):
            hidden = type(hidden)(*(s.detach() for s in hidden)) if hasattr(hidden, "_fields") else tuple(s.detach() for s in hidden)
        elif hidden is not None:
            hidden = hidden.detach()
        optimizer.zero_grad()
        output, hidden = lstm(inputs, hidden)
        loss = F.mse_loss(decoder(output), targets)
        loss.backward()
        optimizer.step()


lstm, decoder = nn.LSTM(3, 4), nn.Linear(4, 3)
optimizer = torch.optim.SGD(list(lstm.parameters()) + list(decoder.parameters()), lr=0.1)
train_lm(lstm, decoder, [(torch.randn(5, 2, 3), torch.randn(5, 2, 3)) for _ in range(3)], optimizer)
""",
            ),
            raises=SECOND_TIME,
            note="the usual `hidden = None` start of an nn.LSTM loop: the fix must work for None and for the (h, c) tuple",
        ),
        Invalid(
            """
import torch
from torch import nn


class PeepholeCell(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.gates = nn.Linear(2 * n, 2 * n)

    def forward(self, x, state):
        h, c = state
        i, g = self.gates(torch.cat([x, h], 1)).chunk(2, 1)
        c = torch.sigmoid(i) * c + torch.tanh(g)
        return torch.tanh(c), (torch.tanh(c), c)


cell = PeepholeCell(4)
opt = torch.optim.Adam(cell.parameters())
state = (torch.zeros(2, 4), torch.zeros(2, 4))
for x in [torch.randn(2, 4) for _ in range(3)]:
    out, state = cell(x, state)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            range=(22, 25, 22, 30),
            message='`state` carries the previous iteration\'s graph into `cell(x, state)`: without `state.detach()` at the start of the iteration the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                """
import torch
from torch import nn


class PeepholeCell(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.gates = nn.Linear(2 * n, 2 * n)

    def forward(self, x, state):
        h, c = state
        i, g = self.gates(torch.cat([x, h], 1)).chunk(2, 1)
        c = torch.sigmoid(i) * c + torch.tanh(g)
        return torch.tanh(c), (torch.tanh(c), c)


cell = PeepholeCell(4)
opt = torch.optim.Adam(cell.parameters())
state = (torch.zeros(2, 4), torch.zeros(2, 4))
for x in [torch.randn(2, 4) for _ in range(3)]:
    state = tuple(s.detach() for s in state)
    out, state = cell(x, state)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            ),
            raises=SECOND_TIME,
            note="a hand-written cell whose state is a tuple",
        ),
        Invalid(
            """
import torch
from torch import nn

decoder = nn.GRUCell(4, 4)
head = nn.Linear(4, 4)


def rollout(start, steps):
    h = torch.zeros(1, 4)
    x = start
    tokens = []
    for _ in range(steps):
        h = decoder(x, h)
        x = torch.softmax(head(h), -1)
        tokens.append(int(x.argmax()))
    return tokens
""",
            range=(14, 23, 14, 24),
            message="`h` carries the previous step's graph into `decoder(x, h)` with grad enabled and nothing back-propagates it: the graph grows with every step of the loop on line 13; run the loop under `torch.no_grad()`",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\ndecoder = nn.GRUCell(4, 4)\nhead = nn.Linear(4, 4)\n\n\ndef rollout(start, steps):\n    h = torch.zeros(1, 4)\n    x = start\n    tokens = []\n    with torch.no_grad():\n        for _ in range(steps):\n            h = decoder(x, h)\n            x = torch.softmax(head(h), -1)\n            tokens.append(int(x.argmax()))\n    return tokens\n',
            ),
            runtime='h, x, sizes = torch.zeros(1, 4), torch.zeros(1, 4), []\nfor _ in range(3):\n    h = decoder(x, h)\n    x = torch.softmax(head(h), -1)\n    sizes.append(graph_size(h))\nassert sizes[0] < sizes[1] < sizes[2]',
            note='an inference loop (a rollout that returns Python ints) feeding a GRU cell its own state with grad on: the graph grows with every step',
        ),
        Invalid(
            """
import torch
from torch import nn

cell = nn.GRUCell(4, 8)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
done = True
for update in range(3):
    if done:
        h = torch.zeros(1, 8)
    for step in range(4):
        h = cell(torch.randn(1, 4), h)
        done = step == 9
    opt.zero_grad()
    h.pow(2).mean().backward()
    opt.step()
""",
            range=(12, 36, 12, 37),
            message='`h` carries the previous iteration\'s graph into `cell(torch.randn(1, 4), h)`: without `h.detach()` after the `if` on line 9, which resets it only sometimes, the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\ncell = nn.GRUCell(4, 8)\nopt = torch.optim.SGD(cell.parameters(), lr=0.1)\ndone = True\nfor update in range(3):\n    if done:\n        h = torch.zeros(1, 8)\n    h = h.detach()\n    for step in range(4):\n        h = cell(torch.randn(1, 4), h)\n        done = step == 9\n    opt.zero_grad()\n    h.pow(2).mean().backward()\n    opt.step()\n',
            ),
            raises=SECOND_TIME,
            note='the state reset only `if done:` (A3C without its `else: hx = hx.detach()`): the other iterations carry it on; the detach goes after the `if`, where the state is bound',
        ),
        Invalid(
            """
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.step_cell = nn.GRUCell(dim, dim)
        self.head = nn.Linear(dim, vocab)

    def init_state(self, features):
        return torch.tanh(features)


def greedy_caption(decoder, features, start=0, max_len=10):
    h = decoder.init_state(features)
    words = torch.full((features.size(0),), start, dtype=torch.long)
    out = []
    for _ in range(max_len):
        h = decoder.step_cell(decoder.embedding(words), h)
        words = decoder.head(h).argmax(-1)
        out.append(words)
    return torch.stack(out, 1)
""",
            range=(22, 56, 22, 57),
            message="`h` carries the previous step's graph into `decoder.step_cell(decoder.embedding(...` with grad enabled and nothing back-propagates it: the graph grows with every step of the loop on line 21; run the loop under `torch.no_grad()`",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Decoder(nn.Module):\n    def __init__(self, vocab=12, dim=8):\n        super().__init__()\n        self.embedding = nn.Embedding(vocab, dim)\n        self.step_cell = nn.GRUCell(dim, dim)\n        self.head = nn.Linear(dim, vocab)\n\n    def init_state(self, features):\n        return torch.tanh(features)\n\n\ndef greedy_caption(decoder, features, start=0, max_len=10):\n    h = decoder.init_state(features)\n    words = torch.full((features.size(0),), start, dtype=torch.long)\n    out = []\n    with torch.no_grad():\n        for _ in range(max_len):\n            h = decoder.step_cell(decoder.embedding(words), h)\n            words = decoder.head(h).argmax(-1)\n            out.append(words)\n    return torch.stack(out, 1)\n',
            ),
            runtime='decoder, sizes = Decoder(), []\nh = decoder.init_state(torch.randn(2, 8))\nwords = torch.zeros(2, dtype=torch.long)\nfor _ in range(3):\n    h = decoder.step_cell(decoder.embedding(words), h)\n    words = decoder.head(h).argmax(-1)\n    sizes.append(graph_size(h))\nassert sizes[0] < sizes[1] < sizes[2]',
            note="the decoder is a parameter, known as the file's `Decoder` by what the code uses on it (`init_state`, a method only that nn.Module defines, and its layers): its GRU cell is fed its own state with grad on",
        ),
        Invalid(
            """
import torch
from torch import nn


class Tracker(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.cell = nn.GRUCell(dim, dim)
        self.head = nn.Linear(dim, 3)

    def forward(self, frame, memory):
        memory = self.cell(frame, memory)
        return self.head(memory), memory


def label_frames(tracker, frames):
    memory = torch.zeros(1, 4)
    labels = []
    for frame in frames:
        scores, memory = tracker(frame, memory=memory)
        labels.append(scores.argmax(-1))
    return labels
""",
            range=(21, 47, 21, 53),
            message="`memory` carries the previous step's graph into `tracker(frame, memory=memory)` with grad enabled and nothing back-propagates it: the graph grows with every step of the loop on line 20; run the loop under `torch.no_grad()`",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Tracker(nn.Module):\n    def __init__(self, dim=4):\n        super().__init__()\n        self.cell = nn.GRUCell(dim, dim)\n        self.head = nn.Linear(dim, 3)\n\n    def forward(self, frame, memory):\n        memory = self.cell(frame, memory)\n        return self.head(memory), memory\n\n\ndef label_frames(tracker, frames):\n    memory = torch.zeros(1, 4)\n    labels = []\n    with torch.no_grad():\n        for frame in frames:\n            scores, memory = tracker(frame, memory=memory)\n            labels.append(scores.argmax(-1))\n    return labels\n',
            ),
            runtime='tracker, memory, sizes = Tracker(), torch.zeros(1, 4), []\nfor frame in [torch.randn(1, 4) for _ in range(3)]:\n    scores, memory = tracker(frame, memory=memory)\n    sizes.append(graph_size(memory))\nassert sizes[0] < sizes[1] < sizes[2]',
            note="a labelling loop that picks `argmax` from what the tracker computes and feeds it its own memory with grad on: `tracker` is the file's `Tracker`, called the way its forward is declared and returns (`memory=`, two results unpacked) - whatever the tracker, its arguments or the function are called, the graph grows with every frame",
        ),
        Invalid(
            """
import torch
from torch import nn


class Trainer:
    def fit(self, lstm, head, batches, opt):
        self.state = None
        for x, y in batches:
            opt.zero_grad()
            self.out, self.state = lstm(x, self.state)
            loss = nn.functional.mse_loss(head(self.out), y)
            loss.backward()
            opt.step()


lstm, head = nn.LSTM(3, 4), nn.Linear(4, 1)
opt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)
Trainer().fit(lstm, head, [(torch.randn(5, 2, 3), torch.randn(5, 2, 1)) for _ in range(3)], opt)
""",
            range=(11, 43, 11, 53),
            message="`self.state` carries the previous iteration's graph into `lstm(x, self.state)`: without "
            f"`self.state.detach()` at the start of the iteration the graph grows with every batch, and the next "
            f"`.backward()` fails with \"{SECOND_TIME}\"",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Trainer:\n    def fit(self, lstm, head, batches, opt):\n        self.state = None\n        for x, y in batches:\n            if isinstance(self.state, tuple):\n                self.state = type(self.state)(*(s.detach() for s in self.state)) if hasattr(self.state, "_fields") else tuple(s.detach() for s in self.state)\n            elif self.state is not None:\n                self.state = self.state.detach()\n            opt.zero_grad()\n            self.out, self.state = lstm(x, self.state)\n            loss = nn.functional.mse_loss(head(self.out), y)\n            loss.backward()\n            opt.step()\n\n\nlstm, head = nn.LSTM(3, 4), nn.Linear(4, 1)\nopt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)\nTrainer().fit(lstm, head, [(torch.randn(5, 2, 3), torch.randn(5, 2, 1)) for _ in range(3)], opt)\n',
            ),
            raises=SECOND_TIME,
            note="a method's own `self.state` is a place like a local: carried across the loop, fed back, never detached",
        ),
        Invalid(
            """
import torch
from torch import nn


class Stepper(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens, state):
        state = self.cell(self.embedding(tokens), state)
        return {"logits": self.head(state), "state": state}


def run_step(model, tokens, state):
    return model(tokens=tokens, state=state)


def stream_tokens(model, tokens, steps):
    state = torch.zeros(tokens.size(0), 8)
    picked = []
    for _ in range(steps):
        outputs = run_step(model, tokens, state)
        state = outputs["state"]
        tokens = outputs["logits"].argmax(-1)
        picked.append(tokens)
    return picked
""",
            range=(26, 42, 26, 47),
            message="`state` carries the previous step's graph into `run_step(model, tokens, state)` with grad enabled "
            "and nothing back-propagates it: the graph grows with every step of the loop on line 25; run the loop "
            "under `torch.no_grad()`",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Stepper(nn.Module):\n    def __init__(self, vocab=12, dim=8):\n        super().__init__()\n        self.embedding = nn.Embedding(vocab, dim)\n        self.cell = nn.GRUCell(dim, dim)\n        self.head = nn.Linear(dim, vocab)\n\n    def forward(self, tokens, state):\n        state = self.cell(self.embedding(tokens), state)\n        return {"logits": self.head(state), "state": state}\n\n\ndef run_step(model, tokens, state):\n    return model(tokens=tokens, state=state)\n\n\ndef stream_tokens(model, tokens, steps):\n    state = torch.zeros(tokens.size(0), 8)\n    picked = []\n    with torch.no_grad():\n        for _ in range(steps):\n            outputs = run_step(model, tokens, state)\n            state = outputs["state"]\n            tokens = outputs["logits"].argmax(-1)\n            picked.append(tokens)\n    return picked\n',
            ),
            runtime='model, sizes = Stepper(), []\nmodel.register_forward_hook(lambda m, inp, out: sizes.append(graph_size(out["state"])))\n'
                    'stream_tokens(model, torch.zeros(2, dtype=torch.long), 3)\nassert sizes[0] < sizes[1] < sizes[2]',
            note="the model run through a helper of the file (`run_step`), its state read back from the dict it returns: "
            "a decoding loop that feeds the model its own state with grad on",
        ),
        Invalid(
            """
import torch
from torch import nn


def step(cell, x, h):
    return {"hidden": cell(x, h)}


def train(cell, head, batches, opt):
    h = torch.zeros(2, 4)
    for x, y in batches:
        opt.zero_grad()
        for name, value in step(cell, x, h).items():
            h = value
        loss = (head(h) - y).pow(2).mean()
        loss.backward()
        opt.step()


cell, head = nn.RNNCell(3, 4), nn.Linear(4, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
train(cell, head, [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(3)], opt)
""",
            range=(14, 41, 14, 42),
            message="`h` carries the previous iteration's graph into `step(cell, x, h)`: without `h.detach()` "
            "at the start of the iteration the graph grows with every batch, and the next "
            '`.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\ndef step(cell, x, h):\n"
                '    return {"hidden": cell(x, h)}\n\n\ndef train(cell, head, batches, opt):\n'
                "    h = torch.zeros(2, 4)\n    for x, y in batches:\n        h = h.detach()\n"
                "        opt.zero_grad()\n        for name, value in step(cell, x, h).items():\n"
                "            h = value\n        loss = (head(h) - y).pow(2).mean()\n        loss.backward()\n"
                "        opt.step()\n\n\ncell, head = nn.RNNCell(3, 4), nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)\n"
                "train(cell, head, [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(3)], opt)\n",
            ),
            raises=SECOND_TIME,
            note="the state rebound in an inner loop over `.items()` of the dict a helper returns: the loop that carries it is the one that feeds it to the cell",
        ),
        Invalid(
            """
import torch
from torch import nn


def step(cell, x, h):
    return {"hidden": cell(x, h)}


def train(cell, head, batches, opt):
    h = torch.zeros(2, 4)
    for x, y in batches:
        opt.zero_grad()
        h = step(cell, x, h)["hidden"]
        loss = (head(h) - y).pow(2).mean()
        loss.backward()
        opt.step()


cell, head = nn.RNNCell(3, 4), nn.Linear(4, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
train(cell, head, [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(3)], opt)
""",
            range=(14, 26, 14, 27),
            message="`h` carries the previous iteration's graph into `step(cell, x, h)`: without `h.detach()` "
            "at the start of the iteration the graph grows with every batch, and the next "
            '`.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\ndef step(cell, x, h):\n"
                '    return {"hidden": cell(x, h)}\n\n\ndef train(cell, head, batches, opt):\n'
                "    h = torch.zeros(2, 4)\n    for x, y in batches:\n        h = h.detach()\n"
                '        opt.zero_grad()\n        h = step(cell, x, h)["hidden"]\n'
                "        loss = (head(h) - y).pow(2).mean()\n        loss.backward()\n        opt.step()\n\n\n"
                "cell, head = nn.RNNCell(3, 4), nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)\n"
                "train(cell, head, [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(3)], opt)\n",
            ),
            raises=SECOND_TIME,
            note="the new state read from the dict a helper returns: the graph the helper's call made is in it",
        ),
        Invalid(
            """
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


def train(rnn, batches, opt):
    hidden = None
    for x in batches:
        out, hidden = tagged(rnn(x, hidden), "step")[0]
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            range=(13, 36, 13, 42),
            message="`hidden` carries the previous iteration's graph into `rnn(x, hidden)`: without "
            "`hidden.detach()` at the start of the iteration the graph grows with every batch, and the "
            'next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\ndef tagged(value, tag):\n    return value, tag\n\n\n"
                "def train(rnn, batches, opt):\n    hidden = None\n    for x in batches:\n"
                "        if isinstance(hidden, tuple):\n"
                '            hidden = type(hidden)(*(s.detach() for s in hidden)) if hasattr(hidden, "_fields") else tuple(s.detach() for s in hidden)\n'
                "        elif hidden is not None:\n            hidden = hidden.detach()\n"
                '        out, hidden = tagged(rnn(x, hidden), "step")[0]\n        loss = out.pow(2).mean()\n'
                "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n",
            ),
            note="a function no code of the file calls: `rnn` is a model because it is fed back its own state, through a helper that hands the call's result on (`tagged(...)[0]`)",
            runtime='rnn = nn.RNN(3, 4)\ntry:\n    train(rnn, [torch.randn(5, 2, 3) for _ in range(3)], torch.optim.SGD(rnn.parameters(), lr=0.1))\nexcept RuntimeError as error:\n    assert "backward through the graph a second time" in str(error)\nelse:\n    raise AssertionError("the second batch back-propagated")',
        ),
        Invalid(
            """
from collections import namedtuple

import torch
from torch import nn

State = namedtuple("State", ["v", "i"])


class Cell(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.w = nn.Parameter(torch.randn(size, size) * 0.5)

    def forward(self, x, state=None):
        if state is None:
            state = State(v=torch.zeros_like(x), i=torch.zeros_like(x))
        i = 0.8 * state.i + x @ self.w
        v = 0.9 * state.v + i
        return torch.sigmoid(v), State(v=v, i=i)


def train(model, batches, optimizer):
    state = None
    for x in batches:
        out, state = model(x, state)
        loss = out.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


cell = Cell(3)
train(cell, [torch.randn(2, 3) for _ in range(3)], torch.optim.SGD(cell.parameters(), lr=0.1))
""",
            range=(26, 30, 26, 35),
            message='`state` carries the previous iteration\'s graph into `model(x, state)`: without `state.detach()` at the start of the iteration the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                '\nfrom collections import namedtuple\n\nimport torch\nfrom torch import nn\n\nState = namedtuple("State", ["v", "i"])\n\n\nclass Cell(nn.Module):\n    def __init__(self, size):\n        super().__init__()\n        self.w = nn.Parameter(torch.randn(size, size) * 0.5)\n\n    def forward(self, x, state=None):\n        if state is None:\n            state = State(v=torch.zeros_like(x), i=torch.zeros_like(x))\n        i = 0.8 * state.i + x @ self.w\n        v = 0.9 * state.v + i\n        return torch.sigmoid(v), State(v=v, i=i)\n\n\ndef train(model, batches, optimizer):\n    state = None\n    for x in batches:\n        if isinstance(state, tuple):\n            state = type(state)(*(s.detach() for s in state)) if hasattr(state, "_fields") else tuple(s.detach() for s in state)\n        elif state is not None:\n            state = state.detach()\n        out, state = model(x, state)\n        loss = out.sum()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n\n\ncell = Cell(3)\ntrain(cell, [torch.randn(2, 3) for _ in range(3)], torch.optim.SGD(cell.parameters(), lr=0.1))\n',
            ),
            note='the state is a namedtuple of the cell\'s tensors: its items carry the graph into the next batch (the fix rebuilds the namedtuple)',
            raises='Trying to backward through the graph a second time',
        ),
        Invalid(
            """
import lightning as L
import torch
from torch import nn


class CharModel(L.LightningModule):
    def __init__(self, vocab=10, dim=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)
        self.state = None

    def forward(self, tokens, state=None):
        out, state = self.rnn(self.embed(tokens), state)
        return self.head(out), state

    def training_step(self, batch, batch_idx):
        tokens, targets = batch
        logits, state = self(tokens, self.state)
        self.state = state
        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
""",
            range=(21, 37, 21, 47),
            message='`self.state` carries the previous step\'s graph into `self(tokens, self.state)`: without `self.state.detach()` at the start of `training_step()` the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                '\nimport lightning as L\nimport torch\nfrom torch import nn\n\n\nclass CharModel(L.LightningModule):\n    def __init__(self, vocab=10, dim=6):\n        super().__init__()\n        self.embed = nn.Embedding(vocab, dim)\n        self.rnn = nn.GRU(dim, dim, batch_first=True)\n        self.head = nn.Linear(dim, vocab)\n        self.state = None\n\n    def forward(self, tokens, state=None):\n        out, state = self.rnn(self.embed(tokens), state)\n        return self.head(out), state\n\n    def training_step(self, batch, batch_idx):\n        if isinstance(self.state, tuple):\n            self.state = type(self.state)(*(s.detach() for s in self.state)) if hasattr(self.state, "_fields") else tuple(s.detach() for s in self.state)\n        elif self.state is not None:\n            self.state = self.state.detach()\n        tokens, targets = batch\n        logits, state = self(tokens, self.state)\n        self.state = state\n        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())\n',
            ),
            note="Lightning runs `training_step` once per batch and back-propagates the loss it returns; the GRU state kept on `self` and fed back carries the previous step's freed graph (Lightning issue 655)",
            runtime="model = CharModel()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nbatch = (torch.randint(0, 10, (2, 5)), torch.randint(0, 10, (2, 5)))\nfor i in range(2):\n    loss = model.training_step(batch, i)\n    opt.zero_grad()\n    try:\n        loss.backward()\n    except RuntimeError as e:\n        assert 'backward through the graph a second time' in str(e) and i == 1\n    else:\n        assert i == 0\n    opt.step()",
        ),
        Invalid(
            """
import torch


def step(rnn, x, h):
    out, h = rnn(x, h)
    return out, h


def train(rnn, head, batches, opt):
    h = torch.zeros(1, 2, 4)
    for x, y in batches:
        out, h = step(rnn, x, h)
        loss = (head(out) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            range=(13, 30, 13, 31),
            message='`h` carries the previous iteration\'s graph into `step(rnn, x, h)`: without `h.detach()` at the start of the iteration the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=(
                '\nimport torch\n\n\ndef step(rnn, x, h):\n    out, h = rnn(x, h)\n    return out, h\n\n\ndef train(rnn, head, batches, opt):\n    h = torch.zeros(1, 2, 4)\n    for x, y in batches:\n        h = h.detach()\n        out, h = step(rnn, x, h)\n        loss = (head(out) - y).pow(2).mean()\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n',
            ),
            note='a helper of the file runs the recurrent model it is given and returns its state: the caller feeds that state back, as if it called the model itself',
            runtime='rnn, head = torch.nn.RNN(3, 4), torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)\ntry:\n    train(rnn, head, [(torch.randn(5, 2, 3), torch.randn(5, 2, 1)) for _ in range(2)], opt)\nexcept RuntimeError as e:\n    assert "backward through the graph a second time" in str(e)\nelse:\n    raise AssertionError("no error")',
        ),
        Invalid(
            """
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self, obs=3, dim=8, act=2):
        super().__init__()
        self.cell = nn.GRUCell(obs, dim)
        self.head = nn.Linear(dim, act)

    def forward(self, obs, h):
        h = self.cell(obs, h)
        return torch.tanh(self.head(h)), h


def run_episode(policy, env, steps):
    h = torch.zeros(1, 8)
    obs = env.reset()
    total = 0.0
    for _ in range(steps):
        action, h = policy(torch.as_tensor(obs, dtype=torch.float32)[None], h=h)
        obs, reward = env.step(action[0].detach().numpy())
        total += reward
    return total
""",
            range=(22, 78, 22, 79),
            message="`h` carries the previous step's graph into `policy(torch.as_tensor(obs, dtype=...` with grad enabled "
            "and nothing back-propagates it: the graph grows with every step of the loop on line 21; run the loop "
            "under `torch.no_grad()`",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Policy(nn.Module):\n    def __init__(self, obs=3, dim=8, act=2):\n        super().__init__()\n        self.cell = nn.GRUCell(obs, dim)\n        self.head = nn.Linear(dim, act)\n\n    def forward(self, obs, h):\n        h = self.cell(obs, h)\n        return torch.tanh(self.head(h)), h\n\n\ndef run_episode(policy, env, steps):\n    h = torch.zeros(1, 8)\n    obs = env.reset()\n    total = 0.0\n    with torch.no_grad():\n        for _ in range(steps):\n            action, h = policy(torch.as_tensor(obs, dtype=torch.float32)[None], h=h)\n            obs, reward = env.step(action[0].detach().numpy())\n            total += reward\n    return total\n',
            ),
            runtime='class Env:\n    def reset(self):\n        return [0.0, 0.0, 0.0]\n    def step(self, a):\n        return [float(a[0]), float(a[1]), 0.0], 1.0\n'
                    'policy, sizes = Policy(), []\npolicy.register_forward_hook(lambda m, inp, out: sizes.append(graph_size(out[1])))\n'
                    'run_episode(policy, Env(), 3)\nassert sizes[0] < sizes[1] < sizes[2]',
            note="a rollout that reads the policy's actions out as NumPy and feeds it its own state with grad on: the loop "
            "runs the model for its outputs whatever the function is called (once found only when it was called "
            "`rollout` or `play`, and missed as `run_episode`)",
        ),
        Invalid(
            """
import torch
from torch import nn


def as_dict(value):
    return {"out": value}


def train(rnn, head, batches, opt):
    h = None
    for x, y in batches:
        for key, value in as_dict(rnn(x, h)).items():
            out, h = value
        loss = nn.functional.mse_loss(head(out), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            range=(13, 41, 13, 42),
            message='`h` carries the previous iteration\'s graph into `rnn(x, h)`: without `h.detach()` at the start of the iteration the graph grows with every batch, and the next `.backward()` fails with "Trying to backward through the graph a second time"',
            fixes=('\nimport torch\nfrom torch import nn\n\n\ndef as_dict(value):\n    return {"out": value}\n\n\ndef train(rnn, head, batches, opt):\n    h = None\n    for x, y in batches:\n        if isinstance(h, tuple):\n            h = type(h)(*(s.detach() for s in h)) if hasattr(h, "_fields") else tuple(s.detach() for s in h)\n        elif h is not None:\n            h = h.detach()\n        for key, value in as_dict(rnn(x, h)).items():\n            out, h = value\n        loss = nn.functional.mse_loss(head(out), y)\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n',),
            note='the state read back from a dict a helper of the file builds (`for key, value in as_dict(rnn(x, h)).items(): out, h = value`): `rnn`, a parameter, is fed its own state as `out, h = rnn(x, h)` is, and the inner loop runs within one iteration of the training loop',
            runtime='rnn, head = nn.GRU(3, 4), nn.Linear(4, 1)\nopt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)\ntry:\n    train(rnn, head, [(torch.randn(5, 2, 3), torch.randn(5, 2, 1)) for _ in range(2)], opt)\nexcept RuntimeError as e:\n    assert \"Trying to backward through the graph a second time\" in str(e)\nelse:\n    raise AssertionError("the second batch back-propagated through the first one\'s freed graph without an error")',
        ),
        Invalid(
            """
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.cell = nn.GRUCell(4, 4)
        self.out = nn.Linear(4, 10)


def as_dict(value):
    return {"out": value}


decoder = Decoder()


def greedy(h, steps):
    word = torch.zeros(1, dtype=torch.long)
    words = []
    for _ in range(steps):
        for key, value in as_dict(decoder.cell).items():
            h = value(decoder.embed(word), h)
        word = decoder.out(h).argmax(1)
        words.append(word)
    return words
""",
            range=(26, 43, 26, 44),
            message="`h` carries the previous step's graph into `value(decoder.embed(word), h)` with grad enabled and nothing back-propagates it: the graph grows with every step of the loop on line 24; run the loop under `torch.no_grad()`",
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Decoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.embed = nn.Embedding(10, 4)\n        self.cell = nn.GRUCell(4, 4)\n        self.out = nn.Linear(4, 10)\n\n\ndef as_dict(value):\n    return {"out": value}\n\n\ndecoder = Decoder()\n\n\ndef greedy(h, steps):\n    word = torch.zeros(1, dtype=torch.long)\n    words = []\n    with torch.no_grad():\n        for _ in range(steps):\n            for key, value in as_dict(decoder.cell).items():\n                h = value(decoder.embed(word), h)\n            word = decoder.out(h).argmax(1)\n            words.append(word)\n    return words\n',),
            note='a decoding loop whose step runs inside a loop over a dict (`for key, value in as_dict(decoder.cell).items():`): the inner loop runs within one step and picks nothing; the loop that decodes (`argmax`) is the one the state grows across',
            runtime='sizes = []\ndecoder.cell.register_forward_hook(lambda m, i, o: sizes.append(graph_size(o)))\ngreedy(torch.zeros(1, 4), 3)\nassert sizes[0] < sizes[1] < sizes[2]',
        ),
    ]


def _detach_lines(name: str, init, indent: str) -> tuple[list, str]:
    """The statements that detach the state at the start of the body, and the fix's title.
    A state that starts as a tensor or a tuple gets one line; one that starts as `None`
    (`hidden = None`, then `out, hidden = lstm(x, hidden)`) or as something unknown gets
    lines that work for all three: None the first time, a tensor (GRU, RNN) or a tuple
    (LSTM's `(h, c)`, or a namedtuple) later."""
    if init.kind is Kind.CONTAINER and init.elements is not None:
        line = f"{name} = tuple(s.detach() for s in {name})"
        return [line], f"Insert `{line}` at the start of the loop body"
    if init.kind is Kind.TENSOR:
        line = f"{name} = {name}.detach()"
        return [line], f"Insert `{line}` at the start of the loop body"
    # a namedtuple state (norse's `LIFState`) keeps its type: its fields are read by name
    lines = [
        f"if isinstance({name}, tuple):",
        f"{indent}{name} = type({name})(*(s.detach() for s in {name})) if hasattr({name}, \"_fields\") "
        f"else tuple(s.detach() for s in {name})",
        f"elif {name} is not None:",
        f"{indent}{name} = {name}.detach()",
    ]
    return lines, f"Detach `{name}` (a tensor, a tuple or `None`) at the start of the loop body"


def _depends_on(loop, source: str, name: str, fed: frozenset = frozenset()) -> bool:
    """Is what `source` holds computed, through the loop body's assignments, from `name`?
    (`decoder_hidden = encoder_hidden`, the encoder's state for this sentence: no; `h = h_prev`
    after `h_prev = cell(x, h)`: yes; `hidden` of `output, hidden = self.run(text)`, a call `fed`
    the state - a method that reads `self.hidden` itself: yes.)"""
    defs: dict = {}
    for node in descendants(loop.body):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                for p in _places(t.target):
                    defs.setdefault(place_key(p), []).append(node.value)
        elif isinstance(node, cst.AugAssign) and place_key(node.target) is not None:
            defs.setdefault(place_key(node.target), []).append(node.value)
        elif isinstance(node, cst.For):  # `for key, value in step(model, x, h).items():` binds from its iterable
            for p in _places(node.target):
                defs.setdefault(place_key(p), []).append(node.iter)
    todo, seen = [source], set()
    while todo:
        current = todo.pop()
        if current == name:
            return True
        if current in seen:
            continue
        seen.add(current)
        for expr in defs.get(current, ()):
            if fed and any(n in fed for n in [expr, *descendants(expr)]):
                return True
            todo.extend(place_key(n) for n in descendants(expr) if isinstance(n, cst.Name) or is_self_attribute(n))
    return False


def _places(expr) -> list:
    """The places an argument passes or a target binds, in tuples too: names, and a method's own
    `self.x` (a place like a local: `self.out, self.state = model(x, self.state)`)."""
    if place_key(expr) is not None:
        return [expr]
    if isinstance(expr, (cst.Tuple, cst.List)):
        return [p for e in expr.elements for p in _places(e.value)]
    return []


def _reaches(backward, call: cst.Call, place) -> bool:
    """Does `backward`, which shares a graph node with the new state, reach the state fed to `call`?
    One that ran inside that very call (`total = step(total, batch)` back-propagating in `step()`)
    makes its graphs at the same nodes as every other call of the function, so sharing them proves
    nothing: it reaches the state only if the parameter given the state may reach what it
    back-propagates (reaching.py)."""
    fn = backward.through
    if backward.node is not call or fn is None:
        return True  # the call's output (made from the state) is what the loop back-propagates
    bound = fn.cls is not None and isinstance(call.func, cst.Attribute)
    p = fn.node.params
    for param in (x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)):
        arg = argument(fn.node, call, param, (), bound=bound)
        if arg is not None and (arg is place or place in descendants(arg)):
            return reaches_backward(fn, param)
    return False  # (`step(*args)`: not known to reach it)


def _model_call(flow, call) -> bool:
    """A call of a model with parameters (`model(x, h)`), of a method of one of the file's
    model classes (`self.rssm.recurrent_model(h, a, s)`), or of a function of the file whose last
    analysis ran one (`step(attention, alignment)` returning `attention(alignment)`)."""
    if not isinstance(call, cst.Call):
        return False
    callee = flow.value(call.func)
    if callee.kind is Kind.MODULE:
        return callee.parameterized and not callee.loss
    if callee.kind is Kind.FUNCTION and callee.cls is not None and callee.cls.makes_graph:
        return True
    if callee.kind is Kind.FUNCTION and isinstance(call.func, cst.Attribute):
        receiver = flow.value(call.func.value)
        return receiver.kind is Kind.MODULE and receiver.parameterized and not receiver.loss
    return False


# Calls that pick discrete values from a model's outputs: decoding.
# What a loop does with a model's outputs when it runs the model for them: picks discrete values, or
# reads them out of autograd as numbers (never a graph either way).
PICKS = frozenset("argmax argmin topk multinomial sample item tolist numpy".split())


class _Picks(cst.CSTVisitor):
    """Is there an `x.argmax(...)`, `torch.multinomial(...)`, `dist.sample()`, `x.item()`,
    `x.numpy()` under a node?"""

    def __init__(self):
        self.found = False

    def visit_Call(self, n: cst.Call) -> None:
        if isinstance(n.func, cst.Attribute) and n.func.attr.value in PICKS:
            self.found = True


class _Yields(cst.CSTVisitor):
    """The `yield` expressions of a function's own body (not of nested functions)."""

    def __init__(self):
        self.found = []

    def visit_FunctionDef(self, n) -> bool:
        return False

    def visit_Lambda(self, n) -> bool:
        return False

    def visit_Yield(self, n: cst.Yield) -> None:
        self.found.append(n)


class _EvalCall(cst.CSTVisitor):
    """Is there a `<module>.eval()` call under a node?"""

    def __init__(self):
        self.found = False

    def visit_Call(self, n: cst.Call) -> None:
        if isinstance(n.func, cst.Attribute) and n.func.attr.value == "eval" and not n.args:
            self.found = True
