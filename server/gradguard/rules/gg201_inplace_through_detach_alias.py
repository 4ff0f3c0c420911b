from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.model import GradMode
from gradguard.engine.syntax import is_self_attribute, keyword
from gradguard.engine.walk import descendants
from gradguard.findings import Safety, Severity
from gradguard.rules._build import copy_methods, method_chain, short
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid

META = frozenset(K.NEVER_GRAD_ATTRIBUTES | K.NUMBER_METHODS) - {"data", "grad", "item", "equal", "allclose"}
# In-place writes that mask or zero part of a tensor (a pruning of the weights, when they are a parameter's)
MASKING = frozenset(("masked_fill_", "fill_", "zero_", "index_fill_", "masked_scatter_"))
SAVED = "one of the variables needed for gradient computation has been modified by an inplace operation"


class InplaceThroughDetachAlias(Rule):
    """
    ## What it does
    Finds an in-place write - any `*_` method, `y += ...`, `y[idx] = ...`,
    `y.copy_(...)` - to a name bound to `x.detach()` (or to a view of it) while
    `x` is used again afterwards.

    ## Why is this bad?
    `x.detach()` is not a copy: it shares `x`'s storage (and version counter).
    The write silently changes `x` too. If `x` was saved for backward before the
    write, `backward()` raises "one of the variables needed for gradient
    computation has been modified by an inplace operation"; if the write comes
    first, there is no error at all and results and gradients are silently wrong.

    Writes meant for the original are left alone: `p.detach().mul_(decay)` and
    the like under `torch.no_grad()` on a parameter (EMA, weight decay).

    ## Example
    ```python
    baseline = scores.detach()
    baseline -= baseline.mean()
    loss = (scores * weights).sum()  # scores changed too
    ```

    ## Use instead
    ```python
    baseline = scores.clone().detach()
    baseline -= baseline.mean()
    loss = (scores * weights).sum()
    ```

    ## Fix safety
    Safe: binding `x.clone().detach()` (or `x.detach().clone()` with
    `copy-order = "detach-clone"`) gives the alias its own storage, so the write
    stays where the code says it goes. It costs one copy.
    """

    code = "GG201"
    name = "inplace-through-detach-alias"
    severity = Severity.WARNING
    summary = "An in-place write through a `detach()` alias silently changes the original"

    def __init__(self, *args):
        super().__init__(*args)
        self._tick = 0
        self._reads: dict = {}  # Binding -> [(tick, loops)]
        self._writes: list = []  # (node, alias name node, alias, op, tick, loops, stamp)
        self._meta: set = set()  # Name nodes only read for metadata (x.shape)
        self._bound: dict = {}  # Name node -> its Binding where it was read (a call's argument)

    def visit_Name(self, node: cst.Name) -> None:
        self._tick += 1
        b = self.flow.lookup(node.value)
        if b is not None:
            self._reads.setdefault(b, []).append((self._tick, self.flow.frame.loops, node))
            self._bound[node] = b

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # p.device, p.shape, p.size(): reading metadata does not see the write.
        if isinstance(node.value, (cst.Name, cst.Attribute)) and node.attr.value in META:
            self._meta.add(node.value)
        if is_self_attribute(node):  # a method's `self.x` is read like a local
            b = self.flow.place_binding(node)
            if b is not None:
                self._tick += 1
                self._reads.setdefault(b, []).append((self._tick, self.flow.frame.loops, node))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and K.is_inplace_method(func.attr.value):
            self._write(node, func.value, f"`.{func.attr.value}()`")

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._write(node, node.target, f"`{self.code_of(node.operator).strip()}`")

    def leave_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                self._write(node, t.target.value, "the indexed assignment")

    def _write(self, node, target: cst.BaseExpression, op: str) -> None:
        alias = self.flow.value(target).alias
        if alias is None or alias.how != "detach" or alias.binding is None:
            return
        if not (isinstance(target, cst.Name) or self.flow.place_binding(target) is not None) and (
                any(n is alias.node for n in descendants(target)) or self.flow.lookup(alias.name) is not alias.binding):
            # x.detach().mul_(...) writes to x on purpose, as does a write to what a helper returns detached;
            # an alias this scope made earlier and kept is written unawares (`parts["p"].clamp_()`)
            return
        if self._integer(alias.binding.node):
            return  # no autograd on integer tensors: their `.detach()` is a plain alias, meant as one
        if self.flow.frame.mode is GradMode.OFF and alias.leaf:
            return  # EMA / weight decay through a parameter's detach
        self._tick += 1
        self._writes.append((node, target, alias, op, self._tick, self.flow.frame.loops, self.stamp(), self._call_into(alias)))

    def _call_into(self, alias) -> Optional[cst.Call]:
        """The call, in the function that made the alias, whose callee writes it (`to_unit(emb.detach())`
        with `def to_unit(v): return v.div_(...)`): the caller's line is where the bug is and the fix
        goes; the write itself is a related location. None where this function made the alias."""
        return self._home(alias, self.flow.function)[0]

    @staticmethod
    def _home(alias, fn) -> tuple:
        """(the call into `fn`, the writing function, from the function that made the alias, and that
        function): (None, fn) where `fn` made the alias itself, (None, None) where no walk links the two."""
        call = None
        while fn is not None and not any(n is alias.node for n in descendants(fn.node)):
            if fn.walked_at is None:
                return None, None
            call, fn = fn.walked_at
        return call, fn

    def _originals(self, alias, home) -> list:
        """The bindings that hold the aliased tensor, each with the tick after which a read sees the
        write: the alias's own, and, where it is a parameter of a function walked at a call, the
        caller's name given at that call (`def extracted(emb): return to_unit(emb.detach())`, called as
        `extracted(emb)` before the caller's loss reads `emb`), and so on up the calls."""
        found, binding, fn = [(alias.binding, 0)], alias.binding, home
        while fn is not None and isinstance(binding.node, cst.Param) and fn.walked_at is not None:
            if not any(binding.node is q for q in (*fn.node.params.posonly_params, *fn.node.params.params,
                                                    *fn.node.params.kwonly_params)):
                break
            call, caller = fn.walked_at
            arg = self._argument(fn, call, binding.node.name.value)
            binding = self._bound.get(arg) if isinstance(arg, cst.Name) else None
            if binding is None:
                break
            found.append((binding, max((t for t, _, n in self._reads.get(binding, []) if n is arg), default=0)))
            fn = caller
        return found

    @staticmethod
    def _argument(fn, call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
        """The expression `call` passes for parameter `name` of `fn`."""
        for a in call.args:
            if a.keyword is not None and a.keyword.value == name:
                return a.value
        p = fn.node.params
        names = [x.name.value for x in (*p.posonly_params, *p.params)]
        if fn.cls is not None and isinstance(call.func, cst.Attribute) and names:
            names = names[1:]  # `obj.method(x)`: `self` is the receiver
        pos = [a.value for a in call.args if a.keyword is None]
        if any(a.star for a in call.args) or name not in names or names.index(name) >= len(pos):
            return None
        return pos[names.index(name)]

    def finish(self) -> None:
        for node, target, alias, op, tick, loops, stamp, call in self._writes:
            if not self.current(stamp):
                continue
            later = [
                n for b, since in self._originals(alias, self._home(alias, stamp[0])[1])
                for t, read_loops, n in self._reads.get(b, [])
                if t > max(tick, since) or (loops and loops[-1] in read_loops)  # afterwards, or in the next iteration
            ]
            later = [n for n in later if n is not alias.node.func.value and n not in self._meta]
            if later:
                self._report(node, target, alias, op, later[0], call=call)
            elif self._callers_tensor(node, alias, stamp):
                self._report(node, target, alias, op, None, call=call)
            elif self._parameter_overwritten(node, alias, loops):
                self._report(node, target, alias, op, None, parameter=True, call=call)

    def _callers_tensor(self, node, alias, stamp) -> bool:
        """Arithmetic through a detached alias of a parameter of a function no code of this file
        calls (`def normalized(scores): probs = scores.detach(); probs /= probs.sum()`): the
        detach says the author wanted a copy to work on, and the write changes the caller's
        tensor, which the caller still holds. Left alone: a parameter of the model (writes
        meant for it) and writes that fill or copy into the tensor (`out.detach()` as an
        output buffer). What the function is called plays no part: one named like an in-place op
        (`def clip_(t)`) changes the caller's tensor all the same, and says so by its name alone."""
        fn = self._home(alias, stamp[0])[1]  # where the alias was made: the write may be a helper's it calls
        if fn is None or fn.call_sites or alias.leaf:
            return False
        if not isinstance(alias.binding.node, cst.Param) or alias.binding.node.name.value in ("self", "cls"):
            return False
        if isinstance(node, cst.AugAssign):
            return True
        return isinstance(node, cst.Call) and node.func.attr.value in K.ARITHMETIC_INPLACE

    def _integer(self, made, depth: int = 0) -> bool:
        """Was the aliased tensor made with an integer dtype (`torch.arange(5)`, `torch.randint(...)`,
        `torch.tensor([1, 2])`, `dtype=torch.long`, `.long()`) - itself, or the name it was bound from
        (`old_tensor = tensor`)?"""
        if isinstance(made, cst.Name) and depth < 4:
            b = self.flow.lookup(made.value)
            return b is not None and b.node is not made and self._integer(b.node, depth + 1)
        if not isinstance(made, cst.Call):
            return False
        func = made.func
        if isinstance(func, cst.Attribute) and func.attr.value in K.INTEGER_DTYPES and not made.args:
            return True  # `x.long()`
        q = self.flow._qualname(func) or ""
        dtype = keyword(made, "dtype")
        if dtype is not None:
            return (self.flow._qualname(dtype.value) or "").rsplit(".", 1)[-1] in K.INTEGER_DTYPES
        args = [a.value for a in made.args if a.keyword is None]
        if q in ("torch.randint", "torch.randperm", "torch.randint_like"):
            return True
        if q == "torch.arange" and args:
            return all(isinstance(a, cst.Integer) for a in args)
        if q in ("torch.tensor", "torch.as_tensor") and args:
            nodes = descendants(args[0])
            literals = [n for n in nodes if isinstance(n, (cst.Integer, cst.Float))]
            # only integer literals, nothing computed (`torch.tensor([1, 2])`, not `[x, 2]`)
            return bool(literals) and all(isinstance(n, cst.Integer) for n in literals) and not any(
                isinstance(n, (cst.Name, cst.Call, cst.Attribute)) for n in nodes)
        return False

    @staticmethod
    def _parameter_overwritten(node, alias, loops) -> bool:
        """`view = w.detach(); view[view.abs() < t] = 0` with `w` a model's parameter, outside
        `torch.no_grad()` (_write leaves that case alone): a name bound to the detach reads as a copy to
        work on, and the write masks the model's weights. Updates (`d.mul_(decay)`, `d.copy_(avg)`: EMA,
        SWA) are how code meant to change a parameter writes through its detach, and are left alone."""
        if not alias.leaf:
            return False
        if isinstance(node, cst.Call):
            return node.func.attr.value in MASKING
        return isinstance(node, cst.Assign)  # an indexed assignment, not `d += x`

    def _report(self, node, target, alias, op, read, parameter: bool = False, call=None) -> None:
        y, x = self.code_of(target), alias.name
        detach = alias.node
        copy = method_chain(detach.func.value, *copy_methods(self.settings))

        def message(line_of):
            if parameter:
                return (
                    f"`{y}` shares storage with `{x}` (from `{short(self.code_of(detach))}` on line {line_of(detach)}), "
                    f"a parameter of the model: {op} on `{y}` silently changes the model's weights; if that is meant, "
                    f"write to `{x}` inside `torch.no_grad()`, else bind a copy"
                )
            where = f"which is used again on line {line_of(read)}" if read is not None else "the caller's tensor"
            if call is not None:
                return (
                    f"`{short(self.code_of(call.func))}()` writes its argument in place ({op} on `{y}`, line "
                    f"{line_of(node)}), and `{short(self.code_of(detach))}` shares storage with `{x}`: "
                    f"`{x}` silently changes too, {where}"
                )
            return (
                f"`{y}` shares storage with `{x}` (from `{short(self.code_of(detach))}` on line {line_of(detach)}): "
                f"{op} on `{y}` silently changes `{x}` too, {where}"
            )

        # for a parameter the author may have meant to change the weights: the copy would undo that
        safety = Safety.UNSAFE if parameter else Safety.SAFE
        fixes = [PendingFix(f"Bind `{short(self.code_of(copy))}` instead", safety, [(detach, copy)])]
        related = [(detach, "the alias is made here")] + ([(read, f"`{x}` is read here")] if read is not None else [])
        if call is not None:
            related = [(node, "the argument is written in place here")] + related[1:]
        self.report(call if call is not None else node, message, fixes=fixes, related=related)

    VALID = [
        Valid(
            """
import torch

scores = torch.randn(5)
baseline = scores.clone().detach()
baseline -= baseline.mean()
total = scores.sum()
""",
            note="a real copy",
            runtime="assert not torch.equal(scores, baseline)",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(3, 3)
ema = nn.Linear(3, 3)
with torch.no_grad():
    for p_ema, p in zip(ema.parameters(), model.parameters()):
        p_ema.detach().mul_(0.99).add_(p.detach(), alpha=0.01)
""",
            note="the EMA idiom: writing to the original on purpose",
        ),
        Valid(
            """
import torch

feats = torch.randn(4, 3)
normed = feats.detach()
normed /= normed.norm()
print(normed)
""",
            note="`feats` is never read again",
        ),
        Valid(
            """
import torch
from torch import nn

net = nn.Linear(2, 2)
with torch.no_grad():
    w = net.weight.detach()
    w.mul_(0.5)
out = net(torch.ones(1, 2))
""",
            note="a parameter's detach under no_grad: weight decay written out",
        ),
        Valid(
            """
import torch
from torch import nn

swa, model = nn.Linear(2, 2), nn.Linear(2, 2)
for p_swa, p_model in zip(swa.parameters(), model.parameters()):
    device = p_swa.device
    p_swa_ = p_swa.detach()
    p_swa_.copy_(p_model.detach().to(device))
    print(p_swa.shape)
""",
            note="regression (lightning SWA): afterwards the original is only read for `.device` / `.shape`",
            runtime="assert torch.equal(swa.weight, model.weight)",
        ),
        Invalid(
            """
import torch


def write_into(out, values):
    buffer = out.detach()
    buffer.copy_(values)
""",
            range=(7, 4, 7, 24),
            message='`buffer` shares storage with `out` (from `out.detach()` on line 6): `.copy_()` on `buffer` silently changes `out` too, which is used again on line 8',
            fixes=(
                '\nimport torch\n\n\ndef write_into(out, values):\n    buffer = out.clone().detach()\n    buffer.copy_(values)\n    return out\n',
            ),
            runtime='out = torch.zeros(3)\nwrite_into(out, torch.ones(3))\nassert out.tolist() == [1.0, 1.0, 1.0]',
            note="a detached alias of an argument used as an output buffer: the copy into the caller's tensor is the point",
        ),
        Valid(
            """
import torch

a = torch.arange(5)
b = a.detach()
b[0] = 100
""",
            note='a storage-sharing demonstration on an integer tensor: no autograd on it, the alias is the point',
            runtime='assert a[0] == 100 and a.dtype == torch.int64',
        ),
        Valid(
            """
import torch


def scaled_update(p, grad, lr):
    p.copy_(p.float() - lr * grad.sign())


class SignSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    def _update(self, p, lr):
        scaled_update(p.detach(), p.grad, lr)
        p.grad = None

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, group["lr"])


net = torch.nn.Linear(2, 1)
opt = SignSGD(net.parameters())
before = net.weight.detach().clone()
net(torch.ones(4, 2)).sum().backward()
opt.step()
""",
            note="regression (axolotl's SinkGD): an optimizer's step writes its parameters through their "
                 "detach under no_grad; `param_groups` hold the parameters",
            runtime="assert not torch.equal(net.weight, before)",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train_step(model, opt, x, y):
    opt.zero_grad()
    probs = torch.sigmoid(model(x)).squeeze(-1)
    parts = {"p": probs.detach().clone()}
    parts["p"].clamp_(1e-6, 1 - 1e-6)
    loss = F.binary_cross_entropy(probs, y)
    loss.backward()
    opt.step()
    return parts


model = nn.Linear(6, 1)
train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(8, 6), torch.randint(0, 2, (8,)).float())
""",
            note="the dict entry is a copy (`.detach().clone()`): clamping it leaves `probs` alone",
            runtime="assert model.weight.grad is not None",
        ),
        Valid(
            """
import torch


def to_unit(v):
    v /= v.norm(dim=-1, keepdim=True)
    return v


def unit_copy(emb):
    return to_unit(emb.detach())


def bank_entry(encoder, x):
    emb = encoder(x)
    return unit_copy(emb)
""",
            note="the same helpers, and the caller's tensor is never read after the call: only the unit copy is used",
            runtime="enc = torch.nn.Linear(3, 3)\nassert torch.allclose(bank_entry(enc, torch.randn(2, 3)).norm(dim=-1), torch.ones(2))",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

scores = torch.randn(5)
baseline = scores.detach()
baseline -= baseline.mean()
total = scores.sum()
""",
            range=(6, 0, 6, 27),
            message="`baseline` shares storage with `scores` (from `scores.detach()` on line 5): `-=` on `baseline` "
            "silently changes `scores` too, which is used again on line 7",
            fixes=("\nimport torch\n\nscores = torch.randn(5)\nbaseline = scores.clone().detach()\nbaseline -= baseline.mean()\n"
                   "total = scores.sum()\n",),
            runtime="assert torch.equal(scores, baseline)",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 4)
act = torch.sigmoid(model(torch.randn(2, 4)))
mask = act.detach()
mask.zero_()
loss = act.sum()
loss.backward()
""",
            range=(8, 0, 8, 12),
            message="`mask` shares storage with `act` (from `act.detach()` on line 7): `.zero_()` on `mask` silently "
            "changes `act` too, which is used again on line 9",
            fixes=("\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 4)\nact = torch.sigmoid(model(torch.randn(2, 4)))\n"
                   "mask = act.clone().detach()\nmask.zero_()\nloss = act.sum()\nloss.backward()\n",),
            raises=SAVED,
            note="sigmoid saved its output for backward",
        ),
        Invalid(
            """
import torch
from torch import nn


def normalise(net, batches):
    for x in batches:
        out = net(x)
        view = out.detach()[:, 0]
        view[0] = 0.0
        yield out


for o in normalise(nn.Linear(3, 2), [torch.randn(2, 3)]):
    print(o)
""",
            range=(10, 8, 10, 21),
            message="`view` shares storage with `out` (from `out.detach()` on line 9): the indexed assignment on `view` "
            "silently changes `out` too, which is used again on line 11",
            fixes=("\nimport torch\nfrom torch import nn\n\n\ndef normalise(net, batches):\n    for x in batches:\n"
                   "        out = net(x)\n        view = out.clone().detach()[:, 0]\n        view[0] = 0.0\n        yield out\n\n\n"
                   "for o in normalise(nn.Linear(3, 2), [torch.randn(2, 3)]):\n    print(o)\n",),
            runtime="assert o[0, 0].item() == 0.0",
            note="a view of a detach() alias, in a generator",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

net = nn.Sequential(nn.Linear(4, 4), nn.Softmax(dim=-1))
for inputs in [torch.randn(2, 4) for _ in range(2)]:
    probs = net(inputs)
    clipped = probs.detach()
    clipped.clamp_(min=0.1)
    F.nll_loss(probs.log(), torch.tensor([0, 1])).backward()
""",
            range=(10, 4, 10, 27),
            message="`clipped` shares storage with `probs` (from `probs.detach()` on line 9): `.clamp_()` on "
            "`clipped` silently changes `probs` too, which is used again on line 11",
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
                "net = nn.Sequential(nn.Linear(4, 4), nn.Softmax(dim=-1))\n"
                "for inputs in [torch.randn(2, 4) for _ in range(2)]:\n    probs = net(inputs)\n"
                "    clipped = probs.clone().detach()\n    clipped.clamp_(min=0.1)\n"
                "    F.nll_loss(probs.log(), torch.tensor([0, 1])).backward()\n",
            ),
            raises=SAVED,
            note="a loop over batches, `nn.Sequential` ending in Softmax (which saves its output), `F.nll_loss`",
        ),
        Invalid(
            """
import torch
from torch import nn


class Distiller:
    def __init__(self):
        self.student = nn.Linear(4, 3)

    def step(self, batch):
        logits = self.student(batch)
        targets = logits.detach()
        targets.mul_(0.5)
        return (logits - targets).pow(2).mean()


distiller = Distiller()
gap = distiller.step(torch.randn(2, 4))
""",
            range=(13, 8, 13, 25),
            message="`targets` shares storage with `logits` (from `logits.detach()` on line 12): `.mul_()` on "
            "`targets` silently changes `logits` too, which is used again on line 14",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\nclass Distiller:\n    def __init__(self):\n"
                "        self.student = nn.Linear(4, 3)\n\n    def step(self, batch):\n"
                "        logits = self.student(batch)\n        targets = logits.clone().detach()\n"
                "        targets.mul_(0.5)\n        return (logits - targets).pow(2).mean()\n\n\n"
                "distiller = Distiller()\ngap = distiller.step(torch.randn(2, 4))\n",
            ),
            runtime="assert gap.item() == 0.0",
            note="a method of a trainer-style class: the target was meant to be half the logits, but both halved",
        ),
        Invalid(
            """
import torch


def normalized(scores):
    probs = scores.detach()
    probs /= probs.sum(dim=-1, keepdim=True)
    return probs
""",
            range=(7, 4, 7, 44),
            message="`probs` shares storage with `scores` (from `scores.detach()` on line 6): `/=` on `probs` silently changes `scores` too, the caller's tensor",
            fixes=(
                '\nimport torch\n\n\ndef normalized(scores):\n    probs = scores.clone().detach()\n    probs /= probs.sum(dim=-1, keepdim=True)\n    return probs\n',
            ),
            runtime='scores = torch.rand(2, 3) + 1\nbefore = scores.clone()\nnormalized(scores)\nassert not torch.equal(scores, before)',
            note="a helper's argument: the write changes the tensor its caller passed and still holds",
        ),
        Invalid(
            """
import torch


def train(model, loss, batches, opt):
    log = []
    for x in batches:
        emb = model(x)
        log.append(to_unit(emb.detach()))
        opt.zero_grad()
        loss(emb).backward()
        opt.step()
    return log


def to_unit(v):
    return v.div_(v.norm(dim=-1, keepdim=True))
""",
            range=(9, 19, 9, 40),
            message="`to_unit()` writes its argument in place (`.div_()` on `v`, line 17), and `emb.detach()` shares storage with `emb`: `emb` silently changes too, which is used again on line 11",
            fixes=(
                '\nimport torch\n\n\ndef train(model, loss, batches, opt):\n    log = []\n    for x in batches:\n        emb = model(x)\n        log.append(to_unit(emb.clone().detach()))\n        opt.zero_grad()\n        loss(emb).backward()\n        opt.step()\n    return log\n\n\ndef to_unit(v):\n    return v.div_(v.norm(dim=-1, keepdim=True))\n',
            ),
            note="a helper defined below its caller writes its argument in place: the caller's `emb` is normalised too, and the loss reads the changed values",
            runtime='model = torch.nn.Linear(4, 4)\noutputs = []\nmodel.register_forward_hook(lambda m, i, o: outputs.append(o))\ntrain(model, lambda e: e.pow(2).sum(), [torch.randn(3, 4) * 5], torch.optim.SGD(model.parameters(), lr=0.0))\nassert torch.allclose(outputs[0].detach().norm(dim=-1), torch.ones(3))',
        ),
        Invalid(
            """
import torch
from torch import nn


def prune(layer: nn.Linear, t):
    w = layer.weight
    view = w.detach()
    view[view.abs() < t] = 0
    return view.count_nonzero()
""",
            range=(9, 4, 9, 28),
            message="`view` shares storage with `w` (from `w.detach()` on line 8), a parameter of the model: the indexed assignment on `view` silently changes the model's weights; if that is meant, write to `w` inside `torch.no_grad()`, else bind a copy",
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef prune(layer: nn.Linear, t):\n    w = layer.weight\n    view = w.clone().detach()\n    view[view.abs() < t] = 0\n    return view.count_nonzero()\n',
            ),
            note="masking a parameter's detach outside no_grad sets the layer's weights",
            runtime='layer = nn.Linear(4, 4)\nbefore = layer.weight.detach().clone()\nprune(layer, 0.3)\nassert not torch.equal(before, layer.weight)',
        ),
        Invalid(
            """
import torch


class Normalizer:
    def normalized(self, scores):
        self.probs = scores.detach()
        self.probs /= self.probs.sum(dim=-1, keepdim=True)
        return self.probs
""",
            range=(8, 8, 8, 58),
            message="`self.probs` shares storage with `scores` (from `scores.detach()` on line 7): `/=` on `self.probs` "
            "silently changes `scores` too, the caller's tensor",
            fixes=("\nimport torch\n\n\nclass Normalizer:\n    def normalized(self, scores):\n"
                   "        self.probs = scores.clone().detach()\n        self.probs /= self.probs.sum(dim=-1, keepdim=True)\n"
                   "        return self.probs\n",),
            runtime="scores = torch.rand(2, 3) + 0.1\nkept = scores.clone()\nNormalizer().normalized(scores)\n"
                    "assert not torch.equal(scores, kept)",
            note="a method's `self.x` is a place like a local: the alias lives there",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train_step(model, opt, x, y):
    opt.zero_grad()
    probs = torch.sigmoid(model(x)).squeeze(-1)
    parts = {"p": probs.detach()}
    parts["p"].clamp_(1e-6, 1 - 1e-6)
    loss = F.binary_cross_entropy(probs, y)
    loss.backward()
    opt.step()
    return parts


model = nn.Linear(6, 1)
train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(8, 6), torch.randint(0, 2, (8,)).float())
""",
            range=(11, 4, 11, 37),
            message='`parts["p"]` shares storage with `probs` (from `probs.detach()` on line 10): `.clamp_()` '
            'on `parts["p"]` silently changes `probs` too, which is used again on line 12',
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def train_step(model, opt, x, y):\n    opt.zero_grad()\n"
                '    probs = torch.sigmoid(model(x)).squeeze(-1)\n    parts = {"p": probs.clone().detach()}\n'
                '    parts["p"].clamp_(1e-6, 1 - 1e-6)\n    loss = F.binary_cross_entropy(probs, y)\n'
                "    loss.backward()\n    opt.step()\n    return parts\n\n\nmodel = nn.Linear(6, 1)\n"
                "train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(8, 6), torch.randint(0, 2, (8,)).float())\n",
            ),
            raises=SAVED,
            note="a detached alias kept in a dict entry and written in place there: the entry is the alias this function made",
        ),
        Invalid(
            """
import torch


def to_unit(v):
    v /= v.norm(dim=-1, keepdim=True)
    return v


def unit_copy(emb):
    return to_unit(emb.detach())


def step(encoder, opt, x, target):
    emb = encoder(x)
    bank = unit_copy(emb)
    loss = ((emb - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return bank
""",
            range=(11, 11, 11, 32),
            message="`to_unit()` writes its argument in place (`/=` on `v`, line 6), and `emb.detach()` shares storage with `emb`: "
                    "`emb` silently changes too, which is used again on line 17",
            fixes=(
                '\nimport torch\n\n\ndef to_unit(v):\n    v /= v.norm(dim=-1, keepdim=True)\n    return v\n\n\n'
                'def unit_copy(emb):\n    return to_unit(emb.clone().detach())\n\n\ndef step(encoder, opt, x, target):\n'
                '    emb = encoder(x)\n    bank = unit_copy(emb)\n    loss = ((emb - target) ** 2).mean()\n    opt.zero_grad()\n'
                '    loss.backward()\n    opt.step()\n    return bank\n',
            ),
            note="the alias is made of a helper's parameter and written by another helper: the caller's `emb`, given at the call, changes too",
            runtime="enc = torch.nn.Linear(3, 3)\noutputs = []\nenc.register_forward_hook(lambda m, i, o: outputs.append(o))\n"
                    "step(enc, torch.optim.SGD(enc.parameters(), lr=0.0), torch.randn(2, 3) * 5, torch.zeros(2, 3))\n"
                    "assert torch.allclose(outputs[0].detach().norm(dim=-1), torch.ones(2))",
        ),
        Invalid(
            """
import torch


def centred(img):
    img -= img.min()
    return img


def log_feature_map(writer, feat, step):
    img = feat.detach()[0]
    img = centred(img)
    writer.append((step, img.mean().item()))
""",
            range=(12, 10, 12, 22),
            message="`centred()` writes its argument in place (`-=` on `img`, line 6), and `feat.detach()` shares storage with "
                    "`feat`: `feat` silently changes too, the caller's tensor",
            fixes=(
                '\nimport torch\n\n\ndef centred(img):\n    img -= img.min()\n    return img\n\n\n'
                'def log_feature_map(writer, feat, step):\n    img = feat.clone().detach()[0]\n    img = centred(img)\n'
                '    writer.append((step, img.mean().item()))\n',
            ),
            note="a helper of the file writes the alias in place: the write changes the caller's caller's tensor, as if written here",
            runtime="feat = torch.rand(2, 1, 3, 3) + 1\nbefore = feat.clone()\nlog_feature_map([], feat, 0)\nassert not torch.equal(feat, before)",
        ),
    ]
