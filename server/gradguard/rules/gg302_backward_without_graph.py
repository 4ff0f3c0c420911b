from __future__ import annotations

import libcst as cst

from gradguard.engine.values import Grad, Kind
from gradguard.findings import Severity
from gradguard.rules._build import short
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
            origin = f" ({why.text} on line {line_of(why.node)})" if why is not None else ""
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
    ]
