from __future__ import annotations

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.flow import GradMode
from gradguard.engine.values import Grad, Kind
from gradguard.findings import Safety, Severity
from gradguard.rules._build import has_multiline_string, import_torch, method_chain, short, torch_name, wrap_in_no_grad
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid


META = frozenset(K.NEVER_GRAD_ATTRIBUTES | K.NUMBER_METHODS) - {"data", "grad", "item"}


class DataAttribute(Rule):
    """
    ## What it does
    Finds `x.data` on a tensor that requires grad (a parameter, a model output):
    reads (`info`) and in-place writes through it (`x.data.mul_(...)`,
    `x.data += ...`, `x.data[i] = ...`): a **warning** where the same function
    back-propagates, so a saved tensor can really be corrupted; `info` in
    weight-init or loading code, where it is the legacy idiom. `.data` of a
    buffer or of `.grad`, and metadata reads (`p.data.shape`), are left alone.

    ## Why is this bad?
    `x.data` is like `x.detach()` - the same storage, no graph - but writes
    through it do not bump the tensor's version counter. Autograd cannot detect
    them: if `x` was saved for backward, `backward()` runs without complaint and
    the gradients are silently wrong (with `detach()` the same write raises "one
    of the variables needed for gradient computation has been modified by an
    inplace operation"). Reads are harmless on their own, but they hand out an
    alias that writes can later go through.

    ## Example
    ```python
    snapshot = weight.data
    weight.data.mul_(0.5)
    ```

    ## Use instead
    ```python
    snapshot = weight.detach()
    with torch.no_grad():
        weight.mul_(0.5)
    ```

    ## Fix safety
    Reads: `x.data` -> `x.detach()` is safe (same values, same storage, no
    graph). Writes: dropping `.data` and wrapping the statement in
    `with torch.no_grad():` is unsafe: the write is now seen by autograd, so code
    that silently computed wrong gradients starts raising instead.
    """

    code = "GG202"
    name = "data-attribute"
    severity = Severity.INFO
    summary = "`.data` bypasses autograd's version counter (in-place writes: silently wrong gradients)"

    def __init__(self, *args):
        super().__init__(*args)
        self._reads: list = []  # [(attribute node, statement)]
        self._writes: set = set()
        self._meta: set = set()  # `.data` nodes only read for metadata

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "data":
            v = self.flow.value(node.value)
            # Only tensors that require grad: `.data` of a buffer or of `.grad` bypasses nothing.
            if v.kind is Kind.TENSOR and v.grad is Grad.YES:
                self._reads.append((node, self.flow.statement, self.flow.frame.mode, self.stamp()))
        elif _is_data(node.value) and node.attr.value in META:
            self._meta.add(node.value)  # p.data.shape: metadata, no alias handed out

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and K.is_inplace_method(func.attr.value) and _is_data(func.value):
            self._writes.add(func.value)


    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if _is_data(node.target):
            self._writes.add(node.target)

    def leave_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Subscript) and _is_data(t.target.value):
                self._writes.add(t.target.value)

    def finish(self) -> None:
        for node, stmt, mode, stamp in self._reads:
            if not self.current(stamp):
                continue
            base = short(self.code_of(node.value))
            if node in self._writes:
                self._write(node, stmt, mode, base, stamp)
            elif node in self._meta:
                continue
            else:
                new = method_chain(node.value, "detach")
                self.report(
                    node,
                    f"`{base}.data` hands out `{base}`'s storage behind autograd's back: writes through it are never "
                    f"detected; use `{base}.detach()`",
                    fixes=[PendingFix(f"Use `{short(self.code_of(new))}`", Safety.SAFE, [(node, new)])],
                )

    def _write(self, node: cst.Attribute, stmt, mode, base: str, stamp) -> None:
        fixes = []
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if small is not None and not has_multiline_string(self.code_of(stmt)):
            code = self.flow.module.code_for_node(small.deep_replace(node, node.value))
            if mode is GradMode.OFF:  # already under no_grad: just drop .data
                fixes.append(PendingFix("Write through the tensor itself (drop `.data`)", Safety.UNSAFE, [(small, code)]))
            else:
                torch = torch_name(self.flow) or "torch"
                wrap = wrap_in_no_grad(torch)
                fixes.append(PendingFix(
                    "Drop `.data`, wrap in `with torch.no_grad():`", Safety.UNSAFE,
                    [(stmt, lambda spot, code=code: wrap(type(spot)(spot.indent, code)))] + import_torch(self.flow),
                ))
        self.report(
            node,
            f"in-place write through `{base}.data` is invisible to autograd: if `{base}` was saved for backward, "
            "its gradients become silently wrong",
            fixes=fixes,
            # Dangerous where a graph is back-propagated around the write; in weight init or
            # checkpoint loading it is the legacy idiom (info).
            severity=Severity.WARNING if any(b.function is stamp[0] for b in self.flow.backwards) else Severity.INFO,
        )

    VALID = [
        Valid(
            """
import torch

w = torch.ones(3, requires_grad=True)
snapshot = w.detach()
with torch.no_grad():
    w.mul_(0.5)
""",
            note="detach() and no_grad: the intended forms",
            runtime="assert w.tolist() == [0.5, 0.5, 0.5]",
        ),
        Valid(
            """
import torch


class Batch:
    def __init__(self, data):
        self.data = data


batch = Batch([1, 2, 3])
values = batch.data
""",
            note="`.data` of something that is not a tensor",
        ),
        Valid(
            """
import torch


def unwrap(x):
    return x.data
""",
            note="unknown receiver: silent",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(3, 3)
model(torch.ones(1, 3)).sum().backward()
for p in model.parameters():
    step = p.grad.data * 0.1
    count = p.data.numel()
    shape = p.data.shape
""",
            note="regression (axolotl, unsloth): `.grad.data` and metadata reads through `.data`",
        ),
        Valid(
            """
import torch
from torch import nn


class WeightClipper:
    def __init__(self, critic):
        self.critic = critic

    @torch.no_grad()
    def clip(self):
        for param in self.critic.parameters():
            param.clamp_(-0.01, 0.01)


critic = nn.Linear(3, 1)
WeightClipper(critic).clip()
""",
            note="WGAN weight clipping done right: in-place on the parameter under no_grad",
            runtime="assert critic.weight.abs().max().item() <= 0.01",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

w = torch.ones(3, requires_grad=True)
snapshot = w.data
""",
            range=(5, 11, 5, 17),
            message="`w.data` hands out `w`'s storage behind autograd's back: writes through it are never detected; "
            "use `w.detach()`",
            fixes=("\nimport torch\n\nw = torch.ones(3, requires_grad=True)\nsnapshot = w.detach()\n",),
            runtime="assert not snapshot.requires_grad and snapshot.data_ptr() == w.data_ptr()",
        ),
        Invalid(
            """
import torch

w = torch.ones(3, requires_grad=True)
y = (w * w).sum()
w.data.mul_(2)  # rescale
y.backward()
""",
            range=(6, 0, 6, 6),
            message="in-place write through `w.data` is invisible to autograd: if `w` was saved for backward, its "
            "gradients become silently wrong",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch\n\nw = torch.ones(3, requires_grad=True)\ny = (w * w).sum()\n"
                "with torch.no_grad():\n    w.mul_(2)  # rescale\ny.backward()\n",
            ),
            # d(w*w)/dw at w=1 is 2; the write through .data went unseen, so 2 * 2 = 4 comes out.
            runtime="assert w.grad.tolist() == [4.0, 4.0, 4.0]",
            note="the gradient is computed at the new value without an error",
        ),
        Invalid(
            """
import torch
from torch import nn

layer = nn.Linear(2, 2)
out = layer(torch.ones(1, 2)).sum()
with torch.no_grad():
    layer.weight.data[0] = 0.0
out.backward()
""",
            range=(8, 4, 8, 21),
            message="in-place write through `layer.weight.data` is invisible to autograd: if `layer.weight` was saved "
            "for backward, its gradients become silently wrong",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nlayer = nn.Linear(2, 2)\nout = layer(torch.ones(1, 2)).sum()\n"
                "with torch.no_grad():\n    layer.weight[0] = 0.0\nout.backward()\n",
            ),
            runtime="assert layer.weight.grad is not None",
            note="an indexed write under no_grad: backward still runs, on a weight it never saw change",
        ),
        Invalid(
            """
import torch
from torch import nn

net = nn.Linear(3, 3)
for step in range(2):
    current = net.weight.data.clone()
""",
            range=(7, 14, 7, 29),
            message="`net.weight.data` hands out `net.weight`'s storage behind autograd's back: writes through it are "
            "never detected; use `net.weight.detach()`",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nnet = nn.Linear(3, 3)\nfor step in range(2):\n"
                "    current = net.weight.detach().clone()\n",
            ),
            runtime="assert not current.requires_grad",
        ),
        Invalid(
            """
import torch
from torch import nn

backbone = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
frozen = [p.data for p in backbone.parameters()]
""",
            range=(6, 10, 6, 16),
            message="`p.data` hands out `p`'s storage behind autograd's back: writes through it are never detected; "
            "use `p.detach()`",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n"
                "backbone = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))\n"
                "frozen = [p.detach() for p in backbone.parameters()]\n",
            ),
            runtime="assert not frozen[0].requires_grad and frozen[0].data_ptr() == backbone[0].weight.data_ptr()",
            note="a list comprehension over an `nn.Sequential`'s parameters",
        ),
        Invalid(
            """
import torch
from torch import nn


def shrink_head(mlp, factor):
    mlp[2].weight.data.mul_(factor)


mlp = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))
out = mlp(torch.ones(1, 2)).sum()
shrink_head(mlp, 0.5)
out.backward()
""",
            range=(7, 4, 7, 22),
            message="in-place write through `mlp[2].weight.data` is invisible to autograd: if `mlp[2].weight` was "
            "saved for backward, its gradients become silently wrong",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\ndef shrink_head(mlp, factor):\n"
                "    with torch.no_grad():\n        mlp[2].weight.mul_(factor)\n\n\n"
                "mlp = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))\n"
                "out = mlp(torch.ones(1, 2)).sum()\nshrink_head(mlp, 0.5)\nout.backward()\n",
            ),
            # the first layer's gradient is computed with the halved head weight, not the one the forward used
            runtime="h = torch.tanh(mlp[0](torch.ones(1, 2)))\n"
            "assert torch.allclose(mlp[0].weight.grad, (mlp[2].weight.t() * (1 - h * h).t()) @ torch.ones(1, 2))",
            note="a helper function indexing an `nn.Sequential`: backward uses a head weight the forward never saw",
        ),
        Invalid(
            """
import torch
from torch import nn


class WeightClipper:
    def __init__(self, critic):
        self.critic = critic

    def clip(self):
        for param in self.critic.parameters():
            param.data.clamp_(-0.01, 0.01)


critic = nn.Linear(3, 1)
WeightClipper(critic).clip()
""",
            range=(12, 12, 12, 22),
            message="in-place write through `param.data` is invisible to autograd: if `param` was saved for "
            "backward, its gradients become silently wrong",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\nclass WeightClipper:\n    def __init__(self, critic):\n"
                "        self.critic = critic\n\n    def clip(self):\n"
                "        for param in self.critic.parameters():\n            with torch.no_grad():\n"
                "                param.clamp_(-0.01, 0.01)\n\n\ncritic = nn.Linear(3, 1)\n"
                "WeightClipper(critic).clip()\n",
            ),
            # clamped, yet the parameter's version counter (what autograd checks) never moved
            runtime="assert critic.weight.abs().max().item() <= 0.01\n"
            "assert critic.weight._version == nn.Linear(3, 1).weight._version",
            note="WGAN weight clipping in a method of a helper class",
        ),
    ]


def _is_data(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "data"
