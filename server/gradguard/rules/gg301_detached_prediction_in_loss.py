from __future__ import annotations

import libcst as cst

from gradguard.engine.values import Kind, all_origins
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


VIEWS = frozenset("view reshape flatten squeeze unsqueeze permute transpose contiguous float".split())


def _fresh_submodule(flow, cls, attr: str) -> bool:
    """Is `self.<attr>` made in `__init__` by a torch.nn layer constructor (randomly initialised,
    meant to learn) - not a pretrained backbone, whose `.detach()` is the usual way to freeze it?"""
    init = cls.methods.get("__init__")
    if init is None:
        return False
    for stmt in init.node.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and any(
                _self_attribute(t.target) == attr for t in small.targets
            ):
                q = flow._qualname(small.value.func) or ""
                return q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper()
    return False


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
    (`loss + aux_loss.detach().item()` is a constant to `backward()`), and a
    `.detach()` inside `forward()` that cuts a freshly built submodule from
    every output of the module (it never learns; a pretrained backbone frozen
    this way is left alone).

    Detached **targets** are left alone: `F.mse_loss(q, target.detach())` (TD
    targets), `F.kl_div(student, teacher_out.detach())` (distillation), a GAN
    discriminator step on `fake.detach()`, `q - target.detach()`, and
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
        self._forward_cuts: list = []  # (detach call, submodule attrs, the cut's origins, forward FunctionInfo, stamp)
        self._sub_calls: dict = {}  # (class, attr) -> call nodes of self.<attr>(...) in its methods

    def visit_Call(self, node: cst.Call) -> None:
        fn = self.flow.function
        if fn is None or fn.cls is None or not fn.cls.module_like:
            return
        func = node.func
        attr = _self_attribute(func)
        if attr is not None:  # every call of a submodule, in any method: one elsewhere may train it
            self._sub_calls.setdefault((fn.cls, attr), []).append(node)
        if fn.name != "forward":
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "detach" and not node.args:
            self._forward_cut(node, func.value, fn)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        fn = self.flow.function  # `torch.stack(logits, 1).data` in forward(): the same cut as .detach()
        if node.attr.value == "data" and fn is not None and fn.name == "forward" and fn.cls is not None and fn.cls.module_like:
            self._forward_cut(node, node.value, fn)

    def _forward_cut(self, node, value: cst.BaseExpression, fn) -> None:
        inner = self.flow.value(value)
        if inner.has_graph:
            # the submodules whose outputs the detached value is made of (through helpers of the
            # class too: `adj = self.gen_adj(x).detach()`, gen_adj calling self.w_phi and self.w_theta)
            cut = all_origins(inner)
            subs = sorted({a for o in cut if isinstance(o, cst.Call) and (a := _self_attribute(o.func)) is not None})
            subs = [a for a in subs if _fresh_submodule(self.flow, fn.cls, a)]
            if subs:
                self._forward_cuts.append((node, subs, cut, fn, self.stamp()))

    def finish(self) -> None:
        self._cut_submodules()
        seen = set()
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

    def _cut_submodules(self) -> None:
        """`.detach()` in forward() on a submodule's output that reaches no output of the
        module: that submodule never learns - and, freshly initialised, computes noise forever."""
        for node, subs, cut, fn, stamp in self._forward_cuts:
            if not self.current(stamp):
                continue
            if not _known(fn.returns):
                continue  # `return ModelOutput(...)`, an unknown call: what reaches the outputs is unknown
            out = all_origins(fn.returns)
            # cut: every call of the submodule feeds only the detached value, and none reaches an output
            subs = [a for a in subs if all(c in cut and c not in out for c in self._sub_calls.get((fn.cls, a), ()))]
            if not subs:
                continue  # another use of the submodule trains it
            names = ", ".join(f"`self.{a}`" for a in subs)
            how = "`.data`" if isinstance(node, cst.Attribute) else "`.detach()`"

            def message(line_of, names=names, one=len(subs) == 1, how=how):
                return (
                    f"{how} cuts {names} from every output of `forward()`: no backward reaches "
                    f"{'its' if one else 'their'} parameters, which keep `.grad` at `None` and never learn"
                )

            inner = node.value if isinstance(node, cst.Attribute) else node.func.value
            fixes = [PendingFix(f"Remove {how}: `{short(self.code_of(inner))}`", Safety.UNSAFE, [(node, inner)])]
            self.report(node, message, fixes=fixes)

    def _report(self, cut, loss, backward) -> None:
        node = cut.node

        what = "a term of the loss" if isinstance(loss, cst.BinaryOperation) else "the prediction of the loss"

        def message(line_of):
            return (
                f"{cut.text} cuts {what} on line {line_of(loss)} from its model: the `.backward()` "
                f"on line {line_of(backward)} sends no gradient through it"
            )

        fixes = []
        # `x.detach().item()`: removing the detach alone leaves the cut (and the finding) in place.
        cut_again = any(f"{self.code_of(node)}.{then}" in self.code_of(loss) for then in ("item(", "numpy(", "tolist(", "data"))
        if cut_again:
            pass
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "detach":
            base = node.func.value
            fixes.append(PendingFix(f"Remove `.detach()`: `{short(self.code_of(base))}`", Safety.UNSAFE, [(node, base)]))
        elif isinstance(node, cst.Attribute) and node.attr.value == "data":
            fixes.append(PendingFix(f"Remove `.data`: `{short(self.code_of(node.value))}`", Safety.UNSAFE,
                                    [(node, node.value)]))
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
    ]
