from __future__ import annotations

import re

import libcst as cst

from gradguard.engine.values import Grad, Kind
from gradguard.engine.walk import descendants
from gradguard.findings import Severity
from gradguard.rules._build import evidence_note, short
from gradguard.rules.base import Invalid, Rule, Valid

ERROR = "element 0 of tensors does not require grad and does not have a grad_fn"
# An `if` that asks whether there is a graph (or grad mode) to back-propagate.
GRAD_TEST = re.compile(r"\b(?:requires_grad|grad_fn|is_grad_enabled|is_inference_mode_enabled)\b")
# Functions that back-propagate their first argument (`outputs`, `tensors`): they raise like `.backward()`.
AUTOGRAD_FUNCTIONS = frozenset(("torch.autograd.grad", "torch.autograd.backward"))
CAUGHT = frozenset(("RuntimeError", "Exception", "BaseException"))


def _expects_error(item: cst.BaseExpression) -> bool:
    """`with pytest.raises(RuntimeError):`, `with self.assertRaises(RuntimeError):`: code that expects the error."""
    func = item.func if isinstance(item, cst.Call) else None
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name == "raises" or name.startswith("assertRaises")


def _catches_runtime_error(handler: cst.ExceptHandler) -> bool:
    """`except:`, `except RuntimeError`, `except (ValueError, RuntimeError) as e`, `except Exception`."""
    kinds = handler.type
    if kinds is None:
        return True
    names = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    return any((n.value if isinstance(n, cst.Name) else n.attr.value if isinstance(n, cst.Attribute) else "") in CAUGHT
               for n in names)


class BackwardWithoutGraph(Rule):
    """
    ## What it does
    Finds `.backward()` (or `torch.autograd.grad` / `torch.autograd.backward`)
    called on a value that provably carries no graph: it was computed under
    `torch.no_grad()` or `torch.inference_mode()` (which `torch.enable_grad()`
    inside it does not undo), in a function every call of which runs under
    `torch.no_grad()`, or only from `.detach()`ed tensors, `.item()` numbers and
    fresh tensors that do not require grad.

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

    def __init__(self, flow, settings, reports):
        super().__init__(flow, settings, reports)
        self.conditions: dict = {}  # function being walked -> the tests of the `if`s around the statement
        self.expecting: list = []  # bodies of `try:` / `with pytest.raises(...)` that expect the RuntimeError

    def visit_Try(self, node: cst.Try) -> None:
        if any(_catches_runtime_error(h) for h in node.handlers):
            self.expecting.append(node.body)

    def leave_Try(self, node: cst.Try) -> None:
        if self.expecting and self.expecting[-1] is node.body:
            self.expecting.pop()

    def visit_With(self, node: cst.With) -> None:
        if any(_expects_error(item.item) for item in node.items):
            self.expecting.append(node.body)

    def leave_With(self, node: cst.With) -> None:
        if self.expecting and self.expecting[-1] is node.body:
            self.expecting.pop()

    def visit_If(self, node: cst.If) -> None:
        self.conditions.setdefault(self.flow.function, []).append(node.test)

    def leave_If(self, node: cst.If) -> None:
        self.conditions[self.flow.function].pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            self._check(node, func.value, "`.backward()`")
            return
        if self.flow._qualname(func) in AUTOGRAD_FUNCTIONS:
            outputs = _outputs(node)
            if outputs is not None:
                self._check(node, outputs, f"`{short(self.code_of(func))}()`")

    def _check(self, node: cst.Call, receiver: cst.BaseExpression, what: str) -> None:
        """Report `what` (`.backward()`, `torch.autograd.grad`) run on `receiver` if it provably has no graph."""
        v = self.flow.value(receiver)
        if v.kind is not Kind.TENSOR or v.grad is not Grad.NO or self._guarded(v):
            return
        if any(node in descendants(body) for body in self.expecting):
            return  # the error is the point: a tutorial's `try: z.backward() except RuntimeError`, a test
        name = short(self.code_of(receiver))
        why = v.why

        def message(line_of):
            origin = evidence_note(why, receiver, line_of, self.code_of)
            return f"`{name}` carries no graph{origin}; {what} on it raises \"{ERROR}\""

        related = [(why.node, "the graph is lost here")] if why is not None else []
        self.report(node, message, related=related)

    def _guarded(self, v) -> bool:
        """Might the code around the call skip it when there is no graph? `if loss.requires_grad:`
        tests for one; and in a function that only a caller's `no_grad` runs without grad, any `if`
        (`if train:`) may be what that caller turns off."""
        tests = self.conditions.get(self.flow.function) or ()
        if any(GRAD_TEST.search(self.code_of(t)) for t in tests):
            return True
        fn = self.flow.function
        by_caller = fn is not None and fn.off_call is not None and v.why is not None and v.why.node is fn.off_call[0]
        return by_caller and bool(tests)

    VALID = [
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def accumulate(phase, G, D, real, z):
    if phase == "G":
        loss = F.softplus(-D(G(z)))
        loss.mean().backward()
    else:
        with torch.no_grad():
            fake = G(z)
        loss = F.softplus(D(fake)) + F.softplus(-D(real))
        loss.mean().backward()


def train(G, D, loader, z_dim):
    opt_G = torch.optim.Adam(G.parameters())
    opt_D = torch.optim.Adam(D.parameters())
    for real in loader:
        for phase, module, opt in (("G", G, opt_G), ("D", D, opt_D)):
            opt.zero_grad()
            module.requires_grad_(True)
            accumulate(phase, G, D, real, torch.randn(real.shape[0], z_dim))
            module.requires_grad_(False)
            opt.step()


G = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 12))
D = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 1))
G.requires_grad_(False)
D.requires_grad_(False)
train(G, D, [torch.randn(4, 12) for _ in range(3)], 6)
""",
            note="StyleGAN2's phases: each network frozen, then unfrozen in turn through the loop variable of a "
                 "literal tuple - any model the literal names may be the one unfrozen",
            runtime="assert all(p.grad is not None for p in G.parameters())",
        ),
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
            Valid(
            """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 3))


@torch.no_grad()
def input_sensitivity(model, batch):
    with torch.enable_grad():
        probe = batch.clone().requires_grad_(True)
        out = model(probe).sum()
        (grad,) = torch.autograd.grad(out, probe)
    return grad.abs().mean().item()


input_sensitivity(net, torch.randn(4, 3))
""",
            note="torch.enable_grad() undoes torch.no_grad() (not torch.inference_mode())",
            runtime="assert input_sensitivity(net, torch.randn(2, 3)) > 0",
        ),
        Valid(
            """
import torch
from torch import nn


class Probe:
    def __init__(self, net):
        self.net = net

    def saliency(self, x):
        x = x.clone().requires_grad_(True)
        score = self.net(x).sum()
        return torch.autograd.grad(score, x)[0]

    def report(self, batches):
        with torch.no_grad():
            sizes = [b.shape[0] for b in batches]
        return sizes, [self.saliency(b) for b in batches]


Probe(nn.Linear(3, 2)).report([torch.randn(4, 3)])
""",
            note="only the bookkeeping runs under no_grad; the method is called with grad on",
            runtime="assert Probe(nn.Linear(3, 2)).report([torch.randn(2, 3)])[1][0].shape == (2, 3)",
        ),
            Valid(
            """
import torch
from torch import nn


class Runner:
    def __init__(self, net, opt):
        self.net, self.opt = net, opt

    def step(self, x, y, train):
        loss = nn.functional.mse_loss(self.net(x), y)
        if train:
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return loss.item()

    def evaluate(self, batches):
        with torch.no_grad():
            return [self.step(x, y, train=False) for x, y in batches]


net = nn.Linear(3, 1)
Runner(net, torch.optim.SGD(net.parameters(), lr=0.1)).evaluate([(torch.randn(4, 3), torch.randn(4, 1))])
""",
            note="the only caller runs the step under no_grad, with the flag that skips its backward",
            runtime="assert net.weight.grad is None",
        ),
        Valid(
            """
import torch
from torch import nn

model, crit = nn.Linear(3, 2), nn.CrossEntropyLoss()
with torch.no_grad():
    loss = crit(model(torch.randn(4, 3)), torch.tensor([0, 1, 1, 0]))
if loss.requires_grad:
    loss.backward()
""",
            note="the backward asks whether there is a graph first",
            runtime="assert model.weight.grad is None",
        ),
            Valid(
            """
import torch
from torch import nn

net = nn.Linear(3, 1)
with torch.inference_mode():
    scores = net(torch.randn(5, 3))
    with torch.inference_mode(False):
        loss = net(torch.randn(2, 3)).pow(2).mean()
        loss.backward()
""",
            note="torch.inference_mode(False) does leave inference mode",
            runtime="assert net.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class PolicyNet(nn.Module):
    def __init__(self, target_entropy=-1.0):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.target_entropy = target_entropy
        self.log_alpha = torch.tensor(0.01)
        self.log_alpha.requires_grad = True
        self.log_alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=1e-3)

    def train_alpha(self, s):
        log_prob = self.fc(s)
        self.log_alpha_optimizer.zero_grad()
        alpha_loss = -(self.log_alpha.exp() * (log_prob + self.target_entropy).detach()).mean()
        alpha_loss.backward()
        self.log_alpha_optimizer.step()
""",
            note="minimalRL's SAC temperature: a fresh tensor made a leaf that requires grad by setting `self.log_alpha.requires_grad = True`",
            runtime="pi = PolicyNet()\npi.train_alpha(torch.randn(4, 3))\nassert pi.log_alpha.grad is not None",
        ),
        Valid(
            """
import torch


class MLP:
    def __init__(self, nin):
        self.w = [0.5] * nin

    def parameters(self):
        return self.w

    def __call__(self, x):
        return sum(wi * xi for wi, xi in zip(self.w, x))


x1 = torch.Tensor([2.0]).double()
x1.requires_grad = True
n = x1 * 3.0
o = torch.tanh(n)
o.backward()

n = MLP(3)
for p in n.parameters():
    print(p)
""",
            note="Karpathy's micrograd lecture: `n` is a tensor here and later the file's own MLP, whose `parameters()` is no nn.Module evidence; `x1.requires_grad = True` on a `torch.Tensor(...)`",
            runtime='assert x1.grad is not None',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
C = torch.randn((27, 2), generator=g)
W1 = torch.randn((6, 27), generator=g)
b1 = torch.randn(27, generator=g)
parameters = [C, W1, b1]
for p in parameters:
    p.requires_grad = True

X, Y = torch.randint(0, 27, (8, 3)), torch.randint(0, 27, (8,))
for _ in range(3):
    logits = C[X].view(-1, 6) @ W1 + b1
    loss = F.cross_entropy(logits, Y)
    for p in parameters:
        p.grad = None
    loss.backward()
    for p in parameters:
        p.data += -0.1 * p.grad
""",
            note="Karpathy's makemore: the tensors are made leaves that require grad through the list that holds them (`for p in parameters: p.requires_grad = True`)",
            runtime='assert C.grad is not None and W1.grad is not None',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def compute_logprobs(logits, labels):
    return torch.gather(F.log_softmax(logits, -1), -1, labels.unsqueeze(-1)).squeeze(-1)


def compute_dpo_loss_batch(batch, policy_model, reference_model, beta):
    policy = compute_logprobs(policy_model(batch["x"]), batch["y"])
    with torch.no_grad():
        ref = compute_logprobs(reference_model(batch["x"]), batch["y"])
    loss = -F.logsigmoid(beta * (policy - ref)).mean()
    return loss, policy.detach().mean()


def evaluate(policy_model, reference_model, loader, beta):
    with torch.no_grad():
        return sum(compute_dpo_loss_batch(b, policy_model, reference_model, beta)[0].item() for b in loader)


def train(policy_model, reference_model, loader, optimizer, beta):
    for batch in loader:
        optimizer.zero_grad()
        loss, reward = compute_dpo_loss_batch(batch, policy_model, reference_model, beta)
        loss.backward()
        optimizer.step()
        evaluate(policy_model, reference_model, loader, beta)


policy_model, reference_model = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
loader = [{"x": torch.randn(2, 4), "y": torch.randint(0, 3, (2,))}]
with torch.no_grad():
    print(compute_dpo_loss_batch(loader[0], policy_model, reference_model, 0.1))
train(policy_model, reference_model, loader, torch.optim.SGD(policy_model.parameters(), lr=0.1), 0.1)
""",
            note="LLMs-from-scratch's DPO: the loss function is first called under no_grad to print a loss and for evaluation, then to train; what its first walk returned is no proof for the training call",
            runtime='assert policy_model.weight.grad is not None',
        ),
        Valid(
            """
import torch

n = 3
x = torch.arange(1., n + 1)
w = torch.ones(n, requires_grad=True)
with torch.no_grad():
    z = w @ x

try:
    z.backward()  # the tutorial's point: this raises
except RuntimeError as e:
    print("RuntimeError:", e)

""",
            note="the NYU deep-learning course's autograd tutorial shows the error on purpose, inside a `try` that catches it",
            runtime="assert w.grad is None",
        ),
        Valid(
            """
import torch
from torch import nn


def unroll(cell, x):
    h = torch.zeros(x.size(1), 8)
    outs = torch.zeros_like(torch.empty(x.size(0), x.size(1), 8))
    for t in range(x.size(0)):
        h = cell(x[t], h)
        outs[t] = h
    return outs


cell = nn.RNNCell(4, 8)
outs = unroll(cell, torch.randn(5, 3, 4))
outs.sum().backward()
""",
            note='a buffer made with `zeros_like` and filled by index assignment from values with a graph joins the graph: backward works',
            runtime='assert cell.weight_ih.grad is not None',
        ),
        Valid(
            """
import torch


def add_scale_loss(losses, criterion, model, x, y):
    losses.append(criterion(model(x), y))


def multi_scale_step(model, batches, optimizer, criterion):
    optimizer.zero_grad()
    losses = []
    for x, y in batches:
        add_scale_loss(losses, criterion, model, x, y)
    total = torch.stack(losses).mean()
    total.backward()
    optimizer.step()


model = torch.nn.Linear(4, 2)
multi_scale_step(model, [(torch.randn(3, 4), torch.randn(3, 2))] * 2, torch.optim.SGD(model.parameters(), lr=0.0),
                 torch.nn.MSELoss())
""",
            note="a list the caller made empty and a helper of the file filled: what it holds after the calls is the helper's losses",
            runtime='assert model.weight.grad is not None',
        ),
        Valid(
            """
import torch


class MultiScale:
    def step(self, model, batches, optimizer, criterion):
        optimizer.zero_grad()
        self.losses = []
        for x, y in batches:
            self.losses.append(criterion(model(x), y))
        total = torch.stack(self.losses).mean()
        total.backward()
        optimizer.step()


model = torch.nn.Linear(4, 2)
MultiScale().step(model, [(torch.randn(3, 4), torch.randn(3, 2))] * 2, torch.optim.SGD(model.parameters(), lr=0.0),
                  torch.nn.MSELoss())
""",
            note='`self.losses` made empty and filled by this method: its reads here see what it was filled with',
            runtime='assert model.weight.grad is not None',
        ),
        Valid(
            """
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.head.parameters(), lr=0.1)

    def step(self, x, y):
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()


model = nn.Sequential()
model.add_module("backbone", nn.Linear(4, 6))
model.add_module("head", nn.Linear(6, 2))
Trainer(model).step(torch.randn(3, 4), torch.tensor([0, 1, 1]))
""",
            note='an empty `nn.Sequential()` filled by `add_module()`: it has the layers it was given, and parameters',
            runtime='assert model.head.weight.grad is not None',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def qq(aa, cc, bb, opt):
    with torch.no_grad():
        out = aa(bb)
    zz = cc(bb)
    err = F.mse_loss(out, zz)
    opt.zero_grad()
    err.backward()
    opt.step()


net, other = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
qq(net, lambda t: other(t), torch.randn(3, 4), torch.optim.SGD(other.parameters(), lr=0.1))
""",
            note="a loss's target a call of the function computed (here a model's output): it may carry the graph",
            runtime='assert other.weight.grad is not None',
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def process(self, batch):
        pred = self.model(batch["x"])
        return pred, {"mse": F.mse_loss(pred, batch["y"])}

    def train_step(self, batch):
        pred, losses = self.process(batch)
        self.optimizer.zero_grad()
        losses["mse"].backward()
        self.optimizer.step()

    def val_step(self, batch):
        with torch.no_grad():
            pred, losses = self.process(batch)
        return losses["mse"].item()


trainer = Trainer(nn.Linear(3, 1))
batch = {"x": torch.randn(4, 3), "y": torch.randn(4, 1)}
trainer.train_step(batch)
trainer.val_step(batch)
""",
            note="the helper's losses, computed under no_grad, are only read as numbers; the training step "
                 "back-propagates the ones it computes with grad on",
            runtime="trainer.optimizer.zero_grad()\ntrainer.train_step(batch)\n"
                    "assert trainer.model.weight.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.log_scale = nn.Parameter(torch.zeros(1))

    def parts(self, x):
        return {"out": self.fc(x), "log_scale": self.log_scale}


model = Scaled()
x = torch.randn(4, 3)
with torch.no_grad():
    parts = model.parts(x)
penalty = parts["log_scale"].exp().sum()
penalty.backward()
""",
            note="a dict returned under no_grad still holds the module's parameter, a leaf that requires grad",
            runtime="assert model.log_scale.grad is not None",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def train_step(model, optimizer, inp, bins_gt):
    logits_x, logits_y = model(inp)
    loss = F.cross_entropy(logits_x, bins_gt[:, 0]) + F.cross_entropy(logits_y, bins_gt[:, 1])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    coor = torch.stack([logits_x.argmax(1), logits_y.argmax(1)], 1)
    return loss.item(), coor.float().mean().item()
""",
            note="CDPN's answer: the loss is taken on the bin logits; the argmax-decoded coordinates are only reported",
            runtime='class Head(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.x, self.y = torch.nn.Linear(4, 8), torch.nn.Linear(4, 8)\n\n    def forward(self, inp):\n        return self.x(inp), self.y(inp)\n\n\nhead = Head()\ntrain_step(head, torch.optim.SGD(head.parameters(), lr=0.0), torch.randn(3, 4), torch.randint(0, 8, (3, 2)))\nassert head.x.weight.grad is not None\n',
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
            Invalid(
            """
import torch
from torch import nn


@torch.inference_mode()
def jacobian(model, x):
    with torch.enable_grad():
        x = x.clone().requires_grad_(True)
        y = model(x)
        rows = [torch.autograd.grad(y, x, v, retain_graph=True)[0] for v in torch.eye(y.shape[-1])]
    return torch.stack(rows)


jacobian(nn.Sequential(nn.Linear(3, 3), nn.Tanh()), torch.randn(3))
""",
            range=(11, 16, 11, 63),
            message='`y` carries no graph (`torch.enable_grad()` does not undo `torch.inference_mode()` on line 6); '
            '`torch.autograd.grad()` on it raises "element 0 of tensors does not require grad and does not have a '
            'grad_fn"',
            raises=ERROR,
            note="torch.enable_grad() inside inference mode still records nothing",
        ),
        Invalid(
            """
import torch
from torch import autograd, nn


class Tester:
    def __init__(self, classifier):
        self.classifier = classifier

    def step(self, images, labels):
        self.classifier.eval()
        images = images.clone().requires_grad_(True)
        logits = self.classifier(images)
        loss = nn.functional.cross_entropy(logits, labels)
        saliency = autograd.grad(loss, images)[0]
        return (logits.argmax(1) == labels).sum().item(), saliency

    def test(self, loader):
        with torch.no_grad():
            return [self.step(x, y) for x, y in loader]


Tester(nn.Linear(4, 3)).test([(torch.randn(2, 4), torch.tensor([0, 2]))])
""",
            range=(15, 19, 15, 46),
            message='`loss` carries no graph (`step` is called inside `torch.no_grad()` on line 20); `autograd.grad()` '
            'on it raises "element 0 of tensors does not require grad and does not have a grad_fn"',
            raises=ERROR,
            note="a method that takes input gradients, only called under its class's no_grad",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F


def qq(aa, bb, zz, opt):
    with torch.no_grad():
        out = aa(bb)
    err = F.mse_loss(out, zz)
    opt.zero_grad()
    err.backward()
    opt.step()


net = torch.nn.Linear(4, 2)
data = torch.utils.data.TensorDataset(torch.randn(6, 4), torch.randn(6, 2))
xb, yb = next(iter(torch.utils.data.DataLoader(data, batch_size=3)))
qq(net, xb, yb, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            range=(11, 4, 11, 18),
            message='`err` carries no graph (computed inside `torch.no_grad()` on line 8); `.backward()` on it raises '
            '"element 0 of tensors does not require grad and does not have a grad_fn"',
            raises=ERROR,
            note="a loss's target the function was given (`zz`, a parameter, a batch nothing tells), not one it "
            "computed: data, whatever it is called - the cut prediction leaves the loss no graph",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def process(self, batch):
        pred = self.model(batch["x"])
        return pred, {"mse": F.mse_loss(pred, batch["y"])}

    def train_step(self, batch):
        pred, losses = self.process(batch)
        self.optimizer.zero_grad()
        losses["mse"].backward()
        self.optimizer.step()

    def adapt_on_val(self, batch):
        with torch.no_grad():
            pred, losses = self.process(batch)
        self.optimizer.zero_grad()
        losses["mse"].backward()
        self.optimizer.step()


trainer = Trainer(nn.Linear(3, 1))
batch = {"x": torch.randn(4, 3), "y": torch.randn(4, 1)}
trainer.train_step(batch)
trainer.adapt_on_val(batch)
""",
            range=(26, 8, 26, 32),
            message='`losses["mse"]` carries no graph (computed inside `torch.no_grad()` on line 24); `.backward()` on '
            'it raises "element 0 of tensors does not require grad and does not have a grad_fn"',
            raises=ERROR,
            note="monodepth2's trainer adapting on a validation batch: the helper the training step also calls "
                 "returns its prediction and a dict of losses; called inside no_grad, what they hold has no graph",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F


def train_step(model, optimizer, inp, coor_gt):
    coor_x, coor_y = model(inp)
    coor = torch.stack([coor_x.argmax(1), coor_y.argmax(1)], 1)
    loss = F.l1_loss(coor.float() / 7.0, coor_gt)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            range=(11, 4, 11, 19),
            message='`loss` carries no graph (`.argmax()` on line 8); `.backward()` on it raises "element 0 of '
            'tensors does not require grad and does not have a grad_fn"',
            runtime='class Head(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.x, self.y = torch.nn.Linear(4, 8), torch.nn.Linear(4, 8)\n\n    def forward(self, inp):\n        return self.x(inp), self.y(inp)\n\n\nhead = Head()\ntry:\n    train_step(head, torch.optim.SGD(head.parameters(), lr=0.1), torch.randn(3, 4), torch.rand(3, 2))\nexcept RuntimeError as e:\n    assert "element 0 of tensors does not require grad" in str(e)\nelse:\n    raise AssertionError("no error")\n',
            note="CDPN's coordinates decoded with `.argmax()` before the loss: indices, whatever the model returns",
        ),
    ]


def _outputs(call: cst.Call):
    """What `torch.autograd.grad(outputs, ...)` / `torch.autograd.backward(tensors, ...)` back-propagates."""
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None or arg.keyword.value in ("outputs", "tensors"):
            return arg.value
    return None
