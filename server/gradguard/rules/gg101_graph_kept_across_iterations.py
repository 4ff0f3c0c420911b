from __future__ import annotations

import re

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine import steps
from gradguard.engine.model import forward_code
from gradguard.engine.steps import step_of
from gradguard.engine.values import Kind, all_origins
from gradguard.engine.walk import descendants
from gradguard.findings import Safety, Severity
from gradguard.rules._build import evidence_note, method_chain, short
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid
from gradguard.rules.gg103_eval_without_no_grad import (
    kept_for_training as _kept_for_training,
)


class GraphKeptAcrossIterations(Rule):
    """
    ## What it does
    Finds a value that carries an autograd graph stored somewhere that outlives
    the loop iteration: `losses.append(loss)`, `total_loss += loss`,
    `stats["loss"] = loss`, `self.last = out`, a list defined before the loop, a
    module-level list or one from a closure - also through a helper of the file
    that keeps its argument (`remember(loss)` where `def remember(v):
    SEEN.append(v)`, `meter.update(loss)` doing `self.sum += val`), and inside an
    L-BFGS closure given to `optimizer.step(closure)` (called once per step),
    and in a class attribute (`Bottleneck.out_saved[i] = out` in a forward)
    that the file only reads detached.
    Returning the total does not excuse it when the loop already back-propagated
    every stored graph (`total_loss += loss` after `loss.backward()`, then
    `return total_loss / n`: the PyTorch FAQ's example).

    ## Why is this bad?
    A stored tensor keeps its whole graph (`grad_fn` chain) alive. When nothing
    ever back-propagates it - an evaluation loop without `torch.no_grad()`, an
    output kept "for later" - every saved activation of every iteration stays in
    memory: the classic out-of-memory by epoch three (reported as an **error**).
    When `backward()` already ran on it, its saved activations are freed, but the
    graph's nodes still pile up in host memory with every iteration and the
    stored value stays differentiable (a **warning**).

    Retention that a later backward depends on is left alone: collecting losses
    in `chunks` and calling `torch.stack(chunks).mean().backward()` after the
    loop (gradient accumulation, pipeline schedules) needs the graphs. So does a
    place the step reads its graph back from (`state["y_pred"] = model(x)`, then
    a loss of `state["y_pred"]`); one replaced every step that no backward reads
    from (`self.last_loss = loss`) is a record, and keeps the step's graph past it.

    ## Example
    ```python
    losses = []
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    ```

    ## Use instead
    ```python
    losses = []
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())  # or loss.detach().item() for a number
    ```

    ## Fix safety
    Storing `x.detach()` is safe: the stored value is the same tensor data, on the
    same device, without the graph, and nothing waits on the device. For a scalar
    (a loss, `.mean()`, `.sum()`) a second fix stores `x.detach().item()`; it is
    unsafe because it changes the stored type to a Python float and synchronises
    with the device on every iteration.
    """

    code = "GG101"
    name = "graph-kept-across-iterations"
    severity = Severity.ERROR
    severities = (Severity.ERROR, Severity.WARNING)
    summary = "A value with an autograd graph is stored past the loop iteration"

    def __init__(self, *args):
        super().__init__(*args)
        self._class_stores: list = []  # (stored value, holder `Cls.attr`, stamp)
        self._done_before: dict = {}  # store -> backwards of its graph an enclosing loop ran before the store

    def on_store(self, store) -> None:
        """A store in an inner loop after the enclosing loop's iteration back-propagated the graph
        (`loss.backward()`, then `for name, term in terms.items(): history.append(term)`): that loop
        already back-propagated what the place keeps across its iterations."""
        self._done_before[store] = self._done_around(store, self.flow.backwards)

    @staticmethod
    def _done_around(store, backwards) -> list:
        """The backwards of the stored graph that an enclosing loop's iteration (where the place outlives
        it) runs around a store in an inner loop."""
        outer = [loop for loop in store.loops[:-1] if loop not in store.made_in]
        return [b for b in backwards if b.function is store.function and store.loop not in b.loops
                and any(loop in b.loops for loop in outer) and b.origins & store.value.origins] if outer else []

    def _done_in_iteration(self, store, backwards) -> list:
        """The enclosing iteration's backwards of the stored graph: those it ran before the store
        (on_store), and those it runs after the inner loop with a `.backward()` of this function's own
        (`for key, value in as_dict(losses).items(): total = value`, then `loss.backward()`): by the end
        of the iteration it back-propagated what the place keeps. (One that reads the place back needs
        what it keeps: excused before this is asked; a helper's backward - `pi.train_net()` after the
        rollout's `pi.put_data(...)` - may read it where the analysis does not see.)"""
        before = self._done_before.get(store, [])
        return before + [b for b in self._done_around(store, backwards) if b.through is None and b not in before]

    def leave_Assign(self, node: cst.Assign) -> None:
        """`Bottleneck.out_saved[self.counter] = out` in a method: an item of a class attribute."""
        for t in node.targets:
            if isinstance(t.target, cst.Subscript) and self._class_attribute(t.target.value):
                self._class_store(node.value, t.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        """`Cache.outputs.append(out)`."""
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert") and node.args
                and self._class_attribute(func.value)):
            self._class_store(node.args[-1].value, func.value)

    def _class_attribute(self, node: cst.BaseExpression) -> bool:
        """`Bottleneck.out_saved`: an attribute of a class of this file, shared by every instance."""
        return (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and self.flow.function is not None and self.flow.value(node.value).kind is Kind.CLASS)

    def _class_store(self, stored: cst.BaseExpression, holder: cst.Attribute) -> None:
        if self.flow.value(stored).has_graph:
            self._class_stores.append((stored, holder, self.stamp()))

    def _report_class_stores(self) -> None:
        """A graph stored in a class attribute outlives the call and every instance - every call's
        graph stays reachable. Reported where the file shows how the stored values are used and
        every use is detached (a later backward through them would need the graph)."""
        for stored, holder, stamp in self._class_stores:
            if not self.current(stamp) or _kept_for_training(self.flow.module, holder.attr.value):
                continue
            name, where = short(self.code_of(stored)), short(self.code_of(holder))

            def message(line_of, name=name, where=where):
                return (
                    f"`{name}` carries an autograd graph; storing it in `{where}`, a class attribute that every call "
                    f"and every instance shares, keeps every stored graph alive (its activations too, until a "
                    f"backward frees them), and the file only reads them detached"
                )

            fix = PendingFix(f"Store `{name}.detach()`", Safety.SAFE, [(stored, method_chain(stored, "detach"))])
            self.report(stored, message, fixes=[fix])

    def finish(self) -> None:
        self._report_class_stores()
        backwards = self.flow.backwards
        for store in self.flow.stores:
            # Retention a later backward depends on: detaching would break training.
            if any(store.token in b.origins for b in backwards):
                continue
            # Inside one step (a loop over a model's parameters, an RNN unrolled over time steps), a
            # place of this scope holds what that step computes and dies with it or with the call; it
            # leaks if it outlives the iteration of an enclosing loop that steps (a training loop
            # around `for name, v in loss_items.items()`).
            if store.local and not _returned_to_unknown_caller(store):
                step = step_of(self.flow, store.loops or (store.loop,), store.value)
                if step is None or step in store.made_in:
                    continue
            origins = store.value.origins
            done = [b for b in backwards if store.loop in b.loops and b.origins & origins] or self._done_in_iteration(store, backwards)
            if store.how == "assign" and not done:
                # `self.out = x` overwritten every iteration holds one graph at a time. A backward that read
                # it back from the place (`self.loss.backward()` after the callbacks rewrote it) was excused
                # above: the place is the step's working slot. Any other backward of the same graph in this
                # function (after the loop) is the one that freed it; the slot still keeps it past the step.
                done = [b for b in backwards if b.origins & origins and b.function is store.function]
            # Returned to a caller we cannot see, which may back-propagate it - unless the loop
            # already did (`total_loss += loss` after `loss.backward()`, the PyTorch FAQ's example):
            # a second backward through a freed graph raises, so no caller needs it.
            if not done and _returned_to_unknown_caller(store) and not self._evaluates(store.function):
                continue
            # Inside a model's forward (over layers, hidden-state tuples) the graphs are the
            # model's output: its callers back-propagate them.
            if store.function is not None and _part_of_forward(store.function, backwards):
                continue
            if not done and (self._from_the_arguments(store) or _forward_trained(store, backwards)
                             or _trained_each_outer_iteration(store, backwards)):
                continue
            self._report(store, _freeing(store, done))

    def _from_the_arguments(self, store) -> bool:
        """`def compute_returns(next_value, rewards, masks): returns = [] ... returns.insert(0, R)`: every
        graph the loop stores came in through the function's arguments - made before the call, the loop
        only adds arithmetic to it - and goes into a list the function makes afresh on each call. The loop
        keeps no activations its caller does not hold anyway; what the caller keeps of the result is a
        store of its own."""
        fn = store.function
        root = re.match(r"[A-Za-z_]\w*", store.target)
        if fn is None or store.via is not None or not fn.param_values or root is None:
            return False
        name = root.group()
        if name == "self" or name in fn.param_values or not re.search(
            rf"^[ \t]*{name}\s*(?::[^=\n]+)?=\s*(?:\[\s*\]|\{{\s*\}}|(?:list|dict|deque|collections\.deque)\(\))",
            self.code_of(fn.node), re.M
        ):
            return False
        came = frozenset().union(*(all_origins(v) for v in fn.param_values.values()))
        made = {o for o in store.value.origins if isinstance(o, cst.CSTNode)}
        return bool(made) and made <= came

    def _evaluates(self, fn) -> bool:
        """A function that puts a model in eval mode and never back-propagates is an evaluation:
        what it returns is predictions, not a graph for its caller to train through."""
        if fn is None:
            return False
        code = self.code_of(fn.node)
        return re.search(r"\.eval\(\s*\)|\.train\(\s*(?:False|mode\s*=\s*False)\s*\)", code) is not None and not re.search(
            r"\.backward\(|autograd\.(?:grad|backward)\(", code)

    @staticmethod
    def _framework_backward(store) -> bool:
        """Stored in `training_step()`, which returns the same graph: the framework back-propagates it."""
        return steps.framework_backward(store.function, store.value.origins)

    def _report(self, store, backward) -> None:
        stored = store.node
        parts = _graph_parts(stored, self.flow)
        name = short(self.code_of(parts[0] if parts else stored))
        why = store.value.why
        target = short(store.target) + (f"` (through `{store.via}()`)" if store.via else "`")
        if backward is None and self._framework_backward(store):
            def message(line_of):
                return (
                    f"`{name}` carries an autograd graph; the training loop back-propagates what `training_step()` "
                    f"returns, but storing it in `{target} keeps every step's graph nodes alive"
                )
            severity = Severity.WARNING
            related = [(why.node, "the graph is created here")] if why is not None else []
        elif backward is None:
            def message(line_of, why=why):
                origin = evidence_note(why, parts[0] if parts else stored, line_of, self.code_of)
                return (
                    f"`{name}` carries an autograd graph{origin} that is never back-propagated; storing it in "
                    f"`{target} keeps every saved activation alive across iterations"
                )
            severity = Severity.ERROR
            related = [(why.node, "the graph is created here")] if why is not None else []
        else:
            # a one-value place replaced every step (`self.last = loss`) keeps one step's graph at a time
            kept = ("keeps the graph's nodes alive past the step (each step's, until the next replaces it), and no "
                    "backward reads them from there") if store.how == "assign" else \
                "keeps the graph's nodes alive across iterations"

            def message(line_of, backward=backward):
                if backward.elsewhere:  # in another file's function: `.backward()` in `one_step()` (engine.py line 9)
                    ran = f"`.backward()` {backward.elsewhere}"
                else:
                    inside = f" (in `{backward.through.name}()`)" if backward.through is not None else ""
                    ran = f"`.backward()` on line {line_of(backward.at)}{inside}"
                return f"`{name}` carries an autograd graph; {ran} freed its activations, but storing it in `{target} {kept}"
            severity = Severity.WARNING
            related = ([(why.node, "the graph is created here")] if why is not None else []) + [
                (backward.at, f"`.backward()` runs {backward.elsewhere}" if backward.elsewhere else "backward runs here")
            ]
        fixes = []
        value = self.flow.value(stored)
        if not parts and store.how == "extend" and value.kind is Kind.CONTAINER and value.item is not None \
                and value.item.has_graph and value.item.kind is Kind.TENSOR:
            # `trace.extend(terms.values())`: each tensor the list is extended with, detached
            each = cst.parse_expression(f"[v.detach() for v in {self.code_of(stored)}]")
            fixes.append(PendingFix(f"Store `{short(self.code_of(each))}`", Safety.SAFE, [(stored, each)]))
        if parts and not any(self._mapping(p, store.function) for p in parts) and not _graph_left(stored, self.flow):
            detached = [(p, method_chain(p, "detach")) for p in parts]
            # A sum the function returns that nothing here back-propagated yet (`reg += p.norm()`, then
            # `return reg`): a caller elsewhere may train on it, and the detach would cut that gradient.
            returned = backward is None and store.how == "accumulate" and store.function is not None \
                and store.token in all_origins(store.function.returns)
            fixes.append(PendingFix(f"Store `{short(self.code_of(detached[0][1]))}`",
                                    Safety.UNSAFE if returned else Safety.SAFE, detached))
            if len(parts) == 1 and self.flow.value(parts[0]).scalar:
                item = method_chain(parts[0], "detach", "item")
                fixes.append(PendingFix(f"Store `{short(self.code_of(item))}`", Safety.UNSAFE, [(parts[0], item)]))
        # The squiggle goes on the graph-carrying part: `[out * 2, acc]` marks `out * 2`.
        if store.kept_at is not None:
            related = related + [(store.kept_at, f"`{store.via}()` keeps it here")]
        self.report(parts[0] if parts else stored, message, fixes=fixes, related=related, severity=severity)

    def _mapping(self, part: cst.BaseExpression, function) -> bool:
        """Is `part` a name the code indexes with a string (`output["loss"]`): a model's output
        dict, which has no `.detach()`?"""
        if not isinstance(part, cst.Name):
            return False
        scope = function.node if function is not None else self.flow.module
        return re.search(rf"\b{re.escape(part.value)}\[\s*[rbuf]*['\"]", self.code_of(scope)) is not None

    VALID = [
        Valid(
            """
from collections import defaultdict

import torch


class Mean:
    def __init__(self):
        self.total, self.n = 0.0, 0

    def add(self, value):
        self.total += value
        self.n += 1


class MeanDict:
    def __init__(self):
        self.means = defaultdict(Mean)

    def add(self, d):
        for key, value in d.items():
            value = float(value)
            self.means[key].add(value)


def train(model, data, optimizer, summary):
    for x, y in data:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        summary.add({"loss": loss})
""",
            runtime='net = torch.nn.Linear(4, 1)\nsummary = MeanDict()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), summary)\nassert isinstance(summary.means["loss"].total, float)',
            note="the same two `add` methods, but `MeanDict.add` keeps only a float of each entry (`value = "
                 "float(value)`): the candidates disagree, the call may keep nothing - silent",
        ),
        Valid(
            """
import torch


class RunningSum:
    def __init__(self):
        self.total = 0.0

    def add(self, value):
        self.total += value


class Printer:
    def __init__(self):
        self.last = None

    def add(self, value):
        self.last = float(value)
        print(self.last)


def train(model, data, optimizer, meter):
    for x, y in data:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.add(loss)
""",
            runtime='net = torch.nn.Linear(4, 1)\nprinter = Printer()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), printer)\nassert isinstance(printer.last, float)',
            note="`meter.add(loss)` on a parameter nothing types, `add` defined by two classes that disagree: "
                 "`RunningSum.add` keeps its argument, `Printer.add` only a float of it - the call may keep nothing "
                 "(it keeps nothing when given a `Printer`, as here): silent",
        ),
        Valid(
            """
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.saved = []

    def forward(self, x):
        return self.fc(x).softmax(-1)


model = Policy()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def select_action(state):
    probs = model(state)
    action = probs.multinomial(1)
    model.saved.append(probs.log()[action])
    return action.item()


def finish_episode():
    loss = -torch.stack(model.saved).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    del model.saved[:]


for episode in range(2):
    for t in range(3):
        select_action(torch.randn(4))
    finish_episode()
""",
            runtime='assert model.fc.weight.grad is not None and model.saved == []',
            note="regression (pytorch/examples' actor_critic): a helper appends to an attribute of a global model that "
                 "the episode's backward reads and then empties - the retention the backward needs",
        ),
        Valid(
            """
import torch
from torch import nn


class Actor:
    def __init__(self, net):
        self.net = net

    def __call__(self, x, y):
        loss = ((self.net(x) - y) ** 2).mean()
        return loss, {"mse": loss.item()}


net = nn.Linear(4, 1)
actor = Actor(net)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
history = []
for x, y in [(torch.randn(5, 4), torch.randn(5, 1))] * 2:
    loss, stats = actor(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history.append(stats["mse"])
""",
            runtime='assert isinstance(history[0], float)',
            note="the object's `__call__` returns its statistics as Python numbers",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
losses = []
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
""",
            note="`.item()` is a Python number",
            runtime="assert all(isinstance(v, float) for v in losses)",
        ),
        Valid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
correct = 0
total = 0
for inputs, labels in batches:
    logits = net(inputs)
    correct += (logits.argmax(1) == labels).sum()
    total += labels.size(0)
""",
            note="argmax and comparisons never carry a graph",
            runtime="assert not has_graph(correct)",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
loader = [torch.randn(8, 4) for _ in range(3)]
outputs = []
model.eval()
with torch.no_grad():
    for x in loader:
        outputs.append(model(x))
""",
            note="created under no_grad: no graph",
            runtime="assert not any(has_graph(o) for o in outputs)",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
micro_batches = [torch.randn(2, 4) for _ in range(4)]
chunks = []
for mb in micro_batches:
    chunks.append(model(mb).pow(2).mean())
torch.stack(chunks).mean().backward()
optimizer.step()
""",
            note="retention a later backward depends on (gradient accumulation)",
            runtime="assert model.weight.grad is not None",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters())

    def epoch(self, data):
        for x, y in data:
            step_logs = []  # lives for one iteration only
            out = self.model(x)
            loss = F.mse_loss(out, y)
            step_logs.append(loss)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


trainer = Trainer(nn.Linear(3, 1))
trainer.epoch([(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(2)])
""",
            note="a container local to the iteration",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
data = [torch.randn(8, 4) for _ in range(3)]
history = []
for phase in ["train", "val"]:
    for x in data:
        with torch.set_grad_enabled(phase == "train"):
            out = model(x).mean()
        history.append(out.detach())
""",
            note="`.detach()` stores no graph",
            runtime="assert not any(has_graph(h) for h in history)",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
accumulated = 0
for x in [torch.randn(8, 4) for _ in range(4)]:
    accumulated = accumulated + model(x).mean()
accumulated.backward()
""",
            note="the accumulated graph is back-propagated once after the loop",
            runtime="assert model.weight.grad is not None",
        ),
        Valid(
            """
import torch


def train(model, loader, history):
    for x, y in loader:
        history.append(model(x))
""",
            note="`model` is a parameter nothing in this file gives a value: unknown, so silent",
        ),
        Valid(
            """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        all_hidden = ()
        for layer in self.layers:
            x = layer(x)
            all_hidden = all_hidden + (x,)
        return x, all_hidden


enc = Encoder()
out, hidden = enc(torch.randn(2, 4))
torch.stack(hidden).sum().backward()
""",
            note="a model's forward collecting hidden states: its caller back-propagates them",
            runtime="assert enc.layers[0].weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn

backbone = nn.Linear(4, 4)


def multi_crop_features(crops):
    feats = []
    for crop in crops:
        feats.append(backbone(crop))
    return torch.cat(feats)
""",
            note="returned to a caller elsewhere, which may back-propagate it",
        ),
        Valid(
            """
import torch
from torch import nn
from .encoder import BaseEncoder


class FeaturePyramid(BaseEncoder):
    def __init__(self):
        super().__init__()
        self.lateral = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, feats):
        maps = []
        for layer, f in zip(self.lateral, feats):
            maps.append(layer(f))
        return ModelOutput(maps=maps)
""",
            note="regression (transformers deimv2): a forward() of a class with an unknown base: model internals",
        ),
        Valid(
            """
import torch
from torch import nn

module = nn.Linear(2, 2)
by_parent = {}
for name, param in module.named_parameters():
    by_parent[name] = [param]
""",
            note="regression (diffusers): lists of parameters hold no graph",
            runtime="assert by_parent['weight'][0].grad_fn is None",
        ),
        Valid(
            """
import torch
from torch import nn


def deformable_attention(values, shapes):
    sampled = []
    for level, value in enumerate(values):
        sampled.append(value * 2)
    return torch.stack(sampled)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.value_proj = nn.Linear(4, 4)

    def forward(self, hidden):
        value = self.value_proj(hidden)
        return deformable_attention([value, value], None)
""",
            note="regression (transformers mask2former): a helper returning its list to a model's forward",
        ),
        Valid(
            """
import torch
from torch import nn

policy = nn.Linear(4, 1)
opt = torch.optim.SGD(policy.parameters(), lr=0.1)
values = []
for t in range(5):
    value = policy(torch.rand(1, 4)); values.append(value)
value_loss = 0
for value in values:
    value_loss += (value - 1.0).pow(2).mean()
value_loss.backward()
opt.step()
""",
            note="regression (issue 14): values summed by a for loop into the loss that is back-propagated",
            runtime="assert policy.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.autograd import Variable

dec = nn.GRUCell(8, 8)
x = torch.randn(4, 2, 8)
y = torch.randn(4, 2, 8)
h = torch.zeros(2, 8)
outs = Variable(torch.zeros(4, 2, 8))
for t in range(4):
    h = dec(x[t], h); outs[t] = h
loss = ((outs - y) ** 2).mean(); loss.backward()
""",
            note="regression (issue 14): outputs written into a buffer (`Variable` is a no-op) that the loss reads",
            runtime="assert dec.weight_ih.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn

blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
heads = nn.ModuleList([nn.Linear(4, 1) for _ in range(3)])
opt = torch.optim.SGD(list(blocks.parameters()) + list(heads.parameters()), lr=0.1)
for step in range(2):
    x = torch.randn(2, 4)
    losses = []
    for block, head in zip(blocks, heads):
        x = block(x)
        losses.append(head(x).pow(2).mean())
    loss = sum(l for l in losses)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            note="regression (issue 14): deep supervision, `sum(l for l in losses)` back-propagated",
            runtime="assert heads[0].weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


def a2c_update(policy, critic, episodes, optimizer):
    log_probs, values, rewards = [], [], []
    for obs, reward in episodes:
        logits = policy(obs)
        log_probs.append(torch.log_softmax(logits, -1)[:, 0])
        values.append(critic(obs))
        rewards.append(reward)
    policy_loss = sum(-lp.mean() * r for lp, r in zip(log_probs, rewards))
    value_loss = torch.stack([(v - r).pow(2).mean() for v, r in zip(values, rewards)]).sum()
    optimizer.zero_grad()
    (policy_loss + value_loss).backward()
    optimizer.step()


policy, critic = nn.Linear(4, 2), nn.Linear(4, 1)
optimizer = torch.optim.Adam(list(policy.parameters()) + list(critic.parameters()))
a2c_update(policy, critic, [(torch.randn(1, 4), 1.0) for _ in range(5)], optimizer)
""",
            note="A2C: log-probs and values kept per step, summed with zip / a comprehension / torch.stack into the loss",
            runtime="assert policy.weight.grad is not None and critic.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class MultiTask:
    def __init__(self, model):
        self.model = model
        self.losses = []

    def add_loss(self, value):
        self.losses.append(value)

    def step(self, batches, optimizer):
        for x, y in batches:
            out = self.model(x)
            self.add_loss(((out - y) ** 2).mean())
            self.add_loss(out.abs().mean())
        total = sum(self.losses)
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        self.losses = []


net = nn.Linear(4, 1)
MultiTask(net).step([(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            runtime='assert net.weight.grad is not None',
            note='losses kept through a helper, then summed and back-propagated: the store is the training',
        ),
        Valid(
            """
import torch


def train_epoch(model, loader, optimizer, loss_func):
    total = None
    for batch in loader:
        optimizer.zero_grad()
        losses = loss_func(model, batch)
        loss = losses
        total = losses.detach() if total is None else total + losses.detach()
        loss.backward()
        optimizer.step()
    return total
""",
            runtime='model = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\ntotal = train_epoch(model, [torch.randn(2, 3) for _ in range(3)], opt, lambda m, b: m(b).pow(2).mean())\nassert not has_graph(total)',
            note='the sum of detached losses',
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
state = {}
for x in [torch.randn(2, 3) for _ in range(3)]:
    state["y_pred"] = model(x)
    loss = state["y_pred"].pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="assert state['y_pred'].grad_fn is not None and model.weight.grad is not None",
            note="regression (torchbearer's Trial): the loss reads the prediction back from `state[\"y_pred\"]`, so the "
                 "key is the step's working slot - storing `.detach()` there would stop training (retention a "
                 "backward depends on); compare the INVALID record of a prediction the loss reads elsewhere",
        ),
        Valid(
            """
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def fit(self, batches):
        for x, y in batches:
            self.out = self.model(x)
            loss = ((self.out - y) ** 2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
""",
            runtime="net = torch.nn.Linear(3, 1)\nt = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1))\n"
                    "t.fit([(torch.randn(2, 3), torch.randn(2, 1))] * 2)\nassert net.weight.grad is not None",
            note="`self.out` is the step's working slot: the loss is computed from what is read back from it",
        ),
        Valid(
            """
import torch
from torch import nn


class Taps(nn.Module):
    outputs = []

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        out = self.fc(x)
        Taps.outputs.append(out)
        return out


def tap_loss():
    loss = sum(o.pow(2).mean() for o in Taps.outputs)
    Taps.outputs.clear()
    return loss
""",
            note="a class-level list of outputs that a loss of the file reads with their graph (and clears): kept for a backward",
            runtime="t = Taps()\nt(torch.randn(2, 4))\ntap_loss().backward()\nassert t.fc.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.fc = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=0.01)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=0)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self):
        R = 0
        self.optimizer.zero_grad()
        for r, prob in self.data[::-1]:
            R = r + 0.98 * R
            loss = -torch.log(prob) * R
            loss.backward()
        self.optimizer.step()
        self.data = []


def main(episodes=2, steps=3):
    pi = Policy()
    for _ in range(episodes):
        for _ in range(steps):
            prob = pi(torch.randn(4))
            a = Categorical(prob).sample()
            pi.put_data((1.0, prob[a]))
        pi.train_net()
    return pi
""",
            note="minimalRL's REINFORCE: (reward, probability) pairs kept through put_data() until train_net() back-propagates each, read back reversed (`self.data[::-1]`) and unpacked",
            runtime="pi = Policy()\nfor _ in range(3):\n    prob = pi(torch.randn(4))\n    pi.put_data((1.0, prob[Categorical(prob).sample()]))\nassert all(has_graph(p) for _, p in pi.data)\npi.train_net()\nassert pi.fc.weight.grad is not None",
        ),
        Valid(
            """
import torch


def build(models, lr):
    groups = []
    for m in models:
        groups.append({"params": list(m.parameters()), "lr": lr})
    return torch.optim.SGD(groups, lr=lr)


def train(models, loader):
    opt = build(models, 0.1)
    for x in loader:
        loss = sum(m(x).sum() for m in models)
        loss.backward()
        opt.step()
""",
            note="optimizer parameter groups built in a loop: `list(m.parameters())` is a list of leaves that require grad, with no graph (axolotl's grouped parameters)",
            runtime="models = [torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)]\ntrain(models, [torch.randn(2, 3)])\nassert all(m.weight.grad is not None for m in models)",
        ),
        Valid(
            """
import torch
from torch import nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Linear(4, 1)
        self.actor = nn.Linear(4, 2)

    def forward(self, x):
        return torch.softmax(self.actor(x), dim=1), self.critic(x)


def compute_returns(next_value, rewards, masks, gamma=0.99):
    R = next_value
    returns = []
    for step in reversed(range(len(rewards))):
        R = rewards[step] + gamma * R * masks[step]
        returns.insert(0, R)
    return returns


def update(model, optimizer, states, rewards, masks, next_state):
    values = []
    for s in states:
        _, value = model(s)
        values.append(value)
    _, next_value = model(next_state)
    returns = torch.cat(compute_returns(next_value, rewards, masks)).detach()
    loss = (returns - torch.cat(values)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


model = ActorCritic()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
update(model, opt, [torch.randn(1, 4) for _ in range(3)], [torch.ones(1, 1)] * 3, [torch.ones(1, 1)] * 3, torch.randn(1, 4))
""",
            note="RL-Adventure's compute_returns(): the bootstrapped value comes in as an argument and the loop only adds arithmetic to it, into a list made afresh on each call; the caller detaches the result",
            runtime='model = ActorCritic()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nreturns = compute_returns(model(torch.randn(1, 4))[1], [torch.ones(1, 1)] * 3, [torch.ones(1, 1)] * 3)\nassert all(has_graph(r) for r in returns)\nupdate(model, opt, [torch.randn(1, 4) for _ in range(3)], [torch.ones(1, 1)] * 3, [torch.ones(1, 1)] * 3, torch.randn(1, 4))\nassert model.critic.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Linear(4, 2)
        self.critic = nn.Linear(4, 2)

    def forward(self, x):
        policy = torch.softmax(self.actor(x), dim=1)
        q_value = self.critic(x)
        return policy, q_value, (policy * q_value).sum(-1, keepdim=True)


def train(model, optimizer, episodes, num_steps=3):
    for _ in range(episodes):
        policies, q_values, values, actions = [], [], [], []
        for _ in range(num_steps):
            policy, q_value, value = model(torch.randn(1, 4))
            action = policy.multinomial(1)
            policies.append(policy)
            q_values.append(q_value)
            values.append(value)
            actions.append(action)
        loss = 0
        for policy, q_value, value, action in zip(policies, q_values, values, actions):
            advantage = q_value.gather(1, action) - value.detach()
            loss = loss - (policy.gather(1, action).log() * advantage.detach()).mean() + advantage.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            note="ACER's rollout keeps each `value` only to read it detached, but `policy` and `q_value` from the same model call are back-propagated after the loop: the activations the stored graphs hold are needed by that backward anyway",
            runtime='model = ActorCritic()\ntrain(model, torch.optim.SGD(model.parameters(), lr=0.1), 2)\nassert model.actor.weight.grad is not None and model.critic.weight.grad is not None',
        ),
        Valid(
            """
from collections import deque
from typing import Deque, List

import torch
from torch import nn


def compute_gae(next_value, rewards: list, masks: list, values: list, gamma=0.99, tau=0.95) -> List:
    values = values + [next_value]
    gae = 0
    returns: Deque[float] = deque()
    for step in reversed(range(len(rewards))):
        delta = rewards[step] + gamma * values[step + 1] * masks[step] - values[step]
        gae = delta + gamma * tau * masks[step] * gae
        returns.appendleft(gae + values[step])
    return list(returns)


critic = nn.Linear(4, 1)
values = [critic(torch.randn(1, 4)) for _ in range(3)]
returns = torch.cat(compute_gae(critic(torch.randn(1, 4)), [torch.ones(1, 1)] * 3, [torch.ones(1, 1)] * 3, values)).detach()
(returns - torch.cat(values)).pow(2).mean().backward()
""",
            note="pg-is-all-you-need's compute_gae(): the same, into an annotated deque (`returns: Deque[float] = deque()`)",
            runtime="assert critic.weight.grad is not None and not returns.requires_grad",
        ),
        Valid(
            """
import torch


class Value:
    def __init__(self, data, _children=()):
        self.data, self.grad, self._prev = data, 0.0, set(_children)
        self._backward = lambda: None

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        self.grad = 1.0
        for v in self._prev:
            v._backward()


def trace(root):
    nodes, edges = set(), set()

    def build(v):
        if v not in nodes:
            nodes.add(v)
            for child in v._prev:
                edges.add((child, v))
                build(child)
    build(root)
    return nodes, edges


o = Value(2.0) * Value(3.0)
o.backward()
nodes, edges = trace(o)
""",
            note="micrograd's own `Value` has a `backward()`: `o.backward()` says nothing of torch graphs, and `edges` holds Values",
            runtime='assert len(edges) == 2 and o.data == 6.0',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def perturb(model, last, bows, num_iterations=3, stepsize=0.01):
    delta = torch.zeros_like(last, requires_grad=True)
    for i in range(num_iterations):
        probs = F.softmax(model(last + delta), dim=-1)
        loss = 0.0
        loss_list = []
        for bow in bows:
            bow_loss = -torch.log(torch.sum(probs * bow))
            loss += bow_loss
            loss_list.append(bow_loss)
        loss.backward()
        delta.data -= stepsize * delta.grad
        delta.grad.zero_()
    return delta.detach(), [l.item() for l in loss_list]


model = nn.Linear(4, 4)
delta, losses = perturb(model, torch.randn(1, 4), [torch.eye(4)[0], torch.eye(4)[1]])
""",
            note="PPLM's perturb_past(): `loss_list` is made afresh in each step of the outer loop and holds terms of the `loss` that same step back-propagates",
            runtime='assert len(losses) == 2 and delta.abs().sum() > 0',
        ),
        Valid(
            """
import torch
from torch import nn

cell = nn.RNNCell(4, 8)
x = torch.randn(5, 3, 4)
h = torch.zeros(3, 8)
outputs = []
for t in range(x.size(0)):
    h = cell(x[t], h)
    outputs.append(h)
out = torch.stack(outputs)
""",
            note='an RNN cell unrolled over the time steps of one sequence: the loop carries `h` into the cell, so it is one step, and the stacked outputs are part of the graph `h` holds anyway',
            runtime='assert out.shape == (5, 3, 8) and graph_size(out) > 5',
        ),
        Valid(
            """
import torch
from torch import nn


def weight_penalty(model, weight_decay=1e-4):
    reg = 0
    for name, p in model.named_parameters():
        if "weight" in name:
            reg = reg + p.norm(2)
    return weight_decay * reg


def regulariser(model):
    return sum(p.norm(2) for name, p in model.named_parameters() if "weight" in name)
""",
            note="a regulariser summed over `named_parameters()` and returned into the loss: a loop over a model's parameters is one step, and detaching the sum would switch the regularisation off",
            runtime='model = nn.Linear(3, 2)\n(weight_penalty(model) + regulariser(model)).backward()\nassert model.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


def log_param_norms(model, step, writer):
    norms = {}
    for name, p in model.named_parameters():
        norms[name] = torch.norm(p)
    for name, value in norms.items():
        writer.add_scalar(f"norm/{name}", value.item(), step)
""",
            note="a logging handler's dict of parameter norms, local to the call: nothing outlives it",
            runtime='class Writer:\n    def add_scalar(self, tag, value, step):\n        self.last = value\nw = Writer()\nlog_param_norms(nn.Linear(3, 2), 0, w)\nassert isinstance(w.last, float)',
        ),
        Valid(
            """
import torch
from torch import nn


class NormLogger:
    def __init__(self):
        self.history = []

    def log(self, model):
        self.norms = {}
        for name, p in model.named_parameters():
            self.norms[name] = p.norm()
        self.history.append(sum(v.item() for v in self.norms.values()))


def train(model, batches, opt, logger):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        logger.log(model)


model = nn.Linear(3, 1)
logger = NormLogger()
train(model, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)], torch.optim.SGD(model.parameters(), lr=0.1), logger)
""",
            note="a dict on `self` made afresh at the top of each call: the next call replaces what this one keeps, "
                 "so it holds one call's norms, as a local would",
            runtime="assert len(logger.norms) == 2 and len(logger.history) == 3",
        ),
        Valid(
            """
import torch
from torch import nn


class L1Penalty:
    def __init__(self, model, beta=0.01):
        self.model, self.beta = model, beta

    def after_loss(self, loss):
        return loss + self.beta * sum(p.abs().sum() for p in self.model.parameters())


class Trainer:
    def fit(self, model, batches, loss_fn, opt, callbacks):
        for x, y in batches:
            self.loss = loss_fn(model(x), y)
            for cb in callbacks:
                self.loss = cb.after_loss(self.loss)
            opt.zero_grad()
            self.loss.backward()
            opt.step()


model = nn.Linear(3, 1)
trainer = Trainer()
trainer.fit(model, [(torch.randn(4, 3), torch.randn(4, 1))], nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.0),
            [L1Penalty(model)])
""",
            note="an attribute overwritten by each callback and back-propagated after that inner loop: one graph at a "
                 "time, and the backward frees it (fastai's callbacks)",
            runtime="assert model.weight.grad is not None and not activations_alive(trainer.loss)",
        ),
        Valid(
            """
import torch
from torch import nn


class L1Penalty:
    def __init__(self, model, beta=0.01):
        self.model, self.beta = model, beta

    def after_loss(self, loss):
        return loss + self.beta * sum(p.abs().sum() for p in self.model.parameters())


class Trainer:
    def fit(self, model, batches, loss_fn, opt, callbacks):
        for x, y in batches:
            self.loss = loss_fn(model(x), y)
            for cb in callbacks:
                self.loss = self.loss + cb.beta * sum(p.abs().sum() for p in cb.model.parameters())
            opt.zero_grad()
            self.loss.backward()
            opt.step()


model = nn.Linear(3, 1)
trainer = Trainer()
trainer.fit(model, [(torch.randn(4, 3), torch.randn(4, 1))], nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.0),
            [L1Penalty(model)])
""",
            note="the same penalty added in the loop's body (`self.loss = self.loss + ...`): the backward reads the sum "
                 "back from `self.loss`, which training needs as it is",
            runtime="assert model.weight.grad is not None and not activations_alive(trainer.loss)",
        ),
        Valid(
            """
import torch
from torch import nn


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, rgb):
        depth = torch.sigmoid(self.conv(rgb))
        return {"loss": (depth - rgb.mean(1, keepdim=True)).abs().mean(), "depth_mean": depth.mean().item()}


def train_epoch(model, images, opt):
    outputs = []
    for rgb in images:
        opt.zero_grad()
        output = model(rgb)
        output["loss"].backward()
        opt.step()
        output["loss"] = output["loss"].detach()
        outputs.append(output)
    return outputs


model = DepthNet()
outputs = train_epoch(model, [torch.rand(2, 3, 8, 8) for _ in range(3)], torch.optim.Adam(model.parameters()))
""",
            note="regression (packnet-sfm's fix): the one graph of a forward's dict is replaced by its detach before the "
                 "dict is kept; every entry of the dict is known, so it holds no graph",
            runtime='assert not any(o["loss"].requires_grad for o in outputs)',
        ),
        Valid(
            """
import torch
from torch import nn


class Seq2Seq:
    def train_pair(self, decoder, hidden, targets, criterion, optimizer):
        optimizer.zero_grad()
        self.loss = 0
        token = torch.zeros(1, 4)
        for target in targets:
            out, hidden = decoder(token, hidden)
            self.loss += criterion(out, target)
            token = out.detach()
        self.loss.backward()
        optimizer.step()
        return self.loss.item() / len(targets)


decoder = nn.RNNCell(4, 4)
rnn_step = lambda x, h: (decoder(x, h),) * 2
trainer = Seq2Seq()
value = trainer.train_pair(rnn_step, torch.zeros(1, 4), [torch.randn(1, 4) for _ in range(3)], nn.MSELoss(),
                           torch.optim.SGD(decoder.parameters(), lr=0.0))
""",
            note='`self.loss = 0` at the top of the method, summed over the decoding steps of one pair and back-propagated once: one step, as with a local',
            runtime='assert isinstance(value, float) and decoder.weight_ih.grad is not None',
        ),
        Valid(
            """
import torch


class Trainer:
    def train_step(self, model, sequences, targets, optimizer, criterion):
        optimizer.zero_grad()
        self.loss = 0
        for seq, target in zip(sequences, targets):
            self.loss += criterion(model(seq), target)
        self.loss.backward()
        optimizer.step()
        return self.loss.item()
""",
            note="per-sequence losses summed on `self` and back-propagated once: the sum is the training step",
            runtime="model = torch.nn.Linear(4, 2)\nseqs = [torch.randn(n, 4) for n in (2, 3)]\n"
                    "tgts = [torch.randn(n, 2) for n in (2, 3)]\nTrainer().train_step(model, seqs, tgts, "
                    "torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())\nassert model.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class Upscaler:
    def run(self, model, images):
        model.eval()
        results = []
        for img in images:
            self.img_E = model(img)
            results.append(self.img_E.detach().clamp(0, 1).numpy())
        return results
""",
            note="`self.img_E` is only this method's scratch (written before it is read, read nowhere else): each "
            "iteration replaces the previous graph, as a local would",
            runtime="net = nn.Linear(4, 4)\nu = Upscaler()\nout = u.run(net, [torch.rand(2, 4) for _ in range(3)])\n"
                    "assert len(out) == 3 and graph_size(u.img_E) == graph_size(net(torch.rand(2, 4)))",
        ),
        Valid(
            """
import torch
from torch import nn


class Evaluator:
    def __init__(self):
        self.model = nn.Linear(4, 2)
        self.criterion = nn.MSELoss()

    def run(self, data):
        total = 0.0
        for x, y in data:
            self.out = self.model(x)
            total += self.criterion(self.out, y).item()
        return total
""",
            note="a scratch `self.out` overwritten every iteration: one graph at a time (the missing no_grad is GG103's)",
            runtime="ev = Evaluator()\nev.run([(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)])\n"
                    "assert graph_size(ev.out) == graph_size(ev.model(torch.randn(3, 4)))",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def tagged(value, tag):
    return value, tag


def one_step(net, opt, x, y):
    loss = F.huber_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def fit(net, opt, x, y, epochs):
    total = 0.0
    for _ in range(epochs):
        total = tagged(total + one_step(net, opt, x, y).item(), "sum")[0]
    return total / epochs
""",
            note="the same total of `.item()` numbers",
            runtime='net = nn.Linear(3, 1)\nmean = fit(net, torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(8, 3), torch.randn(8, 1), 3)\nassert isinstance(mean, float)',
        ),
        Valid(
            """
import torch
from torch import nn


class Averager:
    def __init__(self):
        self.n_count = 0
        self.sum = 0

    def add(self, v):
        count = v.data.numel()
        v = v.data.sum()
        self.n_count += count
        self.sum += v


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_avg = Averager()
for step in range(3):
    cost = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    cost.backward()
    optimizer.step()
    loss_avg.add(cost)
""",
            note="the averager rebinds its argument to `v.data.sum()` before keeping it: what it keeps has no graph",
            runtime="assert not has_graph(loss_avg.sum) and model.weight.grad is not None",
        ),
        Valid(
            """
import torch


def fit(model, batches, optimizer, compute_terms):
    running = None
    for batch in batches:
        optimizer.zero_grad()
        terms = compute_terms(model, batch)
        loss = sum(terms)
        kept = tuple(t.detach() for t in terms)
        running = kept if running is None else tuple(map(sum, zip(running, kept)))
        loss.backward()
        optimizer.step()
    return running
""",
            note='each term detached before the tuple of running sums keeps it',
            runtime='model = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nrunning = fit(model, [torch.randn(2, 3) for _ in range(3)], opt, lambda m, b: (m(b).pow(2).mean(), m(b).abs().mean()))\nassert not any(has_graph(t) for t in running)',
        ),
        Valid(
            """
import torch


class LoggingMixin:
    def record(self, loss):
        self.history.append(loss)


class Trainer(LoggingMixin):
    def record(self, loss):
        self.history.append(loss.item())

    def __init__(self, model):
        self.model = model
        self.history = []
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, batches):
        for x, y in batches:
            loss = ((self.model(x) - y) ** 2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.record(loss)
""",
            runtime="net = torch.nn.Linear(3, 1)\nt = Trainer(net)\nt.fit([(torch.randn(2, 3), torch.randn(2, 1))] * 2)\n"
                    "assert isinstance(t.history[0], float)",
            note="the subclass's own `record()` overrides the mixin's: it keeps a Python number",
        ),
        Valid(
            """
import collections

import torch
from torch import nn


class Recorder:
    def __init__(self):
        self.kept = collections.defaultdict(list)

    def record(self, values):
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                value = value.item()
            self.kept[key].append(value)


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
recorder = Recorder()
for step in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    recorder.record({"loss": loss})
""",
            note='the same guard converting the tensor to a number: on the branch that runs, a float is kept',
            runtime='assert all(isinstance(v, float) for v in recorder.kept["loss"])',
        ),
        Valid(
            """
import collections

import torch
from torch import nn


class Recorder:
    def __init__(self):
        self.kept = collections.defaultdict(list)

    def record(self, values):
        for key, value in values.items():
            if not isinstance(value, torch.Tensor):
                self.kept[key].append(value)
            else:
                self.kept[key].append(value.item())


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
recorder = Recorder()
for step in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    recorder.record({"loss": loss})
""",
            note='a negated guard: the branch for what is not a tensor never runs for the loss, the tensor branch keeps a number',
            runtime='assert all(isinstance(v, float) for v in recorder.kept["loss"])',
        ),
        Valid(
            """
import torch
import torch.nn as nn


def train(model, optimizer, batches):
    running = torch.zeros(())
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            running.add_(loss)
    return running
""",
            note="the in-place add under no_grad adds the number only (a sync-free device-side running loss)",
            runtime='model = nn.Linear(3, 1)\nr = train(model, torch.optim.SGD(model.parameters(), lr=0.1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])\nassert not r.requires_grad and r.item() > 0',
        ),
        Valid(
            """
import torch


class Reporter:
    def __init__(self):
        self.observation = {}

    def report(self, values):
        for key, value in values.items():
            self.observation[key] = value


def train(model, loader, optimizer, reporter):
    for x, y in loader:
        reporter.observation = {}
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        reporter.report({"loss": loss})
    return reporter.observation
""",
            note="`reporter.observation = {}` first in every iteration: what `report()` writes there is the current "
                 "step's loss only, dropped by the next step (one graph at a time, not a pile)",
            runtime='net = torch.nn.Linear(4, 1)\nrep = Reporter()\n'
                    'last = train(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 3, torch.optim.SGD(net.parameters(), lr=0.1), rep)\n'
                    'assert list(last) == ["loss"]',
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
val_losses = []
model.eval()
for x, y in loader:
    loss = criterion(model(x), y)
    val_losses.append(loss)
""",
            range=(12, 22, 12, 26),
            message="`loss` carries an autograd graph (from `criterion(model(x), y)` on line 11) that is never "
            "back-propagated; storing it in `val_losses` keeps every saved activation alive across iterations",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\ncriterion = nn.CrossEntropyLoss()\n"
                "loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]\nval_losses = []\n"
                "model.eval()\nfor x, y in loader:\n    loss = criterion(model(x), y)\n"
                "    val_losses.append(loss.detach())\n",
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\ncriterion = nn.CrossEntropyLoss()\n"
                "loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]\nval_losses = []\n"
                "model.eval()\nfor x, y in loader:\n    loss = criterion(model(x), y)\n"
                "    val_losses.append(loss.detach().item())\n",
            ),
            note="eval() does not stop graph building; nothing back-propagates these",
            runtime="assert has_graph(val_losses[0]) and activations_alive(val_losses[0])",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
losses = []
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss)  # kept for the plot
""",
            range=(15, 18, 15, 22),
            message="`loss` carries an autograd graph; `.backward()` on line 13 freed its activations, but storing it "
            "in `losses` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\ncriterion = nn.CrossEntropyLoss()\n"
                "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]\nlosses = []\n"
                "for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
                "    loss.backward()\n    optimizer.step()\n    losses.append(loss.detach())  # kept for the plot\n",
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\ncriterion = nn.CrossEntropyLoss()\n"
                "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]\nlosses = []\n"
                "for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
                "    loss.backward()\n    optimizer.step()\n    losses.append(loss.detach().item())  # kept for the plot\n",
            ),
            runtime="assert has_graph(losses[0]) and not activations_alive(losses[0])",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train_epoch(net, batches, opt):
    running = 0.0
    for step, (inputs, targets) in enumerate(batches):
        opt.zero_grad()
        batch_loss = F.cross_entropy(net(inputs), targets)
        batch_loss.backward()
        opt.step()
        running += batch_loss
    return running / len(batches)


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
avg = train_epoch(net, [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)], opt)
""",
            range=(14, 19, 14, 29),
            message="`batch_loss` carries an autograd graph; `.backward()` on line 12 freed its activations, but "
            "storing it in `running` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def train_epoch(net, batches, opt):\n    running = 0.0\n"
                "    for step, (inputs, targets) in enumerate(batches):\n        opt.zero_grad()\n"
                "        batch_loss = F.cross_entropy(net(inputs), targets)\n        batch_loss.backward()\n"
                "        opt.step()\n        running += batch_loss.detach()\n    return running / len(batches)\n\n\n"
                "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
                "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
                "avg = train_epoch(net, [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)], opt)\n",
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def train_epoch(net, batches, opt):\n    running = 0.0\n"
                "    for step, (inputs, targets) in enumerate(batches):\n        opt.zero_grad()\n"
                "        batch_loss = F.cross_entropy(net(inputs), targets)\n        batch_loss.backward()\n"
                "        opt.step()\n        running += batch_loss.detach().item()\n    return running / len(batches)\n\n\n"
                "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
                "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
                "avg = train_epoch(net, [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)], opt)\n",
            ),
            note="the PyTorch FAQ's `total_loss += loss`, in a function called with a real model",
            runtime="assert has_graph(avg) and graph_size(avg) >= 4",
        ),
        Invalid(
            """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


class Evaluator:
    def __init__(self, model):
        self.model = model
        self.predictions = []

    def run(self, samples):
        for sample in samples:
            pred = self.model(sample)
            self.predictions.append(pred)


ev = Evaluator(Net())
ev.run([torch.randn(2, 4) for _ in range(3)])
""",
            range=(24, 36, 24, 40),
            message="`pred` carries an autograd graph (from `self.model(sample)` on line 23) that is never "
            "back-propagated; storing it in `self.predictions` keeps every saved activation alive across iterations",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.body = nn.Linear(4, 4)\n        self.head = nn.Linear(4, 1)\n\n"
                "    def forward(self, x):\n        return self.head(torch.relu(self.body(x)))\n\n\n"
                "class Evaluator:\n    def __init__(self, model):\n        self.model = model\n"
                "        self.predictions = []\n\n    def run(self, samples):\n        for sample in samples:\n"
                "            pred = self.model(sample)\n            self.predictions.append(pred.detach())\n\n\n"
                "ev = Evaluator(Net())\nev.run([torch.randn(2, 4) for _ in range(3)])\n",
            ),
            note="a trainer-style class holding a model from this file",
            runtime="assert has_graph(ev.predictions[0]) and activations_alive(ev.predictions[0])",
        ),
        Invalid(
            """
import torch as T

encoder = T.nn.GRU(3, 5)
metrics = {}
step = 0
while step < 3:
    seq = T.randn(4, 2, 3)
    features, _ = encoder(seq)
    metrics["last_features"] = features  # shown in the dashboard
    step += 1
""",
            range=(10, 31, 10, 39),
            message="`features` carries an autograd graph (from `encoder(seq)` on line 9) that is never "
            "back-propagated; storing it in `metrics[\"last_features\"]` keeps every saved activation alive across "
            "iterations",
            fixes=(
                "\nimport torch as T\n\nencoder = T.nn.GRU(3, 5)\nmetrics = {}\nstep = 0\nwhile step < 3:\n"
                "    seq = T.randn(4, 2, 3)\n    features, _ = encoder(seq)\n"
                "    metrics[\"last_features\"] = features.detach()  # shown in the dashboard\n    step += 1\n",
            ),
            note="`import torch as T`, a `while` loop, a dict entry, tuple unpacking of an RNN's output",
            runtime="assert has_graph(metrics['last_features']) and activations_alive(metrics['last_features'])",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
epoch_logits = []
for epoch in range(2):
    for x in [torch.randn(8, 4) for _ in range(3)]:
        epoch_logits.append([model(x) * 2, x.sum().item()])
""",
            range=(9, 29, 9, 41),
            message="`model(x) * 2` carries an autograd graph (from `model(x)` on line 9) that is never "
            "back-propagated; storing it in `epoch_logits` keeps every saved activation alive across iterations",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\nepoch_logits = []\n"
                "for epoch in range(2):\n    for x in [torch.randn(8, 4) for _ in range(3)]:\n"
                "        epoch_logits.append([(model(x) * 2).detach(), x.sum().item()])\n",
            ),
            note="nested loops; a graph inside a list literal",
            runtime="assert has_graph(epoch_logits[0][0]) and activations_alive(epoch_logits[0][0])",
        ),
        Invalid(
            """
import torch
from torch import nn


def embed(encoder, batch):
    return encoder(batch).mean(0)


encoder = nn.Sequential(nn.Linear(6, 4), nn.Tanh())
gallery = []
for batch in [torch.randn(3, 6) for _ in range(4)]:
    gallery.append(embed(encoder, batch))
""",
            range=(13, 19, 13, 40),
            message="`embed(encoder, batch)` carries an autograd graph (from `encoder(batch)` on line 7) that is "
            "never back-propagated; storing it in `gallery` keeps every saved activation alive across "
            "iterations",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\ndef embed(encoder, batch):\n"
                "    return encoder(batch).mean(0)\n\n\nencoder = nn.Sequential(nn.Linear(6, 4), nn.Tanh())\n"
                "gallery = []\nfor batch in [torch.randn(3, 6) for _ in range(4)]:\n"
                "    gallery.append(embed(encoder, batch).detach())\n",
            ),
            runtime="assert has_graph(gallery[0]) and activations_alive(gallery[0])",
            note="a helper called from the loop returns the graph; an `nn.Sequential` encoder",
        ),
        Invalid(
            """
import torch
from torch import nn

heads = nn.ModuleList([nn.Linear(4, 1) for _ in range(3)])
scores_per_round = []
for round_idx in range(2):
    inputs = torch.randn(2, 4)
    scores_per_round.append(torch.cat([head(inputs) for head in heads], dim=1))
""",
            range=(9, 28, 9, 78),
            message="`torch.cat([head(inputs) for head in...` carries an autograd graph (from `head(inputs)` on "
            "line 9) that is never back-propagated; storing it in `scores_per_round` keeps every saved "
            "activation alive across iterations",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n"
                "heads = nn.ModuleList([nn.Linear(4, 1) for _ in range(3)])\nscores_per_round = []\n"
                "for round_idx in range(2):\n    inputs = torch.randn(2, 4)\n"
                "    scores_per_round.append(torch.cat([head(inputs) for head in heads], dim=1).detach())\n",
            ),
            runtime="assert has_graph(scores_per_round[0]) and activations_alive(scores_per_round[0])",
            note="a list comprehension over heads, concatenated and kept every round",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
smooth = getattr(torch, "tanh")  # what this is, only running it tells
loader = [torch.randn(8, 4) for _ in range(3)]
scores = []
for x in loader:
    score = smooth(model(x))
    scores.append(score)
""",
            range=(11, 18, 11, 23),
            message="`score` carries an autograd graph (from `smooth(model(x))`, which is given a graph, on line 10) "
            "that is never back-propagated; storing it in `scores` keeps every saved activation alive across iterations",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\n"
                "smooth = getattr(torch, \"tanh\")  # what this is, only running it tells\n"
                "loader = [torch.randn(8, 4) for _ in range(3)]\nscores = []\nfor x in loader:\n"
                "    score = smooth(model(x))\n    scores.append(score.detach())\n",
            ),
            settings={"strict": True},
            note="strict: an unknown function given a graph is taken to return one (without strict: no finding)",
            runtime="assert has_graph(scores[0]) and activations_alive(scores[0])",
        ),
        Invalid(
            """
import torch
from torch import nn


def train_one_epoch(model, loader, optimizer):
    model.train()
    total_loss = 0
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss
    return total_loss / len(loader)


net = nn.Linear(4, 1)
total = train_one_epoch(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            range=(14, 22, 14, 26),
            message="`loss` carries an autograd graph; `.backward()` on line 12 freed its activations, but storing it in `total_loss` keeps the graph's nodes alive across iterations",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef train_one_epoch(model, loader, optimizer):\n    model.train()\n    total_loss = 0\n    for x, y in loader:\n        loss = nn.functional.mse_loss(model(x), y)\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        total_loss += loss.detach()\n    return total_loss / len(loader)\n\n\nnet = nn.Linear(4, 1)\ntotal = train_one_epoch(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))\n',
                '\nimport torch\nfrom torch import nn\n\n\ndef train_one_epoch(model, loader, optimizer):\n    model.train()\n    total_loss = 0\n    for x, y in loader:\n        loss = nn.functional.mse_loss(model(x), y)\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        total_loss += loss.detach().item()\n    return total_loss / len(loader)\n\n\nnet = nn.Linear(4, 1)\ntotal = train_one_epoch(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))\n',
            ),
            runtime='assert total.grad_fn is not None',
            severity=Severity.WARNING,
            note="the PyTorch FAQ's total_loss += loss, returned: the graphs were already back-propagated, no caller can use them",
        ),
        Invalid(
            """
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.losses = []

    def forward(self, x):
        return self.fc(x)

    def fit(self, batches, epochs=2):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        for _ in range(epochs):
            for x, y in batches:
                loss = ((self(x) - y) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                self.losses.append(loss)


reg = Regressor()
reg.fit([(torch.randn(5, 4), torch.randn(5, 1))])
""",
            range=(23, 35, 23, 39),
            message="`loss` carries an autograd graph; `.backward()` on line 21 freed its activations, but storing it in `self.losses` keeps the graph's nodes alive across iterations",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Regressor(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 1)\n        self.losses = []\n\n    def forward(self, x):\n        return self.fc(x)\n\n    def fit(self, batches, epochs=2):\n        opt = torch.optim.SGD(self.parameters(), lr=0.1)\n        for _ in range(epochs):\n            for x, y in batches:\n                loss = ((self(x) - y) ** 2).mean()\n                opt.zero_grad()\n                loss.backward()\n                opt.step()\n                self.losses.append(loss.detach())\n\n\nreg = Regressor()\nreg.fit([(torch.randn(5, 4), torch.randn(5, 1))])\n',
                '\nimport torch\nfrom torch import nn\n\n\nclass Regressor(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 1)\n        self.losses = []\n\n    def forward(self, x):\n        return self.fc(x)\n\n    def fit(self, batches, epochs=2):\n        opt = torch.optim.SGD(self.parameters(), lr=0.1)\n        for _ in range(epochs):\n            for x, y in batches:\n                loss = ((self(x) - y) ** 2).mean()\n                opt.zero_grad()\n                loss.backward()\n                opt.step()\n                self.losses.append(loss.detach().item())\n\n\nreg = Regressor()\nreg.fit([(torch.randn(5, 4), torch.randn(5, 1))])\n',
            ),
            runtime='assert reg.losses[0].grad_fn is not None',
            severity=Severity.WARNING,
            note="a Module's fit() loop is training code, not the model's internals",
        ),
        Invalid(
            """
import torch
from torch import nn

SEEN = []


def remember(value):
    SEEN.append(value)


def train(model, batches, optimizer):
    model.train()
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        remember(loss)


net = nn.Linear(4, 1)
train(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            range=(19, 17, 19, 21),
            message="`loss` carries an autograd graph; `.backward()` on line 17 freed its activations, but storing it in `SEEN` (through `remember()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\nSEEN = []\n\n\ndef remember(value):\n    SEEN.append(value)\n\n\ndef train(model, batches, optimizer):\n    model.train()\n    for x, y in batches:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        remember(loss.detach())\n\n\nnet = nn.Linear(4, 1)\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))\n',
                '\nimport torch\nfrom torch import nn\n\nSEEN = []\n\n\ndef remember(value):\n    SEEN.append(value)\n\n\ndef train(model, batches, optimizer):\n    model.train()\n    for x, y in batches:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        remember(loss.detach().item())\n\n\nnet = nn.Linear(4, 1)\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))\n',
            ),
            runtime='assert SEEN[0].grad_fn is not None',
            note='stored through a helper that keeps its argument in a global list',
        ),
        Invalid(
            """
import torch
from torch import nn


class Actor:
    def __init__(self, net):
        self.net = net

    def __call__(self, x, y):
        loss = ((self.net(x) - y) ** 2).mean()
        return loss, {"mse": loss}


net = nn.Linear(4, 1)
actor = Actor(net)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
history = []
for x, y in [(torch.randn(5, 4), torch.randn(5, 1))] * 2:
    loss, stats = actor(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history.append(stats["mse"])
""",
            range=(24, 19, 24, 31),
            message='`stats["mse"]` carries an autograd graph; `.backward()` on line 22 freed its activations, but storing it in `history` keeps the graph\'s nodes alive across iterations',
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Actor:\n    def __init__(self, net):\n        self.net = net\n\n    def __call__(self, x, y):\n        loss = ((self.net(x) - y) ** 2).mean()\n        return loss, {"mse": loss}\n\n\nnet = nn.Linear(4, 1)\nactor = Actor(net)\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\nhistory = []\nfor x, y in [(torch.randn(5, 4), torch.randn(5, 1))] * 2:\n    loss, stats = actor(x, y)\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    history.append(stats["mse"].detach())\n',
                '\nimport torch\nfrom torch import nn\n\n\nclass Actor:\n    def __init__(self, net):\n        self.net = net\n\n    def __call__(self, x, y):\n        loss = ((self.net(x) - y) ** 2).mean()\n        return loss, {"mse": loss}\n\n\nnet = nn.Linear(4, 1)\nactor = Actor(net)\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\nhistory = []\nfor x, y in [(torch.randn(5, 4), torch.randn(5, 1))] * 2:\n    loss, stats = actor(x, y)\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    history.append(stats["mse"].detach().item())\n',
            ),
            runtime='assert history[0].grad_fn is not None and history[0] is not history[1]',
            note="`actor(x, y)` on an instance of a class of the file runs its `__call__`: the dict it returns holds the loss",
        ),
        Invalid(
            """
import torch
from torch import nn


class Meter:
    def __init__(self):
        self.val, self.sum = 0.0, 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n


meters = {}


def update_stats(new_stats):
    for key, val in new_stats.items():
        if key not in meters:
            meters[key] = Meter()
        meters[key].update(val)


net = nn.Linear(4, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in [(torch.randn(5, 4), torch.randn(5, 1))] * 2:
    loss = ((net(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    update_stats({"mse": loss})
""",
            range=(32, 25, 32, 29),
            message="`loss` carries an autograd graph; `.backward()` on line 30 freed its activations, but storing it in `meters[key].sum` (through `update_stats()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Meter:\n    def __init__(self):\n        self.val, self.sum = 0.0, 0.0\n\n    def update(self, val, n=1):\n        self.val = val\n        self.sum += val * n\n\n\nmeters = {}\n\n\ndef update_stats(new_stats):\n    for key, val in new_stats.items():\n        if key not in meters:\n            meters[key] = Meter()\n        meters[key].update(val)\n\n\nnet = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\nfor x, y in [(torch.randn(5, 4), torch.randn(5, 1))] * 2:\n    loss = ((net(x) - y) ** 2).mean()\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    update_stats({"mse": loss.detach()})\n',
                '\nimport torch\nfrom torch import nn\n\n\nclass Meter:\n    def __init__(self):\n        self.val, self.sum = 0.0, 0.0\n\n    def update(self, val, n=1):\n        self.val = val\n        self.sum += val * n\n\n\nmeters = {}\n\n\ndef update_stats(new_stats):\n    for key, val in new_stats.items():\n        if key not in meters:\n            meters[key] = Meter()\n        meters[key].update(val)\n\n\nnet = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\nfor x, y in [(torch.randn(5, 4), torch.randn(5, 1))] * 2:\n    loss = ((net(x) - y) ** 2).mean()\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    update_stats({"mse": loss.detach().item()})\n',
            ),
            runtime='assert meters["mse"].sum.grad_fn is not None',
            note="a helper's loop over the dict it is given feeds meters that sum every value: the helper's summary, "
                 "applied at the call in the training loop (after the backward: a warning)",
        ),
        Invalid(
            """
import torch


class RunningSum:
    def __init__(self):
        self.total = 0.0

    def add(self, value):
        self.total += value


class History:
    def __init__(self):
        self.values = []

    def add(self, value):
        self.values.append(value)


def train(model, data, optimizer, meter):
    for x, y in data:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.add(loss)
""",
            range=(27, 18, 27, 22),
            message="`loss` carries an autograd graph; `.backward()` on line 25 freed its activations, but storing it in `meter.total` (through `add()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\n\n\nclass RunningSum:\n    def __init__(self):\n        self.total = 0.0\n\n    def add(self, value):\n        self.total += value\n\n\nclass History:\n    def __init__(self):\n        self.values = []\n\n    def add(self, value):\n        self.values.append(value)\n\n\ndef train(model, data, optimizer, meter):\n    for x, y in data:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        meter.add(loss.detach())\n',
                '\nimport torch\n\n\nclass RunningSum:\n    def __init__(self):\n        self.total = 0.0\n\n    def add(self, value):\n        self.total += value\n\n\nclass History:\n    def __init__(self):\n        self.values = []\n\n    def add(self, value):\n        self.values.append(value)\n\n\ndef train(model, data, optimizer, meter):\n    for x, y in data:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        meter.add(loss.detach().item())\n',
            ),
            runtime='net = torch.nn.Linear(4, 1)\ndata = [(torch.randn(5, 4), torch.randn(5, 1))] * 2\nmeter = RunningSum()\ntrain(net, data, torch.optim.SGD(net.parameters(), lr=0.1), meter)\nassert meter.total.grad_fn is not None\nhistory = History()\ntrain(net, data, torch.optim.SGD(net.parameters(), lr=0.1), history)\nassert all(v.grad_fn is not None for v in history.values)',
            note="`meter.add(loss)` on a parameter nothing types: `add` is defined by two classes of the file and "
                 "each keeps what it is given (`self.total += value`, `self.values.append(value)`), so whichever the "
                 "receiver is, the call keeps `loss` (the join of the candidates' summaries; the first names the place)",
        ),
        Invalid(
            """
from collections import defaultdict

import torch


class Mean:
    def __init__(self):
        self.total, self.n = 0.0, 0

    def add(self, value):
        self.total += value
        self.n += 1


class MeanDict:
    def __init__(self):
        self.means = defaultdict(Mean)

    def add(self, d):
        for key, value in d.items():
            self.means[key].add(value)


def train(model, data, optimizer, summary):
    for x, y in data:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        summary.add({"loss": loss})
""",
            range=(31, 29, 31, 33),
            message="`loss` carries an autograd graph; `.backward()` on line 29 freed its activations, but storing it in `summary.total` (through `add()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nfrom collections import defaultdict\n\nimport torch\n\n\nclass Mean:\n    def __init__(self):\n        self.total, self.n = 0.0, 0\n\n    def add(self, value):\n        self.total += value\n        self.n += 1\n\n\nclass MeanDict:\n    def __init__(self):\n        self.means = defaultdict(Mean)\n\n    def add(self, d):\n        for key, value in d.items():\n            self.means[key].add(value)\n\n\ndef train(model, data, optimizer, summary):\n    for x, y in data:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        summary.add({"loss": loss.detach()})\n',
                '\nfrom collections import defaultdict\n\nimport torch\n\n\nclass Mean:\n    def __init__(self):\n        self.total, self.n = 0.0, 0\n\n    def add(self, value):\n        self.total += value\n        self.n += 1\n\n\nclass MeanDict:\n    def __init__(self):\n        self.means = defaultdict(Mean)\n\n    def add(self, d):\n        for key, value in d.items():\n            self.means[key].add(value)\n\n\ndef train(model, data, optimizer, summary):\n    for x, y in data:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        summary.add({"loss": loss.detach().item()})\n',
            ),
            runtime='net = torch.nn.Linear(4, 1)\nsummary = MeanDict()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), summary)\nassert summary.means["loss"].total.grad_fn is not None',
            note="`summary.add(...)` on a parameter nothing types, `add` defined by two classes of the file: `Mean.add` "
                 "keeps its argument, `MeanDict.add` keeps each entry of the dict it is given (`for key, value in "
                 "d.items(): self.means[key].add(value)`) - the dict literal's loss, either way",
        ),
        Invalid(
            """
import torch
from torch import nn

net = nn.Linear(4, 1)
optimizer = torch.optim.LBFGS(net.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
history = []


def closure():
    optimizer.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    history.append(loss)
    return loss


for _ in range(3):
    optimizer.step(closure)
""",
            range=(15, 19, 15, 23),
            message="`loss` carries an autograd graph; `.backward()` on line 14 freed its activations, but storing it in `history` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\nnet = nn.Linear(4, 1)\noptimizer = torch.optim.LBFGS(net.parameters(), lr=0.1)\nx, y = torch.randn(8, 4), torch.randn(8, 1)\nhistory = []\n\n\ndef closure():\n    optimizer.zero_grad()\n    loss = ((net(x) - y) ** 2).mean()\n    loss.backward()\n    history.append(loss.detach())\n    return loss\n\n\nfor _ in range(3):\n    optimizer.step(closure)\n',
                '\nimport torch\nfrom torch import nn\n\nnet = nn.Linear(4, 1)\noptimizer = torch.optim.LBFGS(net.parameters(), lr=0.1)\nx, y = torch.randn(8, 4), torch.randn(8, 1)\nhistory = []\n\n\ndef closure():\n    optimizer.zero_grad()\n    loss = ((net(x) - y) ** 2).mean()\n    loss.backward()\n    history.append(loss.detach().item())\n    return loss\n\n\nfor _ in range(3):\n    optimizer.step(closure)\n',
            ),
            runtime='assert len(history) >= 3 and history[0].grad_fn is not None',
            note='an L-BFGS closure runs on every step: what it stores outside itself piles up',
        ),
        Invalid(
            """
import torch
from torch import nn


def train(model, loader, optimizer):
    history = []
    for batch in loader:
        out = model(**batch)
        optimizer.zero_grad()
        out["loss"].backward()
        optimizer.step()
        history.append(out["logits"])
    return history


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, y):
        logits = self.fc(x)
        return {"loss": nn.functional.cross_entropy(logits, y), "logits": logits}


net = Classifier()
kept = train(net, [{"x": torch.randn(5, 4), "y": torch.randint(0, 3, (5,))}] * 2, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            range=(13, 23, 13, 36),
            message='`out["logits"]` carries an autograd graph; `.backward()` on line 11 freed its activations, but storing it in `history` keeps the graph\'s nodes alive across iterations',
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef train(model, loader, optimizer):\n    history = []\n    for batch in loader:\n        out = model(**batch)\n        optimizer.zero_grad()\n        out["loss"].backward()\n        optimizer.step()\n        history.append(out["logits"].detach())\n    return history\n\n\nclass Classifier(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n    def forward(self, x, y):\n        logits = self.fc(x)\n        return {"loss": nn.functional.cross_entropy(logits, y), "logits": logits}\n\n\nnet = Classifier()\nkept = train(net, [{"x": torch.randn(5, 4), "y": torch.randint(0, 3, (5,))}] * 2, torch.optim.SGD(net.parameters(), lr=0.1))\n',
            ),
            runtime='assert kept[0].grad_fn is not None',
            note='a dict output: its loss item is back-propagated, so its other items carry the graph too',
        ),
        Invalid(
            """
import torch


def train_epoch(model, loader, optimizer, loss_func):
    total = None
    for batch in loader:
        optimizer.zero_grad()
        losses = loss_func(model, batch)
        loss = losses
        total = losses if total is None else total + losses
        loss.backward()
        optimizer.step()
    return total
""",
            range=(11, 16, 11, 22),
            message="`losses` carries an autograd graph; `.backward()` on line 12 freed its activations, but storing it in `total` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\n\n\ndef train_epoch(model, loader, optimizer, loss_func):\n    total = None\n    for batch in loader:\n        optimizer.zero_grad()\n        losses = loss_func(model, batch)\n        loss = losses\n        total = losses.detach() if total is None else (total + losses).detach()\n        loss.backward()\n        optimizer.step()\n    return total\n',
            ),
            runtime='model = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\ntotal = train_epoch(model, [torch.randn(2, 3) for _ in range(3)], opt, lambda m, b: m(b).pow(2).mean())\nassert has_graph(total)',
            note='RecBole: the first batch starts the sum (`total = losses if total is None else total + losses`); `losses` is known to carry a graph because `loss = losses` is back-propagated',
        ),
        Invalid(
            """
import torch
from torch import nn


class CachedBlock(nn.Module):
    saved = [None] * 4

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.step = 0

    def forward(self, x):
        out = torch.relu(self.fc(x))
        CachedBlock.saved[self.step % 4] = out
        self.step += 1
        return out

    def replay(self, i):
        return CachedBlock.saved[i].detach()
""",
            range=(16, 43, 16, 46),
            message="`out` carries an autograd graph; storing it in `CachedBlock.saved`, a class attribute that every call and every instance shares, keeps every stored graph alive (its activations too, until a backward frees them), and the file only reads them detached",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass CachedBlock(nn.Module):\n    saved = [None] * 4\n\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n        self.step = 0\n\n    def forward(self, x):\n        out = torch.relu(self.fc(x))\n        CachedBlock.saved[self.step % 4] = out.detach()\n        self.step += 1\n        return out\n\n    def replay(self, i):\n        return CachedBlock.saved[i].detach()\n',
            ),
            runtime="block = CachedBlock()\nfor _ in range(3):\n    block(torch.randn(2, 4)).sum().backward()\nassert all(has_graph(s) for s in CachedBlock.saved[:3])",
            note="a DenseNet bottleneck's class-level cache of its outputs, replayed detached later (the forum's 'how PyTorch stores class variables'): every stored graph stays alive",
        ),
        Invalid(
            """
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def forward(self, x):
        s = self.net(x)
        return {"mse": s.pow(2).mean(), "l1": s.abs().mean()}


def train(model, batches, opt):
    trace = []
    for x in batches:
        terms = model(x)
        opt.zero_grad()
        terms["mse"].backward()
        opt.step()
        trace.extend(terms.values())
    return trace
""",
            range=(23, 21, 23, 35),
            message="`terms.values()` carries an autograd graph; `.backward()` on line 21 freed its activations, but storing it in `trace` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Scorer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(4, 1)\n\n    def forward(self, x):\n        s = self.net(x)\n        return {"mse": s.pow(2).mean(), "l1": s.abs().mean()}\n\n\ndef train(model, batches, opt):\n    trace = []\n    for x in batches:\n        terms = model(x)\n        opt.zero_grad()\n        terms["mse"].backward()\n        opt.step()\n        trace.extend([v.detach() for v in terms.values()])\n    return trace\n',
            ),
            note='a dict a forward() returns keeps its entries: `.values()` extends the list with graphs',
            runtime='model = Scorer()\ntrace = train(model, [torch.randn(3, 4) for _ in range(3)], torch.optim.SGD(model.parameters(), lr=0.1))\nassert len(trace) == 6 and all(has_graph(t) for t in trace)',
        ),
        Invalid(
            """
import torch
from torch import nn


def score_stream(net, frames):
    for frame in frames:
        yield net(frame).softmax(-1)


def collect(net: nn.Module, frames):
    kept = []
    for probs in score_stream(net, frames):
        kept.append(probs)
    return torch.stack(kept).argmax(-1).tolist()
""",
            range=(14, 20, 14, 25),
            message='`probs` carries an autograd graph (from `net(frame)` on line 8) that is never back-propagated; storing it in `kept` keeps every saved activation alive across iterations',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef score_stream(net, frames):\n    for frame in frames:\n        yield net(frame).softmax(-1)\n\n\ndef collect(net: nn.Module, frames):\n    kept = []\n    for probs in score_stream(net, frames):\n        kept.append(probs.detach())\n    return torch.stack(kept).argmax(-1).tolist()\n',
            ),
            note="a generator's yields reach the caller's loop",
            runtime='net, frames = nn.Linear(4, 3), [torch.randn(2, 4) for _ in range(3)]\nassert len(collect(net, frames)) == 3\nassert all(activations_alive(p) for p in score_stream(net, frames))',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F


def one_step(net, opt, x, y):
    loss = F.huber_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def fit(net, opt, x, y, epochs):
    total = 0.0
    for _ in range(epochs):
        total = total + one_step(net, opt, x, y)
    return total / epochs
""",
            range=(17, 24, 17, 48),
            message="`one_step(net, opt, x, y)` carries an autograd graph; `.backward()` on line 9 (in `one_step()`) freed its activations, but storing it in `total` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\n\n\ndef one_step(net, opt, x, y):\n    loss = F.huber_loss(net(x), y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    return loss\n\n\ndef fit(net, opt, x, y, epochs):\n    total = 0.0\n    for _ in range(epochs):\n        total = total + one_step(net, opt, x, y).detach()\n    return total / epochs\n',
                '\nimport torch\nimport torch.nn.functional as F\n\n\ndef one_step(net, opt, x, y):\n    loss = F.huber_loss(net(x), y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    return loss\n\n\ndef fit(net, opt, x, y, epochs):\n    total = 0.0\n    for _ in range(epochs):\n        total = total + one_step(net, opt, x, y).detach().item()\n    return total / epochs\n',
            ),
            note="the PyTorch FAQ's accumulation through a helper: `one_step()` back-propagates and returns the loss, so the loop that calls it trains",
            runtime='net = torch.nn.Linear(3, 1)\nmean = fit(net, torch.optim.SGD(net.parameters(), lr=0.01), torch.randn(4, 3), torch.randn(4, 1), 3)\nassert has_graph(mean) and graph_size(mean) > 3',
        ),
        Invalid(
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
            range=(9, 16, 9, 47),
            message="`add_step(total, net, opt, x, y)` carries an autograd graph; `.backward()` on line 21 (in `add_step()`) freed its activations, but storing it in `total` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\n\n\ndef fit(net, opt, x, y, epochs):\n    total = 0.0\n    for _ in range(epochs):\n        total = add_step(total, net, opt, x, y).detach()\n    return total / epochs\n\n\ndef add_step(total, net, opt, x, y):\n    total = total + one_step(net, opt, x, y)\n    return total\n\n\ndef one_step(net, opt, x, y):\n    loss = F.huber_loss(net(x), y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    return loss\n',
                '\nimport torch\nimport torch.nn.functional as F\n\n\ndef fit(net, opt, x, y, epochs):\n    total = 0.0\n    for _ in range(epochs):\n        total = add_step(total, net, opt, x, y).detach().item()\n    return total / epochs\n\n\ndef add_step(total, net, opt, x, y):\n    total = total + one_step(net, opt, x, y)\n    return total\n\n\ndef one_step(net, opt, x, y):\n    loss = F.huber_loss(net(x), y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    return loss\n',
            ),
            note="the same sum made by a helper defined after its caller (issue 33's extract variants): `add_step()` returns "
                 "what it was given for `total` added to, so the call adds to the caller's running sum",
            runtime='net = torch.nn.Linear(3, 1)\nmean = fit(net, torch.optim.SGD(net.parameters(), lr=0.01), torch.randn(4, 3), torch.randn(4, 1), 3)\nassert has_graph(mean) and graph_size(mean) > 3',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

SEEN = []


def remember(v):
    SEEN.append(v)


def train(model: nn.Module, batches):
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        remember(loss)
""",
            range=(16, 17, 16, 21),
            message='`loss` carries an autograd graph (from `F.cross_entropy(model(x), y)` on line 15) that is never back-propagated; storing it in `SEEN` (through `remember()`) keeps every saved activation alive across iterations',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\nSEEN = []\n\n\ndef remember(v):\n    SEEN.append(v)\n\n\ndef train(model: nn.Module, batches):\n    for x, y in batches:\n        loss = F.cross_entropy(model(x), y)\n        remember(loss.detach())\n',
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\nSEEN = []\n\n\ndef remember(v):\n    SEEN.append(v)\n\n\ndef train(model: nn.Module, batches):\n    for x, y in batches:\n        loss = F.cross_entropy(model(x), y)\n        remember(loss.detach().item())\n',
            ),
            note='a helper that keeps its argument in a module-level list: the finding cites where',
            runtime='train(nn.Linear(4, 2), [(torch.randn(3, 4), torch.randint(0, 2, (3,))) for _ in range(2)])\nassert len(SEEN) == 2 and activations_alive(SEEN[0])',
        ),
        Invalid(
            """
import torch
from torch import nn


def activation_penalty(model, batches):
    penalty = 0
    for x in batches:
        penalty = penalty + model(x).pow(2).mean()
    return penalty


model = nn.Linear(2, 1)
value = activation_penalty(model, [torch.randn(3, 2) for _ in range(3)])
""",
            range=(9, 28, 9, 50),
            message='`model(x).pow(2).mean()` carries an autograd graph (from `model(x)` on line 9) that is never back-propagated; storing it in `penalty` keeps every saved activation alive across iterations',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef activation_penalty(model, batches):\n    penalty = 0\n    for x in batches:\n        penalty = penalty + model(x).pow(2).mean().detach()\n    return penalty\n\n\nmodel = nn.Linear(2, 1)\nvalue = activation_penalty(model, [torch.randn(3, 2) for _ in range(3)])\n',
                '\nimport torch\nfrom torch import nn\n\n\ndef activation_penalty(model, batches):\n    penalty = 0\n    for x in batches:\n        penalty = penalty + model(x).pow(2).mean().detach().item()\n    return penalty\n\n\nmodel = nn.Linear(2, 1)\nvalue = activation_penalty(model, [torch.randn(3, 2) for _ in range(3)])\n',
            ),
            note='a sum over batches the function returns: nothing in the file back-propagates it, but a caller might, so the detach is unsafe',
            runtime='assert has_graph(value) and activations_alive(value)',
        ),
        Invalid(
            """
import torch
from torch import nn


def one_step(net, opt, x, y):
    loss = nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


class Fitter:
    def fit(self, net, opt, x, y, epochs):
        self.total = 0.0
        for _ in range(epochs):
            self.total = self.total + one_step(net, opt, x, y)
        return self.total / epochs
""",
            range=(18, 38, 18, 62),
            message="`one_step(net, opt, x, y)` carries an autograd graph; `.backward()` on line 9 (in `one_step()`) freed "
            "its activations, but storing it in `self.total` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=((
                '\n'
                'import torch\n'
                'from torch import nn\n'
                '\n'
                '\n'
                'def one_step(net, opt, x, y):\n'
                '    loss = nn.functional.mse_loss(net(x), y)\n'
                '    opt.zero_grad()\n'
                '    loss.backward()\n'
                '    opt.step()\n'
                '    return loss\n'
                '\n'
                '\n'
                'class Fitter:\n'
                '    def fit(self, net, opt, x, y, epochs):\n'
                '        self.total = 0.0\n'
                '        for _ in range(epochs):\n'
                '            self.total = self.total + one_step(net, opt, x, y).detach()\n'
                '        return self.total / epochs\n'
            ), (
                '\n'
                'import torch\n'
                'from torch import nn\n'
                '\n'
                '\n'
                'def one_step(net, opt, x, y):\n'
                '    loss = nn.functional.mse_loss(net(x), y)\n'
                '    opt.zero_grad()\n'
                '    loss.backward()\n'
                '    opt.step()\n'
                '    return loss\n'
                '\n'
                '\n'
                'class Fitter:\n'
                '    def fit(self, net, opt, x, y, epochs):\n'
                '        self.total = 0.0\n'
                '        for _ in range(epochs):\n'
                '            self.total = self.total + one_step(net, opt, x, y).detach().item()\n'
                '        return self.total / epochs\n'
            )),
            note="the PyTorch FAQ's `total_loss += loss`, written out on `self` with the step in a helper",
            runtime="net = nn.Linear(3, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
                    "x, y = torch.randn(4, 3), torch.randn(4, 1)\n"
                    "one, three = Fitter().fit(net, opt, x, y, 1), Fitter().fit(net, opt, x, y, 3)\n"
                    "assert has_graph(three) and graph_size(three) > graph_size(one)",
        ),
        Invalid(
            """
import torch
from torch import nn


def fit(model, batches, opt):
    history = []
    for x, y in batches:
        opt.zero_grad()
        err = model(x) - y
        terms = {"mse": err.pow(2).mean(), "l1": err.abs().mean()}
        (terms["mse"] + terms["l1"]).backward()
        opt.step()
        for name, term in terms.items():
            history.append(term)
    return history


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = fit(model, [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)], opt)
""",
            range=(15, 27, 15, 31),
            message="`term` carries an autograd graph; `.backward()` on line 12 freed its activations, but "
            "storing it in `history` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\ndef fit(model, batches, opt):\n    history = []\n"
                "    for x, y in batches:\n        opt.zero_grad()\n        err = model(x) - y\n"
                '        terms = {"mse": err.pow(2).mean(), "l1": err.abs().mean()}\n'
                '        (terms["mse"] + terms["l1"]).backward()\n        opt.step()\n'
                "        for name, term in terms.items():\n            history.append(term.detach())\n"
                "    return history\n\n\nmodel = nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "history = fit(model, [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)], opt)\n",
                "\nimport torch\nfrom torch import nn\n\n\ndef fit(model, batches, opt):\n    history = []\n"
                "    for x, y in batches:\n        opt.zero_grad()\n        err = model(x) - y\n"
                '        terms = {"mse": err.pow(2).mean(), "l1": err.abs().mean()}\n'
                '        (terms["mse"] + terms["l1"]).backward()\n        opt.step()\n'
                "        for name, term in terms.items():\n            history.append(term.detach().item())\n"
                "    return history\n\n\nmodel = nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "history = fit(model, [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)], opt)\n",
            ),
            note="loss terms kept through `.items()` of their dict after the step back-propagated them: the list outlives the training loop's iterations, not only the inner loop's",
            runtime="assert has_graph(history[0])",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def tagged(value, tag):
    return value, tag


def one_step(net, opt, x, y):
    loss = F.huber_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def fit(net, opt, x, y, epochs):
    total = 0.0
    for _ in range(epochs):
        total = tagged(total + one_step(net, opt, x, y), "sum")[0]
    return total / epochs
""",
            range=(22, 31, 22, 55),
            message="`one_step(net, opt, x, y)` carries an autograd graph; `.backward()` on line 14 (in "
            "`one_step()`) freed its activations, but storing it in `total` keeps the graph's nodes "
            "alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def tagged(value, tag):\n    return value, tag\n\n\ndef one_step(net, opt, x, y):\n"
                "    loss = F.huber_loss(net(x), y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
                "    return loss\n\n\ndef fit(net, opt, x, y, epochs):\n    total = 0.0\n"
                "    for _ in range(epochs):\n"
                '        total = tagged(total + one_step(net, opt, x, y).detach(), "sum")[0]\n'
                "    return total / epochs\n",
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def tagged(value, tag):\n    return value, tag\n\n\ndef one_step(net, opt, x, y):\n"
                "    loss = F.huber_loss(net(x), y)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
                "    return loss\n\n\ndef fit(net, opt, x, y, epochs):\n    total = 0.0\n"
                "    for _ in range(epochs):\n"
                '        total = tagged(total + one_step(net, opt, x, y).detach().item(), "sum")[0]\n'
                "    return total / epochs\n",
            ),
            note="the PyTorch FAQ's running total written out (`total = total + loss`) and handed through a helper's tuple: still the same loop-carried place",
            runtime="net = nn.Linear(3, 1)\nmean = fit(net, torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(8, 3), torch.randn(8, 1), 3)\nassert has_graph(mean)",
        ),
        Invalid(
            """
from collections import defaultdict

import torch
from torch import nn


class Collector:
    def __init__(self):
        self.stats = defaultdict(list)

    def collect(self, **stats):
        for key, value in stats.items():
            self.stats[key].append(value)


def train(model, batches, optimizer, collector):
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        collector.collect(loss=loss, size=len(x))


net = nn.Linear(4, 1)
col = Collector()
train(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), col)
""",
            range=(23, 31, 23, 35),
            message="`loss` carries an autograd graph; `.backward()` on line 21 freed its activations, but storing it in `collector.stats` (through `collect()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nfrom collections import defaultdict\n\nimport torch\nfrom torch import nn\n\n\nclass Collector:\n    def __init__(self):\n        self.stats = defaultdict(list)\n\n    def collect(self, **stats):\n        for key, value in stats.items():\n            self.stats[key].append(value)\n\n\ndef train(model, batches, optimizer, collector):\n    for x, y in batches:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        collector.collect(loss=loss.detach(), size=len(x))\n\n\nnet = nn.Linear(4, 1)\ncol = Collector()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), col)\n',
                '\nfrom collections import defaultdict\n\nimport torch\nfrom torch import nn\n\n\nclass Collector:\n    def __init__(self):\n        self.stats = defaultdict(list)\n\n    def collect(self, **stats):\n        for key, value in stats.items():\n            self.stats[key].append(value)\n\n\ndef train(model, batches, optimizer, collector):\n    for x, y in batches:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        collector.collect(loss=loss.detach().item(), size=len(x))\n\n\nnet = nn.Linear(4, 1)\ncol = Collector()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), col)\n',
            ),
            note='a collector that takes **kwargs and stores each value through `.items()`: the store is reported at the call that hands it the loss',
            runtime="assert col.stats['loss'][0].grad_fn is not None",
        ),
        Invalid(
            """
import torch
from torch import nn


class RunningMean:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def add(self, value, n=1):
        self.total += value * n
        self.count += n


def record(meter, loss, batch):
    meter.add(loss, batch.size(0))


def train(model, batches, optimizer, meter):
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        record(meter, loss, x)


net = nn.Linear(4, 1)
running = RunningMean()
train(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), running)
""",
            range=(26, 22, 26, 26),
            message="`loss` carries an autograd graph; `.backward()` on line 24 freed its activations, but storing it in `meter.total` (through `record()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass RunningMean:\n    def __init__(self):\n        self.total = 0.0\n        self.count = 0\n\n    def add(self, value, n=1):\n        self.total += value * n\n        self.count += n\n\n\ndef record(meter, loss, batch):\n    meter.add(loss, batch.size(0))\n\n\ndef train(model, batches, optimizer, meter):\n    for x, y in batches:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        record(meter, loss.detach(), x)\n\n\nnet = nn.Linear(4, 1)\nrunning = RunningMean()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), running)\n',
                '\nimport torch\nfrom torch import nn\n\n\nclass RunningMean:\n    def __init__(self):\n        self.total = 0.0\n        self.count = 0\n\n    def add(self, value, n=1):\n        self.total += value * n\n        self.count += n\n\n\ndef record(meter, loss, batch):\n    meter.add(loss, batch.size(0))\n\n\ndef train(model, batches, optimizer, meter):\n    for x, y in batches:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        record(meter, loss.detach().item(), x)\n\n\nnet = nn.Linear(4, 1)\nrunning = RunningMean()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), running)\n',
            ),
            note="a helper given the meter updates it: the meter's running total keeps every step's graph, reported at the helper's call in the loop",
            runtime='assert running.total.grad_fn is not None',
        ),
        Invalid(
            """
import torch
from torch import nn


class RunLogger:
    def __init__(self):
        self.rows = []

    def log(self, metrics):
        self.rows.append(dict(metrics))


def train(model, batches, optimizer, logger):
    for step, (x, y) in enumerate(batches):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.log({"loss": loss, "step": step})


net = nn.Linear(4, 1)
run = RunLogger()
train(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), run)
""",
            range=(20, 28, 20, 32),
            message="`loss` carries an autograd graph; `.backward()` on line 18 freed its activations, but storing it in `logger.rows` (through `log()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass RunLogger:\n    def __init__(self):\n        self.rows = []\n\n    def log(self, metrics):\n        self.rows.append(dict(metrics))\n\n\ndef train(model, batches, optimizer, logger):\n    for step, (x, y) in enumerate(batches):\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        logger.log({"loss": loss.detach(), "step": step})\n\n\nnet = nn.Linear(4, 1)\nrun = RunLogger()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), run)\n',
                '\nimport torch\nfrom torch import nn\n\n\nclass RunLogger:\n    def __init__(self):\n        self.rows = []\n\n    def log(self, metrics):\n        self.rows.append(dict(metrics))\n\n\ndef train(model, batches, optimizer, logger):\n    for step, (x, y) in enumerate(batches):\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        logger.log({"loss": loss.detach().item(), "step": step})\n\n\nnet = nn.Linear(4, 1)\nrun = RunLogger()\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1), run)\n',
            ),
            note='the logger of the file, known from the call that passes it, keeps a shallow copy of each metrics dict: `dict(metrics)` holds the same loss tensor',
            runtime="assert run.rows[0]['loss'].grad_fn is not None",
        ),
        Invalid(
            """
import torch


def fit(model, batches, optimizer, compute_terms):
    running = None
    for batch in batches:
        optimizer.zero_grad()
        terms = compute_terms(model, batch)
        loss = sum(terms)
        running = terms if running is None else tuple(map(sum, zip(running, terms)))
        loss.backward()
        optimizer.step()
    return running
""",
            range=(11, 18, 11, 23),
            message="`terms` carries an autograd graph; `.backward()` on line 12 freed its activations, but storing it in `running` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            note='RecBole: a model returning several losses keeps a tuple of running sums (`tuple(map(sum, zip(total, losses)))`); `sum(terms)` is back-propagated, so the terms carry graphs',
            runtime='model = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nrunning = fit(model, [torch.randn(2, 3) for _ in range(3)], opt, lambda m, b: (m(b).pow(2).mean(), m(b).abs().mean()))\nassert all(has_graph(t) for t in running)',
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
state = {}
for x in [torch.randn(2, 3) for _ in range(3)]:
    out = model(x)
    state["y_pred"] = out
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            range=(10, 22, 10, 25),
            message='`out` carries an autograd graph; `.backward()` on line 13 freed its activations, but storing it in `state["y_pred"]` keeps the graph\'s nodes alive past the step (each step\'s, until the next replaces it), and no backward reads them from there',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nstate = {}\nfor x in [torch.randn(2, 3) for _ in range(3)]:\n    out = model(x)\n    state["y_pred"] = out.detach()\n    loss = out.pow(2).mean()\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n',
            ),
            runtime="assert state['y_pred'].grad_fn is not None",
            severity=Severity.WARNING,
            note="a dict key replaced every step that no backward reads from (the loss uses `out`): a record of the "
                 "step, whose graph outlives it (the torchbearer VALID example's loss reads its key back)",
        ),
        Invalid(
            """
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def fit(self, batches):
        for x, y in batches:
            loss = ((self.model(x) - y) ** 2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.last_loss = loss
""",
            range=(15, 29, 15, 33),
            message="`loss` carries an autograd graph; `.backward()` on line 13 freed its activations, but storing it in `self.last_loss` keeps the graph's nodes alive past the step (each step's, until the next replaces it), and no backward reads them from there",
            fixes=(
                '\nimport torch\n\n\nclass Trainer:\n    def __init__(self, model, optimizer):\n        self.model, self.optimizer = model, optimizer\n\n    def fit(self, batches):\n        for x, y in batches:\n            loss = ((self.model(x) - y) ** 2).mean()\n            self.optimizer.zero_grad()\n            loss.backward()\n            self.optimizer.step()\n            self.last_loss = loss.detach()\n',
                '\nimport torch\n\n\nclass Trainer:\n    def __init__(self, model, optimizer):\n        self.model, self.optimizer = model, optimizer\n\n    def fit(self, batches):\n        for x, y in batches:\n            loss = ((self.model(x) - y) ** 2).mean()\n            self.optimizer.zero_grad()\n            loss.backward()\n            self.optimizer.step()\n            self.last_loss = loss.detach().item()\n',
            ),
            runtime="net = torch.nn.Linear(3, 1)\nt = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1))\n"
                    "t.fit([(torch.randn(2, 3), torch.randn(2, 1))] * 2)\nassert t.last_loss.grad_fn is not None",
            severity=Severity.WARNING,
            note="`obj.attr = loss` (rules.md): an attribute written and never read back in the file is a record for "
                 "readers elsewhere, not the method's scratch; the last step's graph outlives `fit()`",
        ),
        Invalid(
            """
import torch


class LoggingMixin:
    def record(self, loss):
        self.history.append(loss)


class Trainer(LoggingMixin):
    def __init__(self, model):
        self.model = model
        self.history = []
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, batches):
        for x, y in batches:
            loss = ((self.model(x) - y) ** 2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.record(loss)
""",
            range=(22, 24, 22, 28),
            message="`loss` carries an autograd graph; `.backward()` on line 20 freed its activations, but storing it in `self.history` (through `record()`) keeps the graph's nodes alive across iterations",
            fixes=(
                '\nimport torch\n\n\nclass LoggingMixin:\n    def record(self, loss):\n        self.history.append(loss)\n\n\nclass Trainer(LoggingMixin):\n    def __init__(self, model):\n        self.model = model\n        self.history = []\n        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n\n    def fit(self, batches):\n        for x, y in batches:\n            loss = ((self.model(x) - y) ** 2).mean()\n            self.optimizer.zero_grad()\n            loss.backward()\n            self.optimizer.step()\n            self.record(loss.detach())\n',
                '\nimport torch\n\n\nclass LoggingMixin:\n    def record(self, loss):\n        self.history.append(loss)\n\n\nclass Trainer(LoggingMixin):\n    def __init__(self, model):\n        self.model = model\n        self.history = []\n        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n\n    def fit(self, batches):\n        for x, y in batches:\n            loss = ((self.model(x) - y) ** 2).mean()\n            self.optimizer.zero_grad()\n            loss.backward()\n            self.optimizer.step()\n            self.record(loss.detach().item())\n',
            ),
            runtime="net = torch.nn.Linear(3, 1)\nt = Trainer(net)\nt.fit([(torch.randn(2, 3), torch.randn(2, 1))] * 2)\n"
                    "assert t.history[0].grad_fn is not None",
            severity=Severity.WARNING,
            note="a method inherited from a class of the file (a mixin's `record()`) runs as the subclass's own: what it keeps is a store of the caller's loop",
        ),
        Invalid(
            """
import torch
from torch import nn


class Collector:
    def __init__(self):
        self.rows = []

    def collect(self, **stats):
        for key, value in stats.items():
            self.rows.append(value)


def as_dict(value):
    return {"out": value}


class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt
        self.stats = Collector()

    def fit(self, batches):
        for x, y in batches:
            self.opt.zero_grad()
            loss = nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.opt.step()
            as_dict(self.stats)["out"].collect(loss=loss)
""",
            range=(30, 52, 30, 56),
            message="`loss` carries an autograd graph; `.backward()` on line 28 freed its activations, but storing it in `self.stats.rows` (through `collect()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Collector:\n    def __init__(self):\n        self.rows = []\n\n    def collect(self, **stats):\n        for key, value in stats.items():\n            self.rows.append(value)\n\n\ndef as_dict(value):\n    return {"out": value}\n\n\nclass Trainer:\n    def __init__(self, model, opt):\n        self.model, self.opt = model, opt\n        self.stats = Collector()\n\n    def fit(self, batches):\n        for x, y in batches:\n            self.opt.zero_grad()\n            loss = nn.functional.mse_loss(self.model(x), y)\n            loss.backward()\n            self.opt.step()\n            as_dict(self.stats)["out"].collect(loss=loss.detach())\n', '\nimport torch\nfrom torch import nn\n\n\nclass Collector:\n    def __init__(self):\n        self.rows = []\n\n    def collect(self, **stats):\n        for key, value in stats.items():\n            self.rows.append(value)\n\n\ndef as_dict(value):\n    return {"out": value}\n\n\nclass Trainer:\n    def __init__(self, model, opt):\n        self.model, self.opt = model, opt\n        self.stats = Collector()\n\n    def fit(self, batches):\n        for x, y in batches:\n            self.opt.zero_grad()\n            loss = nn.functional.mse_loss(self.model(x), y)\n            loss.backward()\n            self.opt.step()\n            as_dict(self.stats)["out"].collect(loss=loss.detach().item())\n'),
            note='mi-prometheus\'s statistics collector, reached through a helper that hands it on (`as_dict(self.stats)["out"].collect(loss=loss)`): the call is made on `self.stats`, and `collect()` keeps what it is given in its rows',
            runtime='model = nn.Linear(4, 1)\ntrainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))\ntrainer.fit([(torch.randn(3, 4), torch.randn(3, 1)) for _ in range(2)])\nassert has_graph(trainer.stats.rows[0]) and has_graph(trainer.stats.rows[1])',
        ),
        Invalid(
            """
import torch
from torch import nn


def as_dict(value):
    return {"out": value}


def fit(model, batches, opt):
    total = None
    for x, y in batches:
        opt.zero_grad()
        losses = nn.functional.mse_loss(model(x), y), model.weight.norm()
        for key, value in as_dict(losses if total is None else tuple(map(sum, zip(total, losses)))).items():
            total = value
        sum(losses).backward()
        opt.step()
    return total
""",
            range=(15, 34, 15, 98),
            message="`losses if total is None else tuple(...` carries an autograd graph; `.backward()` on line 17 freed its activations, but storing it in `total` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=(),
            note="RecBole's tuple of running sums, rebound in a loop over a dict (`for key, value in as_dict(...).items(): total = value`) before the iteration back-propagates the same losses: by the end of each iteration the graph was back-propagated, and `total` keeps it across them",
            runtime='def run(n):\n    model = nn.Linear(4, 1)\n    return fit(model, [(torch.randn(3, 4), torch.randn(3, 1)) for _ in range(n)], torch.optim.SGD(model.parameters(), lr=0.1))\none, three = run(1), run(3)\nassert has_graph(three[0]) and graph_size(three[0]) > graph_size(one[0])',
        ),
        Invalid(
            """
import collections

import torch
from torch import nn


class Recorder:
    def __init__(self):
        self.kept = collections.defaultdict(list)

    def record(self, values):
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                value = value.clone()
            self.kept[key].append(value)


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
recorder = Recorder()
for step in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    recorder.record({"loss": loss})
""",
            range=(27, 29, 27, 33),
            message="`loss` carries an autograd graph; `.backward()` on line 25 freed its activations, but storing it in `recorder.kept` (through `record()`) keeps the graph's nodes alive across iterations",
            fixes=('\nimport collections\n\nimport torch\nfrom torch import nn\n\n\nclass Recorder:\n    def __init__(self):\n        self.kept = collections.defaultdict(list)\n\n    def record(self, values):\n        for key, value in values.items():\n            if isinstance(value, torch.Tensor):\n                value = value.clone()\n            self.kept[key].append(value)\n\n\nmodel = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nrecorder = Recorder()\nfor step in range(3):\n    loss = model(torch.randn(8, 4)).pow(2).mean()\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    recorder.record({"loss": loss.detach()})\n', '\nimport collections\n\nimport torch\nfrom torch import nn\n\n\nclass Recorder:\n    def __init__(self):\n        self.kept = collections.defaultdict(list)\n\n    def record(self, values):\n        for key, value in values.items():\n            if isinstance(value, torch.Tensor):\n                value = value.clone()\n            self.kept[key].append(value)\n\n\nmodel = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nrecorder = Recorder()\nfor step in range(3):\n    loss = model(torch.randn(8, 4)).pow(2).mean()\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    recorder.record({"loss": loss.detach().item()})\n',),
            severity=Severity.WARNING,
            note='issue 33 (pytorch-pfn-extras#49): the recorder clones what it is given under an isinstance(value, torch.Tensor) guard; the argument carries a graph, so only the branch where it is a tensor runs, and the clone keeps that graph',
            runtime='assert has_graph(recorder.kept["loss"][0]) and len(recorder.kept["loss"]) == 3',
        ),
        Invalid(
            """
import torch
import torch.nn as nn


def train(model, optimizer, batches):
    running = torch.zeros(())
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running.add_(loss)
    return running
""",
            range=(13, 21, 13, 25),
            message="`loss` carries an autograd graph; `.backward()` on line 11 freed its activations, but storing it in `running` keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=('\nimport torch\nimport torch.nn as nn\n\n\ndef train(model, optimizer, batches):\n    running = torch.zeros(())\n    for x, y in batches:\n        loss = nn.functional.mse_loss(model(x), y)\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        running.add_(loss.detach())\n    return running\n', '\nimport torch\nimport torch.nn as nn\n\n\ndef train(model, optimizer, batches):\n    running = torch.zeros(())\n    for x, y in batches:\n        loss = nn.functional.mse_loss(model(x), y)\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        running.add_(loss.detach().item())\n    return running\n'),
            note="issue 33 (NVIDIA DeepLearningExamples#1102, corpus b35): `running.add_(loss)` is the method form of `running += loss` - the in-place add keeps each step's graph on the running sum",
            runtime='def run(n):\n    model = nn.Linear(3, 1)\n    return train(model, torch.optim.SGD(model.parameters(), lr=0.1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(n)])\none, three = run(1), run(3)\nassert has_graph(three) and graph_size(three) > graph_size(one)',
        ),
        Invalid(
            """
import torch


class Reporter:
    def __init__(self):
        self.observation = {}

    def report(self, values):
        for key, value in values.items():
            self.observation[key] = value


def train(model, loader, optimizer, reporter):
    for step, (x, y) in enumerate(loader):
        if step % 10 == 0:
            reporter.observation = {}
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        reporter.report({f"loss/{step}": loss})
    return reporter.observation
""",
            range=(22, 41, 22, 45),
            message="`loss` carries an autograd graph; `.backward()` on line 20 freed its activations, but storing it in `reporter.observation` (through `report()`) keeps the graph's nodes alive across iterations",
            severity=Severity.WARNING,
            fixes=('\nimport torch\n\n\nclass Reporter:\n    def __init__(self):\n        self.observation = {}\n\n    def report(self, values):\n        for key, value in values.items():\n            self.observation[key] = value\n\n\ndef train(model, loader, optimizer, reporter):\n    for step, (x, y) in enumerate(loader):\n        if step % 10 == 0:\n            reporter.observation = {}\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        reporter.report({f"loss/{step}": loss.detach()})\n    return reporter.observation\n', '\nimport torch\n\n\nclass Reporter:\n    def __init__(self):\n        self.observation = {}\n\n    def report(self, values):\n        for key, value in values.items():\n            self.observation[key] = value\n\n\ndef train(model, loader, optimizer, reporter):\n    for step, (x, y) in enumerate(loader):\n        if step % 10 == 0:\n            reporter.observation = {}\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        reporter.report({f"loss/{step}": loss.detach().item()})\n    return reporter.observation\n',),
            note="the place is made afresh only every tenth iteration (under an `if`): the steps between pile up",
            runtime='net = torch.nn.Linear(4, 1)\nrep = Reporter()\n'
                    'last = train(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 3, torch.optim.SGD(net.parameters(), lr=0.1), rep)\n'
                    'assert len(last) == 3 and all(has_graph(t) for t in last.values())',
        ),
    ]


def _trained_each_outer_iteration(store, backwards) -> bool:
    """PPLM's `loss_list = []` in each step of its outer loop, filled by an inner loop with terms of the
    `loss` that step back-propagates: the list lives one outer iteration, and the backward that frees
    its graphs runs in that iteration too."""
    outer = [loop for loop in store.made_in if loop is not store.loop]
    made = _calls_made_in(store, outer[-1]) if outer else set()
    return bool(made) and any(outer[-1] in b.loops and b.function is store.function and b.origins & made
                              for b in backwards)


def _calls_made_in(store, loop) -> set:
    """The calls in `loop` that made the stored graph - not the nodes inside a forward() that every
    call of the model shares, which would tie it to any backward through that model."""
    made = {o for o in store.value.origins if isinstance(o, cst.Call)}
    return made & {n for n in descendants(loop) if isinstance(n, cst.Call)} if made else set()


def _freeing(store, done: list):
    """The backward that freed the stored graph's activations, for the message: one whose graph holds a
    the most calls the store's own loop made (`g_loss.backward()` for `loss_dict["g"] = g_loss`, not the
    discriminator's earlier backward, which shares only some of them), else the first."""
    if not done:
        return None
    made = _calls_made_in(store, store.loop)
    return max(done, key=lambda b: len(b.origins & made))  # (the first of equals)


def _forward_trained(store, backwards) -> bool:
    """ACER's rollout keeps `values.append(value)` only to read it detached, but `policy` and `q_value`,
    returned by the same `model(state)` call, are back-propagated after the loop: the activations the
    stored graph holds are the ones that backward needs anyway."""
    made = _calls_made_in(store, store.loop)
    return bool(made) and any(b.origins & made for b in backwards)


def _returned_to_unknown_caller(store) -> bool:
    """The stored-into place is (part of) what the function returns, to a caller we
    cannot follow - one elsewhere, or a model's forward - which may well back-propagate it."""
    fn = store.function
    if fn is None or store.token not in fn.returns.origins:
        return False
    return fn.call_sites == 0 or any(forward_code(c) or c.cls is not None and c.cls.module_like
                                     for c in fn.callers)


def _part_of_forward(fn, backwards, seen=None) -> bool:
    """`forward` of a model, or a function only it calls (not a model class's `fit()` or
    `training_step()`: those are training code)."""
    if forward_code(fn) or fn.name == "__call__":  # an attention processor's __call__ runs in forward
        return True
    seen = seen if seen is not None else set()
    seen.add(fn)
    callers = [c for c in fn.callers if c not in seen]
    if not callers:
        # Never called in this file: a model's helper method (`_decode`, `step`) is called by
        # its forward elsewhere; only a method that trains (a backward of its own) is not.
        return (fn.cls is not None and fn.cls.module_like and fn.name not in K.FRAMEWORK_STEPS
                and not any(b.function is fn for b in backwards))
    return all(_part_of_forward(c, backwards, seen) for c in callers)


def _graph_left(node: cst.BaseExpression, flow) -> bool:
    """A branch of a stored conditional that carries a graph no `.detach()` of a part removes
    (`tuple(map(sum, zip(total, losses)))`, a tuple of sums): detaching the other branch fixes nothing."""
    return isinstance(node, cst.IfExp) and any(flow.value(b).has_graph and not _graph_parts(b, flow)
                                               for b in (node.body, node.orelse))


def _graph_parts(node: cst.BaseExpression, flow) -> list:
    """The sub-expressions of a stored value that carry a tensor graph (a fix detaches each)."""
    value = flow.value(node)
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return [p for e in node.elements if isinstance(e, cst.Element) for p in _graph_parts(e.value, flow)]
    if isinstance(node, cst.Dict):
        return [p for e in node.elements if isinstance(e, cst.DictElement) for p in _graph_parts(e.value, flow)]
    if isinstance(node, cst.IfExp):  # `loss if total is None else total + loss`: each branch
        return _graph_parts(node.body, flow) + _graph_parts(node.orelse, flow)
    if value.has_graph and value.kind is Kind.TENSOR and not value.guessed:
        return [node]
    return []
