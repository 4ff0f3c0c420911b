from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.evidence import named_params
from gradguard.engine.handing import uncalled_mentions
from gradguard.engine.model import GradMode
from gradguard.engine.values import Grad, Kind
from gradguard.engine.walk import descendants
from gradguard.findings import Safety, Severity
from gradguard.rules._build import (
    evidence_note,
    has_multiline_string,
    import_torch,
    short,
    torch_name,
    wrap_in_no_grad,
)
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid

LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW = "a view of a leaf Variable that requires grad is being used in an in-place operation."


class InplaceOnLeafRequiringGrad(Rule):
    """
    ## What it does
    Finds an in-place operation - `w -= lr * w.grad`, `w.add_(...)`, `w[0] = 0`,
    `w.copy_(...)` - on a leaf tensor that requires grad (created with
    `requires_grad=True`, an `nn.Parameter`, a model's parameter) outside
    `torch.no_grad()`.

    ## Why is this bad?
    Autograd refuses it at run time: `RuntimeError: a leaf Variable that requires
    grad is being used in an in-place operation.` (for indexed assignment: `a view
    of a leaf Variable that requires grad is being used in an in-place
    operation.`). The classic case is a hand-written SGD step.

    ## Example
    ```python
    for p in model.parameters():
        p -= lr * p.grad
    ```

    ## Use instead
    ```python
    for p in model.parameters():
        with torch.no_grad():
            p -= lr * p.grad
    ```

    ## Fix safety
    Safe: wrapping the statement in `with torch.no_grad():` is what PyTorch asks
    for - the update is applied to the tensor's data and kept out of the graph
    (`import torch` is added when the file lacks it).
    """

    code = "GG203"
    name = "inplace-on-leaf-requiring-grad"
    severity = Severity.ERROR
    summary = "An in-place op on a leaf tensor that requires grad, outside `no_grad`: it raises"

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        op = node.operator
        self._check(node, node.target, f"the in-place `{self.code_of(op).strip()}`", LEAF)

    def __init__(self, *args):
        super().__init__(*args)
        self._frozen: set = set()  # (function, code) of tensors set to requires_grad = False here
        self._handed: Optional[tuple] = None  # handing.uncalled_mentions of the file

    def leave_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            tgt = t.target
            if isinstance(tgt, cst.Subscript):
                # `w[:] = x`, `w[...] = x` write the whole tensor: PyTorch names the leaf, not a view
                self._check(node, tgt.value, "indexed assignment", LEAF if _whole(tgt) else VIEW)
            elif isinstance(tgt, cst.Attribute) and tgt.attr.value == "requires_grad":
                self._frozen.add((self.flow.function, self.code_of(tgt.value)))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
            self._frozen.add((self.flow.function, self.code_of(func.value)))
        elif isinstance(func, cst.Attribute) and K.is_inplace_method(func.attr.value):
            self._check(node, func.value, f"`.{func.attr.value}()`", LEAF)

    def _check(self, node, tensor: cst.BaseExpression, op: str, error: str) -> None:
        if self.flow.frame.mode is not GradMode.ON:
            return
        tensor = self.flow.handed_on(tensor)  # the tensor itself, however it came: `as_pair(p)[0].add_(...)`
        fn = self.flow.function
        # A function that back-propagates itself cannot be running under its caller's no_grad.
        # A model's constructor is not run under no_grad (and if it wrote its parameters in place
        # outside no_grad, constructing it would raise wherever it is built).
        constructor = fn is not None and fn.name == "__init__" and fn.cls is not None and fn.cls.module_like
        if fn is not None and fn.call_sites == 0 and fn.decorated_mode is None and not constructor and not any(
            b.function is fn for b in self.flow.backwards
        ) and not self._edits_given_weights(fn, tensor):
            return  # called from elsewhere: whether under no_grad is the caller's business
        v = self.flow.value(tensor)
        own_grad = False
        if not (v.kind is Kind.TENSOR and v.grad is Grad.YES and v.leaf):
            own_grad = self._steps_on_own_grad(node, tensor)
            if not own_grad:
                return
        if isinstance(tensor, cst.Subscript) and self.flow.value(tensor.value).kind is Kind.CONTAINER:
            return  # `groups[name][k] = p`: an item of a dict of parameters may be another dict
        if (self.flow.function, self.code_of(tensor)) in self._frozen:
            return  # `layer.weight.requires_grad = False` just before
        name = short(self.code_of(tensor))
        why = v.why
        view = error == LEAF and (v.alias is not None or isinstance(tensor, cst.Subscript))
        if view:  # `b[:, 4] += 1` on `b = mi.bias.view(...)`: PyTorch names the view
            error = VIEW
        what = "a view of a leaf tensor" if view else "a leaf tensor"

        def message(line_of):
            origin = evidence_note(why, tensor, line_of, self.code_of) if not own_grad else (
                f" (the update reads `{name}.grad`, which only a leaf that requires grad has)")
            return f"`{name}` is {what} that requires grad{origin}; {op} on it raises \"{error}\""

        fixes = []
        stmt = self.flow.statement
        whole = isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and (
            stmt.body[0] is node or isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is node
        )
        if whole and not has_multiline_string(self.code_of(stmt)):
            torch = torch_name(self.flow) or "torch"
            fixes.append(PendingFix("Wrap in `with torch.no_grad():`", Safety.SAFE,
                                    [(stmt, wrap_in_no_grad(torch))] + import_torch(self.flow)))
        related = [(why.node, "requires grad from here")] if why is not None and not own_grad else []
        self.report(node, message, fixes=fixes, related=related)

    def _edits_given_weights(self, fn, tensor: cst.BaseExpression) -> bool:
        """`model.layers[i].dense.weight[:, pos] -= d`, `self.layers[i].weight[...] = w`: the weights of
        a model the function is given (or of `self`), edited by a function no code of the file calls.
        Editing a trained model is the function's own job, so it would say `no_grad` itself; a
        converter that builds a new module and copies weights into it (accelerate) is often run
        under its caller's `no_grad` or `init_empty_weights`, and stays silent; so does a function
        run for each module by whoever walks them - one that tests what its parameter is
        (`if isinstance(module, nn.Linear):`, transformers' `_init_weights(self, module)`, which
        `_initialize_weights` runs under `no_grad`) or one the file hands on uncalled
        (`model.apply(init_fn)`) - and torch's own `reset_parameters()` of a module (FSDP and
        meta-device initialisation run it under `no_grad`). What the function is called decides
        nothing else (rules.md: names are never the only reason)."""
        if fn.name == "reset_parameters" and fn.cls is not None and fn.cls.module_like:
            return False
        if _visits_modules(fn.node) or self._handed_on(fn):
            return False
        params = named_params(fn.node)
        expr, hops = tensor, 0
        for _ in range(8):
            while isinstance(expr, (cst.Subscript, cst.Attribute, cst.Call)):
                if isinstance(expr, cst.Attribute):
                    hops += 1
                expr = expr.func if isinstance(expr, cst.Call) else expr.value
            if not isinstance(expr, cst.Name):
                return False
            b = self.flow.lookup(expr.value)
            if b is None:
                return False
            if b.node is params.get(expr.value):
                return hops > 0
            if not isinstance(b.node, (cst.Attribute, cst.Subscript)):
                return False  # a module built here, a loop variable, a call's result
            expr = b.node
        return False

    def _handed_on(self, fn) -> bool:
        """Does the file's code hand the function on uncalled (`model.apply(init_fn)`, `hooks = [init_fn]`,
        `self.apply(self._init_weights)`)? By the tree's mentions of it (handing.uncalled_mentions),
        not a search of the text."""
        if self._handed is None:
            self._handed = self.flow.of_tree("uncalled_mentions", lambda: uncalled_mentions(self.flow.module))
        names, attrs = self._handed
        return fn.name in (attrs if fn.cls is not None else names)

    def _steps_on_own_grad(self, node, tensor: cst.BaseExpression) -> bool:
        """`s -= lr * s.grad` on a tensor the analysis cannot see, after a backward in this
        function (or in the caller it was walked for, before the call: a helper that takes the step): a
        tensor with a `.grad` to step on is a leaf that requires grad (a non-leaf's `.grad` is None, and
        `lr * None` raises), unless the code asked for one with `retain_grad()` or set it by hand."""
        if not isinstance(tensor, cst.Name):
            return False
        grad = f"{tensor.value}.grad"
        if isinstance(node, cst.AugAssign):
            update = node.value
        elif isinstance(node, cst.Call) and node.func.attr.value in ("sub_", "add_"):
            update = node
        else:
            return False
        if not any(isinstance(a, cst.Attribute) and self.code_of(a) == grad for a in _operands(update, self.flow.handed_on)):
            return False
        holders = self._holders(self.flow.function, tensor.value)
        if not any(b.function is fn for b in self.flow.backwards for fn, _ in holders):
            return False
        for fn, name in holders:
            body = self.code_of(fn.node if fn is not None else self.flow.module)
            if f"{name}.retain_grad(" in body or re.search(rf"\b{re.escape(name)}\.grad\s*=[^=]", body):
                return False
        return True

    @staticmethod
    def _holders(fn, name: str) -> list:
        """(function, name) of the tensor `name` of `fn`, and, while it is a parameter of a function
        walked at a call that passes a name for it, the caller's (function, name)."""
        found = [(fn, name)]
        while fn is not None and name in named_params(fn.node):
            arg, caller = fn.passed(name) or (None, None)
            if not isinstance(arg, cst.Name):
                break
            fn, name = caller, arg.value
            found.append((fn, name))
        return found

    VALID = [
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(3, 1)
model(torch.randn(4, 3)).sum().backward()
lr = 0.1
with torch.no_grad():
    for p in model.parameters():
        p -= lr * p.grad
""",
            note="the manual SGD step under no_grad",
            runtime="assert model.weight.is_leaf and model.weight.requires_grad",
        ),
        Valid(
            """
import torch

w = torch.ones(3, requires_grad=True)
y = w * 2
y += 1
y[0] = 0.0
""",
            note="`y` is not a leaf: in-place ops on it are recorded",
            runtime="assert y.grad_fn is not None",
        ),
        Valid(
            """
import torch
from torch import nn

layer = nn.Linear(2, 2)
layer.weight.data.mul_(0.5)
layer.weight.grad = None
buffer = torch.zeros(2)
buffer.add_(1)
""",
            note="`.data` (GG202's business) and tensors that do not require grad",
        ),
        Valid(
            """
import torch


@torch.no_grad()
def ema_update(target, source, decay=0.99):
    for t, s in zip(target.parameters(), source.parameters()):
        t.mul_(decay).add_(s, alpha=1 - decay)
""",
            note="a no_grad decorator",
        ),
        Valid(
            """
import torch
from torch import nn

layer = nn.Linear(3, 3)
layer.weight.detach_()
new_layer = nn.Linear(3, 3)
new_layer.weight.requires_grad = False
new_layer.weight.copy_(layer.weight)
new_layer.weight.requires_grad = True
""",
            note="regression (timm, transformers): `detach_()` writes nothing; `requires_grad = False` just before the copy",
            runtime="assert torch.equal(new_layer.weight, layer.weight)",
        ),
        Valid(
            """
import torch
from torch import nn


def convert(module):
    new_module = nn.Linear(module.in_features, module.out_features)
    new_module.weight.copy_(module.weight)
    return new_module
""",
            note="regression (accelerate): a helper called from elsewhere - the caller's no_grad is not visible here",
        ),
        Valid(
            """
import torch

def refine_activation(layer, inputs, lr=0.1):
    hidden = layer(inputs)
    hidden.retain_grad()
    hidden.pow(2).sum().backward()
    hidden -= lr * hidden.grad
    return hidden
""",
            runtime='out = refine_activation(torch.nn.Linear(3, 3), torch.randn(2, 3))\nassert not out.is_leaf',
            note='a non-leaf with retain_grad(): stepping on its retained .grad in place is allowed',
        ),
        Valid(
            """
import math

import torch
from torch import nn


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.out_proj = nn.Linear(4, 4)


class PreTrained(nn.Module):
    def _init_weights(self, module):
        if isinstance(module, Mixer):
            p = module.out_proj.weight
            p /= math.sqrt(2)
""",
            runtime='with torch.no_grad():\n    PreTrained()._init_weights(Mixer())',
            note="regression (transformers' mamba): an initialisation hook of a given module, which the framework runs under no_grad",
        ),
        Valid(
            """
import torch
from torch import nn


class DDPGAgent:
    def __init__(self, mix=0.01):
        self.network, self.target_network = nn.Linear(3, 2), nn.Linear(3, 2)
        self.mix = mix

    def soft_update(self, target, src):
        for target_param, param in zip(target.parameters(), src.parameters()):
            target_param.detach_()
            target_param.copy_(target_param * (1.0 - self.mix) + param * self.mix)

    def step(self):
        self.soft_update(self.target_network, self.network)
""",
            runtime="agent = DDPGAgent()\nbefore = agent.target_network.weight.detach().clone()\nagent.step()  # no error: the copy is allowed\nassert not torch.equal(agent.target_network.weight.detach(), before)",
            note="DeepRL's DDPG target update: `detach_()` makes each target parameter a leaf that no longer requires grad, so the in-place copy is allowed",
        ),
        Valid(
            """
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


model = nn.Linear(3, 1)
model(torch.randn(4, 3)).sum().backward()
with torch.no_grad():
    for p in model.parameters():
        tagged(p, "sgd")[0].sub_(0.1 * p.grad)
""",
            note="the same step through a helper's tuple under `no_grad`",
            runtime="assert model.weight.is_leaf and model.weight.requires_grad",
        ),
        Valid(
            """
import torch


def sgd_step(scale, lr):
    with torch.no_grad():
        scale -= lr * scale.grad
    return scale


def refine(scale, inputs, targets, lr=0.1, steps=3):
    for _ in range(steps):
        loss = ((inputs * scale - targets) ** 2).mean()
        loss.backward()
        scale = sgd_step(scale, lr)
        scale.grad.zero_()
    return scale
""",
            note="the same helper taking its step under no_grad",
            runtime="s = refine(torch.ones(3, requires_grad=True), torch.randn(4, 3), torch.randn(4, 3))\nassert s.is_leaf and s.requires_grad",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(3, 1)
model(torch.randn(4, 3)).sum().backward()
lr = 0.1
for p in model.parameters():
    p -= lr * p.grad  # SGD step
""",
            range=(9, 4, 9, 20),
            message=f"`p` is a leaf tensor that requires grad (a parameter on line 8); the in-place `-=` on it raises \"{LEAF}\"",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 1)\nmodel(torch.randn(4, 3)).sum().backward()\n"
                "lr = 0.1\nfor p in model.parameters():\n    with torch.no_grad():\n        p -= lr * p.grad  # SGD step\n",
            ),
            raises=LEAF,
        ),
        Invalid(
            """
import torch as T

w = T.randn(3, requires_grad=True)
w.add_(1.0)
""",
            range=(5, 0, 5, 11),
            message=f"`w` is a leaf tensor that requires grad (`requires_grad=True` on line 4); `.add_()` on it raises \"{LEAF}\"",
            fixes=("\nimport torch as T\n\nw = T.randn(3, requires_grad=True)\nwith T.no_grad():\n    w.add_(1.0)\n",),
            raises=LEAF,
            note="`import torch as T`",
        ),
        Invalid(
            """
from torch import nn, ones


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(ones(4))

    def reset(self):
        self.scale[0] = 1.0


Gate().reset()
""",
            range=(11, 8, 11, 27),
            message=f"`self.scale` is a leaf tensor that requires grad (`nn.Parameter` on line 8); indexed assignment on it "
            f"raises \"{VIEW}\"",
            fixes=(
                "\nimport torch\nfrom torch import nn, ones\n\n\nclass Gate(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.scale = nn.Parameter(ones(4))\n\n    def reset(self):\n"
                "        with torch.no_grad():\n            self.scale[0] = 1.0\n\n\nGate().reset()\n",
            ),
            raises=VIEW,
            note="an nn.Parameter in a module method; the fix adds `import torch`",
        ),
        Invalid(
            """
import torch
from torch import nn


def sgd_step(net, lr):
    for param in net.parameters():
        param.add_(param.grad, alpha=-lr)


mlp = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
data = torch.randn(6, 3)
for epoch in range(2):
    mlp.zero_grad()
    mlp(data).pow(2).mean().backward()
    sgd_step(mlp, 0.05)
""",
            range=(8, 8, 8, 41),
            message='`param` is a leaf tensor that requires grad (a parameter on line 7); `.add_()` on it raises "a '
            'leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef sgd_step(net, lr):\n'
                '    for param in net.parameters():\n        with torch.no_grad():\n'
                '            param.add_(param.grad, alpha=-lr)\n\n\n'
                'mlp = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\ndata = torch.randn(6, 3)\n'
                'for epoch in range(2):\n    mlp.zero_grad()\n    mlp(data).pow(2).mean().backward()\n'
                '    sgd_step(mlp, 0.05)\n',
            ),
            raises=LEAF,
            note='a helper function called from the training loop; an nn.Sequential model',
        ),
        Invalid(
            """
import torch

theta = torch.zeros(2, requires_grad=True)
goal = torch.tensor([1.0, -1.0])
it = 0
while it < 5:
    objective = (theta - goal).pow(2).sum()
    objective.backward()
    theta -= 0.1 * theta.grad
    theta.grad = None
    it += 1
""",
            range=(10, 4, 10, 29),
            message='`theta` is a leaf tensor that requires grad (`requires_grad=True` on line 4); the in-place `-=` '
            'on it raises "a leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                '\nimport torch\n\ntheta = torch.zeros(2, requires_grad=True)\ngoal = torch.tensor([1.0, -1.0])\n'
                'it = 0\nwhile it < 5:\n    objective = (theta - goal).pow(2).sum()\n    objective.backward()\n'
                '    with torch.no_grad():\n        theta -= 0.1 * theta.grad\n    theta.grad = None\n    it += 1\n',
            ),
            raises=LEAF,
            note='a `while` loop; renamed variables',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

encoder = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
for epoch in range(2):
    for batch in [torch.randn(3, 4) for _ in range(2)]:
        recon = F.mse_loss(encoder(batch), batch)
        recon.backward()
        _ = [w.sub_(0.01 * w.grad) for w in encoder.parameters()]
""",
            range=(11, 13, 11, 34),
            message='`w` is a leaf tensor that requires grad (a parameter on line 11); `.sub_()` on it raises "a '
            'leaf Variable that requires grad is being used in an in-place operation."',
            raises=LEAF,
            note='nested loops, `import torch.nn.functional as F`, an update in a comprehension (no fix)',
        ),
        Invalid(
            """
import math

import torch
from torch import nn


class Detect(nn.Module):
    def __init__(self, na=3, nc=4):
        super().__init__()
        self.na = na
        self.m = nn.ModuleList([nn.Conv2d(8, na * (5 + nc), 1) for _ in range(2)])
        self.initialize_biases()

    def initialize_biases(self):
        for mi in self.m:
            b = mi.bias.view(self.na, -1)
            b[:, 4] += math.log(8 / 640 ** 2)

    def forward(self, x):
        return [conv(x) for conv in self.m]


Detect()
""",
            range=(18, 12, 18, 45),
            message='`b[:, 4]` is a view of a leaf tensor that requires grad (parameter `mi.bias` on line 17); the in-place `+=` on it raises "a view of a leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                '\nimport math\n\nimport torch\nfrom torch import nn\n\n\nclass Detect(nn.Module):\n    def __init__(self, na=3, nc=4):\n        super().__init__()\n        self.na = na\n        self.m = nn.ModuleList([nn.Conv2d(8, na * (5 + nc), 1) for _ in range(2)])\n        self.initialize_biases()\n\n    def initialize_biases(self):\n        for mi in self.m:\n            b = mi.bias.view(self.na, -1)\n            with torch.no_grad():\n                b[:, 4] += math.log(8 / 640 ** 2)\n\n    def forward(self, x):\n        return [conv(x) for conv in self.m]\n\n\nDetect()\n',
            ),
            raises=VIEW,
            note="YOLO's bias initialisation through a view of a parameter, outside no_grad",
        ),
        Invalid(
            """
import torch
from torch import nn


class UpsampleNetwork(nn.Module):
    def __init__(self, scales=(2, 3)):
        super().__init__()
        layers = []
        for scale in scales:
            conv = nn.Conv2d(1, 1, (1, scale * 2 + 1), padding=(0, scale), bias=False)
            conv.weight.fill_(1.0 / (scale * 2 + 1))
            layers.append(conv)
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
""",
            range=(12, 12, 12, 52),
            message='`conv.weight` is a leaf tensor that requires grad; `.fill_()` on it raises "a leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass UpsampleNetwork(nn.Module):\n    def __init__(self, scales=(2, 3)):\n        super().__init__()\n        layers = []\n        for scale in scales:\n            conv = nn.Conv2d(1, 1, (1, scale * 2 + 1), padding=(0, scale), bias=False)\n            with torch.no_grad():\n                conv.weight.fill_(1.0 / (scale * 2 + 1))\n            layers.append(conv)\n        self.layers = nn.ModuleList(layers)\n\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n        return x\n',
            ),
            runtime="try:\n    UpsampleNetwork()\nexcept RuntimeError as e:\n    assert 'a leaf Variable that requires grad is being used in an in-place operation' in str(e)\nelse:\n    raise AssertionError('constructed without error')",
            note="a constructor that initialises a layer's weight in place outside no_grad (torchaudio's WaveRNN, PR 1993): building the model raises, wherever it is built",
        ),
        Invalid(
            """
import torch

def refine(scale, inputs, targets, lr=0.1, steps=3):
    for _ in range(steps):
        loss = ((inputs * scale - targets) ** 2).mean()
        loss.backward()
        scale -= lr * scale.grad
        scale.grad.zero_()
    return scale
""",
            range=(8, 8, 8, 32),
            message='`scale` is a leaf tensor that requires grad (the update reads `scale.grad`, which only a leaf that requires grad has); the in-place `-=` on it raises "a leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                '\nimport torch\n\ndef refine(scale, inputs, targets, lr=0.1, steps=3):\n    for _ in range(steps):\n        loss = ((inputs * scale - targets) ** 2).mean()\n        loss.backward()\n        with torch.no_grad():\n            scale -= lr * scale.grad\n        scale.grad.zero_()\n    return scale\n',
            ),
            runtime="try:\n    refine(torch.ones(3, requires_grad=True), torch.randn(4, 3), torch.randn(4, 3))\nexcept RuntimeError as e:\n    assert 'a leaf Variable that requires grad is being used in an in-place operation' in str(e)\nelse:\n    raise AssertionError('no error')",
            note='SparseLLM: a hand-written step on a tensor known only by its `.grad` being read after a backward',
        ),
        Invalid(
            """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(4, 3)

    def forward(self, x):
        return self.dense(x)


def edit_neuron(model, layer, pos, delta):
    weight = model.blocks[layer].dense.weight
    weight[:, pos] -= delta
""",
            range=(17, 4, 17, 27),
            message='`weight[:, pos]` is a view of a leaf tensor that requires grad (`.dense` is an `nn.Linear` in `Block`, the only class of this file with a `.dense`, on line 9); the in-place `-=` on it raises "a view of a leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.dense = nn.Linear(4, 3)\n\n    def forward(self, x):\n        return self.dense(x)\n\n\ndef edit_neuron(model, layer, pos, delta):\n    weight = model.blocks[layer].dense.weight\n    with torch.no_grad():\n        weight[:, pos] -= delta\n',
            ),
            runtime='class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = nn.ModuleList([Block()])\n\n\ntry:\n    edit_neuron(Net(), 0, 1, torch.ones(3))\nexcept RuntimeError as e:\n    assert "a view of a leaf Variable that requires grad" in str(e), e\nelse:\n    raise AssertionError("the edit ran")',
            note="a trained model's weights edited by a function no code of the file calls (knowledge-neurons): the model is given, so the edit is the function's own job; `.dense` is a layer of the one class that has one",
        ),
        Invalid(
            """
import torch
from torch import nn


class FusedBlock(nn.Module):
    def __init__(self, n=2):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(2, 2, 3, padding=1) for _ in range(n)])

    def load_from(self, block):
        for i in range(len(self.convs)):
            self.convs[i].weight[:] = block.convs[i].weight

    def forward(self, x):
        for conv in self.convs:
            x = conv(x)
        return x
""",
            range=(13, 12, 13, 59),
            message='`self.convs[i].weight` is a leaf tensor that requires grad; indexed assignment on it raises "a leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass FusedBlock(nn.Module):\n    def __init__(self, n=2):\n        super().__init__()\n        self.convs = nn.ModuleList([nn.Conv2d(2, 2, 3, padding=1) for _ in range(n)])\n\n    def load_from(self, block):\n        for i in range(len(self.convs)):\n            with torch.no_grad():\n                self.convs[i].weight[:] = block.convs[i].weight\n\n    def forward(self, x):\n        for conv in self.convs:\n            x = conv(x)\n        return x\n',
            ),
            runtime='try:\n    FusedBlock().load_from(FusedBlock())\nexcept RuntimeError as e:\n    assert "a leaf Variable that requires grad is being used" in str(e), e\nelse:\n    raise AssertionError("the copy ran")',
            note="a module's own weights overwritten in a method no code of the file calls (HarDNet's transform); `w[:] = x` writes the whole leaf, and PyTorch names the leaf, not a view",
        ),
        Invalid(
            """
import torch
from torch import nn


def tagged(value, tag):
    return value, tag


model = nn.Linear(3, 1)
model(torch.randn(4, 3)).sum().backward()
for p in model.parameters():
    tagged(p, "sgd")[0].sub_(0.1 * p.grad)
""",
            range=(13, 4, 13, 42),
            message="`p` is a leaf tensor that requires grad (a parameter on line 12); `.sub_()` on it raises "
            '"a leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\ndef tagged(value, tag):\n    return value, tag\n\n\n"
                "model = nn.Linear(3, 1)\nmodel(torch.randn(4, 3)).sum().backward()\n"
                "for p in model.parameters():\n    with torch.no_grad():\n"
                '        tagged(p, "sgd")[0].sub_(0.1 * p.grad)\n',
            ),
            raises=LEAF,
            note="the parameter handed through a helper's tuple (`tagged(p, ...)[0]`) is the parameter itself",
        ),
        Invalid(
            """
import torch


def sgd_step(scale, lr):
    scale -= lr * scale.grad
    return scale


def refine(scale, inputs, targets, lr=0.1, steps=3):
    for _ in range(steps):
        loss = ((inputs * scale - targets) ** 2).mean()
        loss.backward()
        scale = sgd_step(scale, lr)
        scale.grad.zero_()
    return scale
""",
            range=(6, 4, 6, 28),
            message='`scale` is a leaf tensor that requires grad (the update reads `scale.grad`, which only a leaf that requires grad '
                    'has); the in-place `-=` on it raises "a leaf Variable that requires grad is being used in an in-place operation."',
            fixes=(
                '\nimport torch\n\n\ndef sgd_step(scale, lr):\n    with torch.no_grad():\n        scale -= lr * scale.grad\n    return scale\n\n\n'
                'def refine(scale, inputs, targets, lr=0.1, steps=3):\n    for _ in range(steps):\n        loss = ((inputs * scale - targets) ** 2).mean()\n        loss.backward()\n        scale = sgd_step(scale, lr)\n        scale.grad.zero_()\n    return scale\n',
            ),
            runtime="try:\n    refine(torch.ones(3, requires_grad=True), torch.randn(4, 3), torch.randn(4, 3))\nexcept RuntimeError as e:\n"
                    "    assert 'a leaf Variable that requires grad is being used in an in-place operation' in str(e)\n"
                    "else:\n    raise AssertionError('no error')",
            note="the step taken by a helper: the backward that gave the tensor its `.grad` is its caller's, before the call",
        ),
        Invalid(
            """
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)


def init_head(model):
    model.fc.weight /= 2
""",
            range=(13, 4, 13, 24),
            message=f"`model.fc.weight` is a leaf tensor that requires grad (`.fc` is an `nn.Linear` in `Head`, the only class "
            f"of this file with a `.fc`, on line 9); the in-place `/=` on it raises \"{LEAF}\"",
            fixes=('\nimport torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n\ndef init_head(model):\n    with torch.no_grad():\n        model.fc.weight /= 2\n',),
            runtime='try:\n    init_head(Head())\nexcept RuntimeError as e:\n    assert "a leaf Variable that requires grad" in str(e)\nelse:\n    raise AssertionError("no error")',
            note="the weights of a given model edited outside no_grad: a function called `init_head` is no initialisation hook "
            "by its name (once silenced by the word `init`); it dispatches on no module type and is handed to nobody",
        ),
    ]


def _operands(expr: cst.BaseExpression, handed) -> list:
    """The leaves of an arithmetic expression: `lr * s.grad` -> [lr, s.grad]; a method call's
    arguments (`s.sub_(s.grad, alpha=lr)`); through what hands them on (`handed`: flow.handed_on)."""
    expr = handed(expr)
    if isinstance(expr, cst.BinaryOperation):
        return _operands(expr.left, handed) + _operands(expr.right, handed)
    if isinstance(expr, cst.UnaryOperation):
        return _operands(expr.expression, handed)
    if isinstance(expr, cst.Call):
        return [x for a in expr.args for x in _operands(a.value, handed)]
    return [expr]


def _whole(target: cst.Subscript) -> bool:
    """`w[:]`, `w[:, :]`, `w[...]`: every index a bare slice or the ellipsis."""
    def full(el) -> bool:
        sl = el.slice
        if isinstance(sl, cst.Slice):
            return sl.lower is None and sl.upper is None and sl.step is None
        return isinstance(sl, cst.Index) and isinstance(sl.value, cst.Ellipsis)
    return all(full(el) for el in target.slice)


def _visits_modules(fn: cst.FunctionDef) -> bool:
    """Does the function test what one of its parameters is (`isinstance(module, nn.Linear)`)? A
    function that dispatches on the module it is given is run for each module by whoever walks
    them (`Module.apply`, a framework's initialisation), in the mode its caller chose."""
    params = set(named_params(fn)) - {"self", "cls"}
    return any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "isinstance" and n.args
        and isinstance(n.args[0].value, cst.Name) and n.args[0].value.value in params
        for n in descendants(fn.body)
    )
