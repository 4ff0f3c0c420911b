from __future__ import annotations

import libcst as cst

from gradguard.engine.syntax import positional
from gradguard.engine.values import Grad, Kind
from gradguard.findings import Safety, Severity
from gradguard.rules._build import copy_methods, method_chain, short
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid

WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor)."
)


class TensorCopyConstruct(Rule):
    """
    ## What it does
    Finds `torch.tensor(t)` where `t` is already a tensor.

    ## Why is this bad?
    `torch.tensor()` always copies and never keeps the graph, so it is a hidden
    `detach().clone()`: gradients stop there without a word, and PyTorch warns
    on every call: `UserWarning: To copy construct from a tensor, it is
    recommended to use sourceTensor.detach().clone() or
    sourceTensor.detach().clone().requires_grad_(True), rather than
    torch.tensor(sourceTensor).` Writing the copy out says what happens.
    (`torch.as_tensor(t)`, `torch.Tensor(t)` and `torch.tensor([t0, t1])` of
    0-dim tensors do not warn and are left alone.)

    ## Example
    ```python
    target = torch.tensor(pred, dtype=torch.float32, requires_grad=True)
    ```

    ## Use instead
    ```python
    target = pred.clone().detach().to(dtype=torch.float32).requires_grad_(True)
    ```

    ## Fix safety
    Safe: `t.clone().detach()` (or `t.detach().clone()` with
    `copy-order = "detach-clone"`) is the same copy without the warning;
    `dtype=` and `device=` become `.to(dtype=..., device=...)` and
    `requires_grad=True` becomes `.requires_grad_(True)`. A call with other
    keywords (`pin_memory=`) gets no automatic fix.
    """

    code = "GG402"
    name = "tensor-copy-construct"
    severity = Severity.WARNING
    summary = "`torch.tensor(t)` copy-constructs from a tensor (it warns; the copy has no graph)"

    def visit_Call(self, node: cst.Call) -> None:
        if self.flow._qualname(node.func) != "torch.tensor":
            return
        args = positional(node)
        if len(args) != 1 or self.flow.value(args[0].value).kind is not Kind.TENSOR:
            return
        if self.code_of(args[0].value) in self.flow.not_tensors:
            return  # inside `if not torch.is_tensor(self.x):`
        src = args[0].value
        name = short(self.code_of(src))
        copy = method_chain(src, *copy_methods(self.settings))
        v = self.flow.value(src)
        # "without its graph" only where there is one to lose; otherwise it is the warning alone.
        how = "copies it without its graph" if v.grad is Grad.YES else "copies it"
        message = (
            f"`{name}` is already a tensor: `torch.tensor()` {how} and warns "
            f"\"To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()\"; "
            f"use `{short(self.code_of(copy))}`"
        )
        fix = _copy_fix(node, copy)
        fixes = [PendingFix(f"Use `{short(self.code_of(fix))}`", Safety.SAFE, [(node, fix)])] if fix is not None else []
        self.report(node, message, fixes=fixes)

    VALID = [
        Valid(
            """
import torch

t0, t1 = torch.tensor(1.0), torch.tensor(2.0)
pair = torch.tensor([t0, t1])
""",
            note="a list of 0-dim tensors does not warn",
            runtime="assert pair.tolist() == [1.0, 2.0]",
        ),
        Valid(
            """
import numpy as np
import torch

labels = torch.tensor(np.arange(4))
scale = torch.tensor(3.5)
raw = [[1, 2], [3, 4]]
grid = torch.tensor(raw, dtype=torch.float32)
""",
            note="NumPy arrays, numbers and lists",
        ),
        Valid(
            """
import torch

x = torch.randn(3)
y = torch.as_tensor(x)
z = torch.Tensor(x)
w = torch.tensor(x.sum().item())
""",
            note="`as_tensor`, `torch.Tensor` and a Python number do not warn",
        ),
        Valid(
            """
import torch


def wrap(value):
    return torch.tensor(value)
""",
            note="`value` could be a list: unknown, so silent",
        ),
        Valid(
            """
import torch

scores = torch.randn(4, 6)
width = torch.tensor(scores.size(-1))
count = torch.tensor(torch.numel(scores))
h, w = scores.shape
area = torch.tensor(h * w)


def as_tensor(value):
    if not torch.is_tensor(value):
        value = torch.tensor(value)
    return value


as_tensor(scores)
""",
            note="regression (transformers, diffusers, timm): sizes are ints; a torch.is_tensor guard",
            runtime="assert width.item() == 6 and area.item() == 24",
        ),
        Valid(
            """
import torch


class Cache:
    def __init__(self, ratios):
        self.ratios = torch.zeros(3)
        if not torch.is_tensor(self.ratios):
            self.ratios = torch.tensor(self.ratios)
""",
            note="regression (diffusers mag_cache): a guard on an attribute",
        ),
        Valid(
            """
import torch
from torch import nn


class ContentLoss(nn.Module):
    def __init__(self, weights=(1.0,)):
        super().__init__()
        self.weights = [torch.tensor(w) if not isinstance(w, torch.Tensor) else w for w in weights]


class Similarity(ContentLoss):
    def __init__(self):
        super().__init__(weights=list(torch.split(torch.rand(1, 12), [4, 8], dim=1)))


metric = Similarity()
""",
            note="piq's fix for #255: the guard of a conditional expression holds in its branch",
            runtime="assert [w.shape[1] for w in metric.weights] == [4, 8]",
        ),
        Valid(
            """
import torch


def normalize(latents: torch.Tensor, latents_mean: torch.Tensor) -> torch.Tensor:
    mean = torch.tensor(latents_mean).view(1, -1)
    return latents - mean
""",
            note="regression (diffusers motif_video): an annotation is a hint - callers pass a config list",
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn


class PPO(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_v = nn.Linear(4, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

    def v(self, x):
        if isinstance(x, (np.ndarray, np.generic)):
            x = torch.tensor(x)
        return self.fc_v(x)

    def train_net(self, s_lst, r_lst):
        s, r = torch.tensor(s_lst, dtype=torch.float), torch.tensor(r_lst)
        loss = (r - self.v(s)).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
""",
            note="Popular-RL-Algorithms' PPO: every caller in the file passes a tensor, but the conversion sits under `isinstance(x, (np.ndarray, np.generic))`, where x is an array",
            runtime="ppo = PPO()\nppo.train_net([[0.0] * 4] * 3, [[1.0]] * 3)\nassert ppo.v(np.zeros((2, 4), dtype=np.float32)).shape == (2, 1) and ppo.fc_v.weight.grad is not None",
        ),
        Valid(
            """
import torch


def collate(batch):
    out = []
    for column in zip(*batch):
        out.append(torch.stack([torch.tensor(example) for example in column]))
    return out


collate([([4, 8], 1), ([15, 16], 0)])
""",
            note="the collate function's examples are lists of ints and ints: `torch.tensor()` makes the tensors",
            runtime="assert collate([([4, 8], 1)])[0].tolist() == [[4, 8]]",
        ),
        Valid(
            """
import numpy as np
import torch


def best_index(scores):
    return torch.tensor(scores.argmax())


best_index(np.array([0.1, 0.7, 0.2]))
""",
            note="`.argmax()` of a receiver nothing tells may be NumPy's, a number `torch.tensor()` copies silently",
            runtime="assert best_index(np.array([0.3, 0.1])).item() == 0",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

x = torch.randn(3)
y = torch.tensor(x)
""",
            range=(5, 4, 5, 19),
            message="`x` is already a tensor: `torch.tensor()` copies it and warns \"To copy "
            "construct from a tensor, it is recommended to use sourceTensor.detach().clone()\"; use `x.clone().detach()`",
            fixes=("\nimport torch\n\nx = torch.randn(3)\ny = x.clone().detach()\n",),
            warns=WARNING,
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 2)
pred = model(torch.randn(3, 4))
target = torch.tensor(pred, dtype=torch.float64, requires_grad=True)
""",
            range=(7, 9, 7, 68),
            message="`pred` is already a tensor: `torch.tensor()` copies it without its graph and warns \"To copy "
            "construct from a tensor, it is recommended to use sourceTensor.detach().clone()\"; use `pred.clone().detach()`",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\npred = model(torch.randn(3, 4))\n"
                "target = pred.clone().detach().to(dtype=torch.float64).requires_grad_(True)\n",
            ),
            warns=WARNING,
            runtime="assert target.dtype == torch.float64 and target.requires_grad and target.is_leaf",
        ),
        Invalid(
            """
import torch as T

frames = T.zeros(2, 3)
copy = T.tensor(frames[0], device="cpu")
""",
            range=(5, 7, 5, 40),
            message="`frames[0]` is already a tensor: `torch.tensor()` copies it and warns \"To copy "
            "construct from a tensor, it is recommended to use sourceTensor.detach().clone()\"; use "
            "`frames[0].detach().clone()`",
            fixes=("\nimport torch as T\n\nframes = T.zeros(2, 3)\ncopy = frames[0].detach().clone().to(device=\"cpu\")\n",),
            warns=WARNING,
            settings={"copy_order": "detach-clone"},
            note="`import torch as T`, the `detach-clone` copy order, a view as source",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def pseudo_labels(teacher, images):
    with torch.no_grad():
        guesses = teacher(images).argmax(dim=1)
    return torch.tensor(guesses)


teacher = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
student = nn.Linear(4, 3)
for images in [torch.randn(5, 4) for _ in range(2)]:
    targets = pseudo_labels(teacher, images)
    F.cross_entropy(student(images), targets).backward()
""",
            range=(10, 11, 10, 32),
            message='`guesses` is already a tensor: `torch.tensor()` copies it and warns "To copy '
            'construct from a tensor, it is recommended to use sourceTensor.detach().clone()"; use '
            '`guesses.clone().detach()`',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n'
                'def pseudo_labels(teacher, images):\n    with torch.no_grad():\n'
                '        guesses = teacher(images).argmax(dim=1)\n    return guesses.clone().detach()\n\n\n'
                'teacher = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))\nstudent = nn.Linear(4, 3)\n'
                'for images in [torch.randn(5, 4) for _ in range(2)]:\n'
                '    targets = pseudo_labels(teacher, images)\n'
                '    F.cross_entropy(student(images), targets).backward()\n',
            ),
            warns=WARNING,
            note='a helper function called from the loop; an nn.Sequential teacher; `import torch.nn.functional as F`',
        ),
        Invalid(
            """
import torch

clip = torch.randn(6, 4)
frames = [torch.tensor(frame) for frame in clip.split(2)]
""",
            range=(5, 10, 5, 29),
            message='`frame` is already a tensor: `torch.tensor()` copies it and warns "To copy '
            'construct from a tensor, it is recommended to use sourceTensor.detach().clone()"; use '
            '`frame.clone().detach()`',
            fixes=(
                '\nimport torch\n\nclip = torch.randn(6, 4)\n'
                'frames = [frame.clone().detach() for frame in clip.split(2)]\n',
            ),
            warns=WARNING,
            runtime="assert len(frames) == 3 and frames[0].shape == (2, 4)",
            note='a list comprehension over the chunks of a tensor',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Trainer:
    def __init__(self, net):
        self.net = net
        self.best = None

    def validate(self, inputs, targets):
        val = F.mse_loss(self.net(inputs), targets)
        self.best = torch.tensor(val)


trainer = Trainer(nn.Linear(2, 1))
epoch = 0
while epoch < 2:
    trainer.validate(torch.randn(4, 2), torch.randn(4, 1))
    epoch += 1
""",
            range=(14, 20, 14, 37),
            message='`val` is already a tensor: `torch.tensor()` copies it without its graph and warns "To copy '
            'construct from a tensor, it is recommended to use sourceTensor.detach().clone()"; use '
            '`val.clone().detach()`',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Trainer:\n'
                '    def __init__(self, net):\n        self.net = net\n        self.best = None\n\n'
                '    def validate(self, inputs, targets):\n        val = F.mse_loss(self.net(inputs), targets)\n'
                '        self.best = val.clone().detach()\n\n\ntrainer = Trainer(nn.Linear(2, 1))\nepoch = 0\n'
                'while epoch < 2:\n    trainer.validate(torch.randn(4, 2), torch.randn(4, 1))\n    epoch += 1\n',
            ),
            warns=WARNING,
            runtime="assert trainer.best.grad_fn is None",
            note='a trainer method called from a `while` loop; the copy drops the loss graph (GG103 also fires)',
        ),
        Invalid(
            """
import torch


def condition(m):
    u, s, vh = torch.linalg.svd(m)
    return torch.tensor(s[0] / s[-1])
""",
            range=(7, 11, 7, 37),
            message='`s[0] / s[-1]` is already a tensor: `torch.tensor()` copies it and warns "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()"; use `(s[0] / s[-1]).clone().detach()`',
            fixes=(
                '\nimport torch\n\n\ndef condition(m):\n    u, s, vh = torch.linalg.svd(m)\n    return (s[0] / s[-1]).clone().detach()\n',
            ),
            note='`torch.linalg.svd` returns three tensors (torch facts table)',
            runtime='assert condition(torch.randn(3, 3)).dim() == 0',
            warns=WARNING,
        ),
        Invalid(
            """
import torch
from torch import nn


class ContentLoss(nn.Module):
    def __init__(self, weights=(1.0,)):
        super().__init__()
        self.weights = [torch.tensor(w) for w in weights]


class Similarity(ContentLoss):
    def __init__(self):
        weights = list(torch.split(torch.rand(1, 12), [4, 8], dim=1))
        super().__init__(weights=weights)


metric = Similarity()
""",
            range=(9, 24, 9, 39),
            message='`w` is already a tensor: `torch.tensor()` copies it and warns "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()"; use `w.clone().detach()`',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass ContentLoss(nn.Module):\n    def __init__(self, weights=(1.0,)):\n'
                '        super().__init__()\n        self.weights = [w.clone().detach() for w in weights]\n\n\n'
                'class Similarity(ContentLoss):\n    def __init__(self):\n'
                '        weights = list(torch.split(torch.rand(1, 12), [4, 8], dim=1))\n'
                '        super().__init__(weights=weights)\n\n\nmetric = Similarity()\n',
            ),
            note='piq#255 (tests/corpus GG402/b34_piq_...): `super().__init__(...)` runs the base class of the file; '
                 '`list()` of a tuple of tensors holds tensors',
            runtime='assert [w.shape[1] for w in metric.weights] == [4, 8]',
            warns=WARNING,
        ),
        Invalid(
            """
import torch


def collate(batch):
    out = []
    for column in zip(*batch):
        out.append(torch.stack([torch.tensor(example) for example in column]))
    return out


collate([(torch.randn(2), torch.tensor(1)), (torch.randn(2), torch.tensor(0))])
""",
            range=(8, 32, 8, 53),
            message='`example` is already a tensor: `torch.tensor()` copies it and warns "To copy construct from a '
            'tensor, it is recommended to use sourceTensor.detach().clone()"; use `example.clone().detach()`',
            fixes=('\nimport torch\n\n\ndef collate(batch):\n    out = []\n    for column in zip(*batch):\n        out.append(torch.stack([example.clone().detach() for example in column]))\n    return out\n\n\ncollate([(torch.randn(2), torch.tensor(1)), (torch.randn(2), torch.tensor(0))])\n',),
            warns=WARNING,
            note="flambe's collate: `zip(*batch)` turns rows of tensors into columns of tensors",
        ),
    ]


def _copy_fix(call: cst.Call, copy: cst.BaseExpression) -> cst.BaseExpression | None:
    """`copy` plus `.to(dtype=, device=)` and `.requires_grad_(True)` for the call's keywords."""
    to_args = []
    requires_grad = None
    for arg in call.args[1:]:
        kw = arg.keyword.value if arg.keyword is not None else None
        if kw in ("dtype", "device"):
            to_args.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        elif kw == "requires_grad":
            requires_grad = arg.value
        else:
            return None
    out = copy
    if to_args:
        out = cst.Call(func=cst.Attribute(value=out, attr=cst.Name("to")), args=_commas(to_args))
    if requires_grad is not None and not (isinstance(requires_grad, cst.Name) and requires_grad.value == "False"):
        # .to() first: requires_grad_ must be the last step or the result is not a leaf.
        out = cst.Call(func=cst.Attribute(value=out, attr=cst.Name("requires_grad_")), args=[cst.Arg(requires_grad)])
    return out


def _commas(args: list) -> list:
    return [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in args[:-1]] + args[-1:]
