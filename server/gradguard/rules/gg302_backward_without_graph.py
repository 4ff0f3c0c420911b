from __future__ import annotations

import libcst as cst

from gradguard.engine.values import Grad, Kind
from gradguard.findings import Severity
from gradguard.rules._build import evidence_note, short
from gradguard.rules.base import Invalid, Rule, Valid

ERROR = "element 0 of tensors does not require grad and does not have a grad_fn"


class BackwardWithoutGraph(Rule):
    """
    ## What it does
    Finds `.backward()` called on a value that provably carries no graph: it was
    computed under `torch.no_grad()`, or only from `.detach()`ed tensors,
    `.item()` numbers and fresh tensors that do not require grad.

    ## Why is this bad?
    It raises at run time: `RuntimeError: element 0 of tensors does not require
    grad and does not have a grad_fn`. The cause is usually a forward pass moved
    under `torch.no_grad()` (copied from an evaluation loop) or a prediction
    detached on its way to the loss - the model would learn nothing.

    ## Example
    ```python
    with torch.no_grad():
        loss = criterion(model(x), y)
    loss.backward()
    ```

    ## Use instead
    ```python
    loss = criterion(model(x), y)
    loss.backward()
    ```

    ## Fix safety
    There is no automatic fix: where the graph was cut (the `no_grad` block, the
    `.detach()`) is a decision about what should learn, and the finding's related
    location points at it.
    """

    code = "GG302"
    name = "backward-without-graph"
    severity = Severity.ERROR
    summary = "`.backward()` on a value that carries no graph: it raises"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
            return
        v = self.flow.value(func.value)
        if v.kind is not Kind.TENSOR or v.grad is not Grad.NO:
            return
        name = short(self.code_of(func.value))
        why = v.why

        def message(line_of):
            origin = evidence_note(why, func.value, line_of, self.code_of)
            return f"`{name}` carries no graph{origin}; `.backward()` on it raises \"{ERROR}\""

        related = [(why.node, "the graph is lost here")] if why is not None else []
        self.report(node, message, related=related)

    VALID = [
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(3, 1)
loss = model(torch.randn(4, 3)).pow(2).mean()
loss.backward()
""",
            runtime="assert model.weight.grad is not None",
        ),
        Valid(
            """
import torch

w = torch.zeros(3, requires_grad=True)
with torch.no_grad():
    w += 1
loss = (w * 2).sum()
loss.backward()
""",
            note="only the update ran under no_grad",
            runtime="assert w.grad.tolist() == [2.0, 2.0, 2.0]",
        ),
        Valid(
            """
import torch


def step(loss):
    loss.backward()
""",
            note="unknown: silent",
        ),
        Valid(
            """
import torch
from torch import nn

net = nn.Linear(2, 1)
total = torch.zeros(())
for x in [torch.randn(3, 2) for _ in range(2)]:
    total = total + net(x).sum()
total.backward()
""",
            note="starts as a plain tensor, gains a graph in the loop",
            runtime="assert net.weight.grad is not None",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(3, 2)
criterion = nn.CrossEntropyLoss()
x, y = torch.randn(4, 3), torch.tensor([0, 1, 0, 1])
with torch.no_grad():
    loss = criterion(model(x), y)
loss.backward()
""",
            range=(10, 0, 10, 15),
            message="`loss` carries no graph (computed inside `torch.no_grad()` on line 9); `.backward()` on it raises "
            f"\"{ERROR}\"",
            raises=ERROR,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train_step(net, batch, target):
    logits = net(batch).detach()
    err = F.mse_loss(logits, target)
    err.backward()


train_step(nn.Linear(2, 2), torch.randn(5, 2), torch.randn(5, 2))
""",
            range=(10, 4, 10, 18),
            message="`err` carries no graph (`.detach()` on line 8); `.backward()` on it raises \"" + ERROR + "\"",
            raises=ERROR,
            note="a detached prediction, in a helper function",
        ),
        Invalid(
            """
import torch

scores = torch.randn(8)
penalty = torch.tensor(scores.sum().item())
penalty.backward()
""",
            range=(6, 0, 6, 18),
            message="`penalty` carries no graph (a new tensor from `torch.tensor` on line 5); `.backward()` on it raises "
            f"\"{ERROR}\"",
            raises=ERROR,
            note="rebuilt from a Python number",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Trainer:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def step(self, batch, labels):
        with torch.no_grad():
            objective = F.cross_entropy(self.net(batch), labels)
        objective.backward()


Trainer().step(torch.randn(5, 4), torch.randint(0, 3, (5,)))
""",
            range=(14, 8, 14, 28),
            message='`objective` carries no graph (computed inside `torch.no_grad()` on line 13); `.backward()` on '
            'it raises "element 0 of tensors does not require grad and does not have a grad_fn"',
            raises=ERROR,
            note='a trainer class method; an nn.Sequential model; `import torch.nn.functional as F`',
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(3, 1)
crit = nn.MSELoss()
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
for epoch in range(2):
    batch_losses = [crit(model(inp), tgt).item() for inp, tgt in batches]
    epoch_loss = torch.tensor(batch_losses).mean()
    epoch_loss.backward()
""",
            range=(11, 4, 11, 25),
            message='`epoch_loss` carries no graph (a new tensor from `torch.tensor` on line 10); `.backward()` on '
            'it raises "element 0 of tensors does not require grad and does not have a grad_fn"',
            raises=ERROR,
            note='losses turned into floats in a list comprehension, then rebuilt per epoch',
        ),
        Invalid(
            """
import torch

w = torch.randn(3, requires_grad=True)
n = 0
while n < 3:
    with torch.no_grad():
        residual = (w - 1.0).pow(2).sum()
    residual.backward()
    n += 1
""",
            range=(9, 4, 9, 23),
            message='`residual` carries no graph (computed inside `torch.no_grad()` on line 8); `.backward()` on it '
            'raises "element 0 of tensors does not require grad and does not have a grad_fn"',
            raises=ERROR,
            note='a `while` loop; renamed variables',
        ),
    ]
