from __future__ import annotations

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.evidence import dotted, named_params
from gradguard.engine.handing import handed_out_methods
from gradguard.engine.model import GradMode, forward_code
from gradguard.engine.values import Grad, Kind, all_origins
from gradguard.findings import Safety, Severity
from gradguard.rules._build import (
    has_multiline_string,
    import_torch,
    method_chain,
    short,
    torch_name,
    wrap_in_no_grad,
)
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid

META = frozenset(K.NEVER_GRAD_ATTRIBUTES | K.NUMBER_METHODS) - {"data", "grad", "item"}
# What indexing a 0-dim tensor raises: `[0]` and `[-1]`, the one element of the 1-element
# tensor a loss was before torch 0.4.
ZERO_DIM = {0: "invalid index of a 0-dim tensor", -1: "index -1 is out of bounds for dimension 0 with size 0"}


class DataAttribute(Rule):
    """
    ## What it does
    Finds `x.data` on a tensor that requires grad (a parameter, a model output).
    An in-place write through it (`x.data.clamp_(...)`, `x.data += ...`,
    `x.data[i] = ...`) is a **warning** where it provably corrupts a gradient:
    the tensor was saved for backward before the write - the output of
    `sigmoid` / `tanh` / `exp` / `softmax`, an operand of a multiplication, a
    parameter of a module that already ran its forward - and that graph is
    back-propagated after it (also inside a model's `forward()`).
    `loss.data[0]` (or `[-1]`) on a 0-dim tensor is an **error**: it raises
    `IndexError`, however the tensor is reached (`losses["g"].data[0]`,
    `out[i].sum().data[0]`, `step(...)[0].data[0]`).
    A read in a module's `forward()` whose value feeds what `forward()`
    returns (`torch.cat([x.data, zero_pads], 1)` as a residual shortcut,
    `F.conv2d(x, self.weight.data)`) is a **warning**: no gradient passes it
    (a graph it cuts from every output is GG301's). So is one in a method the
    module hands out to run as part of its computation (`partial(self._shortcut,
    planes=p)` given to a block, a forward hook), on its input or on what it
    computed from it (`out = F.avg_pool3d(x, 1, stride)`), and one in a helper
    whose result such a method returns (not an item of a tuple it returns).
    Sizes, masks, new
    tensors of its shape and statistics copied into a buffer are left alone.
    Every other use is **info**, and info is only reported when the rule is
    selected by name (`--select GG202`): the sanctioned idioms - Polyak / EMA
    target updates, manual SGD and weight clipping after `step()`, init, a
    write to a tensor nothing saved - and reads.

    ## Why is this bad?
    `x.data` is like `x.detach()` - the same storage, no graph - but writes
    through it do not bump the tensor's version counter. Autograd cannot detect
    them: if `x` was saved for backward, `backward()` runs without complaint and
    the gradients are silently wrong (with `detach()` the same write raises "one
    of the variables needed for gradient computation has been modified by an
    inplace operation"). Reads are harmless on their own, but they hand out an
    alias that writes can later go through. Since torch 0.5 a loss is a 0-dim
    tensor: `loss.data[0]`, from old tutorials, raises "invalid index of a 0-dim
    tensor".

    ## Example
    ```python
    probs = torch.sigmoid(logits)
    probs.data.clamp_(1e-6, 1 - 1e-6)
    loss = F.binary_cross_entropy(probs, target)
    loss.backward()
    ```

    ## Use instead
    ```python
    probs = torch.sigmoid(logits).clamp(1e-6, 1 - 1e-6)
    loss = F.binary_cross_entropy(probs, target)
    loss.backward()
    ```

    ## Fix safety
    Reads: `x.data` -> `x.detach()` is safe (same values, same storage, no
    graph); `loss.data[0]` -> `loss.item()` is safe (the number it meant). In
    `forward()` the same rewrite is unsafe: it keeps the cut, which may be the
    bug - drop `.data` where the gradient should pass.
    Writes: dropping `.data` and wrapping the statement in
    `with torch.no_grad():` is unsafe: the write is now seen by autograd, so code
    that silently computed wrong gradients starts raising instead.
    """

    code = "GG202"
    name = "data-attribute"
    severity = Severity.INFO
    severities = (Severity.ERROR, Severity.WARNING, Severity.INFO)
    summary = "`.data` bypasses autograd's version counter (in-place writes that corrupt a saved tensor: silently wrong gradients)"

    def __init__(self, *args):
        super().__init__(*args)
        self._tick = 0
        self._reads: list = []  # [(attribute node, statement, grad mode, stamp)]
        self._writes: dict = {}  # `.data` node -> (tick of the write, origins saved with it, the write's statement)
        self._meta: set = set()  # `.data` nodes only read for metadata
        self._indexed: list = []  # [(subscript node, `.data` node, stamp)]: `loss.data[0]`
        self._saved: list = []  # [(stamp: function and its analysis, tick, code of what was saved, origins of the graph that saved it)]
        self._backwards: list = []  # [(function, tick, origins)]
        self._owners: dict = {}  # loop variable over `m.parameters()` -> (function, code of m)
        self._bound: dict = {}  # Name node -> its Binding where it was read (a call's argument)
        self._in_forward: dict = {}  # `.data` read with grad on in a module's forward() -> that forward
        self._handed: dict = {}  # ClassInfo -> its methods it hands out as callables (run as part of a forward)
        self._via: dict = {}  # a helper a forward computes with -> (its caller, the call)

    def visit_Name(self, node: cst.Name) -> None:
        b = self.flow.lookup(node.value)
        if b is not None:
            self._bound[node] = b

    # ------------------------------------------------------------ what runs when
    def visit_For(self, node: cst.For) -> None:
        it = node.iter
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in (
                "parameters", "named_parameters"):
            target = node.target
            if isinstance(target, cst.Tuple) and len(target.elements) == 2:
                target = target.elements[1].value
            if isinstance(target, cst.Name):
                self._owners[target.value] = (self.flow.function, self.code_of(it.func.value))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._tick += 1
        if isinstance(node.operator, (cst.Multiply, cst.MatrixMultiply, cst.Divide)):
            self._saving_inputs(node, [node.left, node.right])

    def visit_Call(self, node: cst.Call) -> None:
        self._tick += 1
        func = node.func
        backwards = self.flow.backwards
        if backwards and backwards[-1].node is node:
            self._backwards.append((self.stamp(), self._tick, backwards[-1].origins))
            return
        result = self.flow.value(node)
        callee = self.flow.value(func)
        if callee.kind is Kind.MODULE and callee.parameterized and result.has_graph:
            # a layer's forward saves its weight (a linear layer keeps it for grad_input) - not every
            # parameter of a whole model (`self.flava(...)` says nothing about `self.flava.logit_scale`)
            for param in ("weight", "bias"):
                self._saved.append((self.stamp(), self._tick, f"{self.code_of(func)}.{param}", result.origins))
            return
        name = (dotted(func) or "").rsplit(".", 1)[-1] if isinstance(func, (cst.Name, cst.Attribute)) else ""
        if name in K.INPUT_SAVING:
            operands = [a.value for a in node.args if a.keyword is None]
            if isinstance(func, cst.Attribute) and self.flow.value(func.value).kind is Kind.TENSOR:
                operands.append(func.value)
            self._saving_inputs(node, operands)
        if isinstance(func, cst.Attribute) and K.is_inplace_method(func.attr.value):
            if _is_data(func.value):
                self._write_at(func.value)
            else:  # through the `.data` alias itself, however it came here (`as_pair(p.data)[0].clamp_()`)
                alias = self.flow.value(func.value).alias
                if alias is not None and alias.how == "data" and _is_data(alias.node):
                    self._write_at(alias.node)

    def _saving_inputs(self, op, operands) -> None:
        result = self.flow.value(op)
        if result.has_graph:
            for operand in operands:
                if isinstance(operand, (cst.Name, cst.Attribute, cst.Subscript)):
                    self._saved.append((self.stamp(), self._tick, self.code_of(operand), result.origins))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "data":
            v = self.flow.value(node.value)
            # Only tensors that require grad: `.data` of a buffer or of `.grad` bypasses nothing.
            required = v.kind is Kind.TENSOR and v.grad is Grad.YES
            fn = self.flow.function
            owner = self._forward_of(fn) if fn is not None else None
            if owner is not None and not _static(fn.node) and self.flow.frame.mode is GradMode.ON and (
                    required or v.grad is not Grad.NO and owner.cls.parameterized and self._input(node.value, fn)):
                # (forward()'s input, or what it computed from it, in a module with weights of its own: an
                # activation of the layers before it, whatever the analysis was given - a loss's or a
                # metric's may be a target)
                self._in_forward[node] = (fn, required)
            if required or node in self._in_forward:
                self._reads.append((node, self.flow.statement, self.flow.frame.mode, self.stamp()))
        elif _is_data(node.value) and node.attr.value in META:
            self._meta.add(node.value)  # p.data.shape: metadata, no alias handed out

    def _forward_of(self, fn, depth: int = 0):
        """The method of a module whose computation `fn` runs in: `fn` itself when it is one (see
        `_runs_forward`), or that of the function whose call `fn` was analysed for, when what the
        call returns feeds what that function returns (a helper the forward computes with)."""
        if fn.cls is not None and fn.cls.module_like and self._runs_forward(fn):
            return fn
        if depth >= 3 or fn.walked_at is None:
            return None
        call, caller = fn.walked_at
        if caller is None or _returned_from(caller.node, call, self._passing, self.flow.handed_on) is None:
            return None
        owner = self._forward_of(caller, depth + 1)
        if owner is not None:
            self._via[fn] = (caller, call)
        return owner

    def _runs_forward(self, fn) -> bool:
        """`forward()`, or a method of the module the module hands out as a callable - to
        `functools.partial`, a layer it builds, a hook it registers (`partial(self._shortcut, planes=p)`
        given as a block's `downsample`): PyTorch or that layer runs it as part of the computation."""
        if fn.name == "forward":
            return True
        cls = fn.cls
        if cls not in self._handed:
            self._handed[cls] = handed_out_methods(cls.node, set(cls.methods))
        return fn.name in self._handed[cls]

    def _input(self, node: cst.BaseExpression, fn) -> bool:
        """Is `node` forward()'s own input, a name bound to it (`short = x`), or a name that holds
        what differentiable steps computed from the inputs (`out = F.avg_pool3d(x, 1, stride)`)?"""
        if self._own_input(node, fn):
            return True
        if not isinstance(node, cst.Name) or self.flow.statement is None:
            return False
        params = set(named_params(fn.node)) - {"self"}
        return node.value in _carried_at(fn.node, params, self.flow.statement, self._passing, self.flow.handed_on)

    def _own_input(self, node: cst.BaseExpression, fn) -> bool:
        params = named_params(fn.node)
        for _ in range(4):
            b = self.flow.lookup(node.value) if isinstance(node, cst.Name) else None
            if b is None or not isinstance(b.node, (cst.Name, cst.Param)):
                return False
            if isinstance(b.node, cst.Param):
                return b.node is params.get(node.value)
            node = b.node
        return False

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """`x.data[0]` on any expression the engine knows is 0-dim (`loss`, `losses["g"]`,
        `out[i].sum()`, `step(...)[0]`)."""
        if _is_data(node.value) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            base = self.flow.value(node.value.value)
            if _literal_index(node.slice[0].slice.value) in ZERO_DIM and base.kind is Kind.TENSOR and base.scalar:
                self._indexed.append((node, node.value, self.stamp()))

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if _is_data(node.target):
            self._write_at(node.target)

    def leave_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Subscript) and _is_data(t.target.value):
                self._write_at(t.target.value)

    def _write_at(self, data: cst.Attribute) -> None:
        """A write through `data` now; if the tensor is the output of an op that saved it
        (`probs = torch.sigmoid(z)`), or a view of one (`torch.sigmoid(z).squeeze(-1)` shares
        its storage), the origins of that graph."""
        own, owner = None, self.flow.function
        base = data.value
        if isinstance(base, cst.Name):
            b = self.flow.lookup(base.value)
            v = self.flow.value(base)
            # a helper's parameter: the tensor its caller gave at the call the helper was walked for
            # (`def clamp(p): p.data.clamp_(...)` called as `clamp(p)` in a forward), up the calls
            while b is not None and isinstance(b.node, cst.Param) and owner is not None and owner.walked_at is not None:
                arg, owner = owner.passed(b.node.name.value) or (None, owner.walked_at[1])
                b = self._bound.get(arg) if isinstance(arg, cst.Name) else None
            rhs = _through_views(b.node) if b is not None else None
            if isinstance(rhs, cst.Call) and (dotted(rhs.func) or "").rsplit(".", 1)[-1] in K.OUTPUT_SAVING and v.has_graph:
                own = v.origins
        self._writes[data] = (self._tick, own, self.flow.statement, owner if own is not None else self.flow.function)

    # ----------------------------------------------------------------- findings
    def finish(self) -> None:
        indexed = set()
        for node, data, stamp in self._indexed:
            if self.current(stamp):
                indexed.add(data)
                self._zero_dim(node, data)
        for node, stmt, mode, stamp in self._reads:
            if not self.current(stamp) or node in indexed:
                continue
            base = short(self.code_of(node.value))
            if node in self._writes:
                self._write(node, stmt, mode, base, stamp)
            elif node in self._meta:
                continue
            elif self._cuts_forward(node) or node in self._in_forward and not self._in_forward[node][1]:
                continue  # (an input not known to require grad: a read hands out nothing that matters)
            else:
                new = method_chain(node.value, "detach")
                self.report(
                    node,
                    f"`{base}.data` hands out `{base}`'s storage behind autograd's back: writes through it are never "
                    f"detected; use `{base}.detach()`",
                    fixes=[PendingFix(f"Use `{short(self.code_of(new))}`", Safety.SAFE, [(node, new)])],
                )

    def _cuts_forward(self, node: cst.Attribute) -> bool:
        """`.data` read in forward() feeding what forward() returns (`torch.cat([x.data, pads], 1)` as a
        residual shortcut, `F.conv2d(x, self.weight.data)`): reported (as a warning) when it is, since no
        gradient passes it. A graph cut from every output is GG301's (a submodule that never learns)."""
        fn = self._in_forward.get(node, (None,))[0]
        if fn is None:
            return False
        base = self.flow.value(node.value)
        if base.has_graph and not all_origins(base) & all_origins(fn.returns):
            return False
        returned = _returned_from(fn.node, node, self._passing, self.flow.handed_on)
        if returned is None:
            return False
        via = self._via.get(fn) if fn.cls is None or not fn.cls.module_like or not self._runs_forward(fn) else None
        if via is not None and isinstance(returned.value, (cst.Tuple, cst.List)):
            return False  # a helper's tuple: which item its caller hands on is not followed (d2l's batch_norm()
            # returns the moving statistics through `.data` for the forward to keep, and `Y` for it to return)
        name = short(self.code_of(node.value))
        new = method_chain(node.value, "detach")

        handed = self._handed.get(fn.cls, {}).get(fn.name) if fn.name != "forward" else None

        def message(line_of):
            if via is not None:
                where = f"`{fn.name}()`, whose result `{via[0].name}()` returns (line {line_of(via[1])}),"
            elif handed is not None:
                where = f"`{fn.name}()`, which the module hands out to run in its forward (line {line_of(handed)}),"
            else:
                where = "`forward()`"
            return (
                f"`{name}.data` in {where} feeds what it returns (line {line_of(returned)}) without a graph: the "
                f"backward sends nothing to `{name}` along this path, silently; use `{name}`, or `{name}.detach()` "
                "where the cut is meant"
            )

        self.report(node, message, severity=Severity.WARNING, related=[(returned, "returned here")],
                    fixes=[PendingFix(f"Keep the cut, explicitly: `{short(self.code_of(new))}`", Safety.UNSAFE,
                                      [(node, new)])])
        return True

    def _passing(self, call: cst.Call) -> list:
        """The arguments whose graph `call` passes on: all of them for a module, a torch function (not a
        constructor copying its data) or a function of this file; only the input of a recurrent layer
        (a state cut before it is truncated backpropagation, GG102's subject); none for anything else.
        (A helper of another file may turn it into NumPy: LPIPS's `util.tensor2im(in0.data)`.
        `Variable(h.data)` was the way to detach before torch 0.4: the cut is meant.)"""
        v = self.flow.value(call.func)
        if v.kind is Kind.MODULE and v.layer in _RECURRENT:
            return list(call.args[:1])
        if v.kind in (Kind.MODULE, Kind.FUNCTION):
            return list(call.args)
        q = v.qualname or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.") and not last[:1].isupper() and last not in ("tensor", "as_tensor", "from_numpy"):
            return list(call.args)
        return []

    def _zero_dim(self, node: cst.Subscript, data: cst.Attribute) -> None:
        base = short(self.code_of(data.value))
        item = method_chain(data.value, "item")
        raised = ZERO_DIM[_literal_index(node.slice[0].slice.value)]
        self.report(
            node,
            f"`{base}` is a 0-dim tensor: `.data{self.code_of(node.slice[0]).join('[]')}` on it raises IndexError "
            f"(\"{raised}\") on every torch since 0.5; use `.item()`",
            fixes=[PendingFix(f"Use `{short(self.code_of(item))}`", Safety.SAFE, [(node, item)])],
            severity=Severity.ERROR,
        )

    def _corrupts(self, node: cst.Attribute, stamp) -> bool:
        """Was the written tensor saved for backward before the write, by a graph that is
        back-propagated after it (or handed to the caller of a model's forward)?"""
        fn, (tick, own, _, owner) = stamp[0], self._writes[node]
        base = node.value
        names = _prefixes(self, base)
        if isinstance(base, cst.Name) and base.value in self._owners and self._owners[base.value][0] is fn:
            names.add(self._owners[base.value][1])
        saved = [origins for f, t, code, origins in self._saved if f == stamp and t < tick and code in names]
        if own is not None:
            saved.append(own)
        if not saved:
            return False
        if owner is not None and (forward_code(owner) or owner.cls is not None and owner.cls.module_like):
            return True  # the model's caller back-propagates what forward returns (a helper's write: the forward's)
        return any(f == stamp and t > tick and origins & o for f, t, origins in self._backwards for o in saved)

    def _write(self, node: cst.Attribute, stmt, mode, base: str, stamp) -> None:
        fixes = []
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if small is not None and self._writes[node][2] is stmt and not has_multiline_string(self.code_of(stmt)):
            # (the write in the statement that reads `.data`: the one to drop `.data` from and wrap)
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
        if self._corrupts(node, stamp):
            message = (f"in-place write through `{base}.data` after `{base}` was saved for backward: autograd never "
                       "sees it, and the backward that follows computes silently wrong gradients")
            severity = Severity.WARNING
        else:
            message = (f"in-place write through `{base}.data` is invisible to autograd: if `{base}` was saved for "
                       "backward, its gradients become silently wrong")
            severity = Severity.INFO
        self.report(node, message, fixes=fixes, severity=severity)

    VALID = [
        Valid(
            """
import torch
from torch import nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.stats = []
        self.fc.register_forward_hook(self._record)

    def _record(self, module, inputs, output):
        self.stats.append(output.data.abs().mean())

    def forward(self, x):
        return self.fc(x).relu()
""",
            runtime="probe = Probe()\nprobe(torch.randn(2, 4)).sum().backward()\n"
            "assert probe.fc.weight.grad is not None and len(probe.stats) == 1",
            note="issue 29: a forward hook the module hands out reads `.data` for statistics and returns nothing: "
            "the forward's output keeps its graph (info only)",
        ),
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
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class ClickModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, x):
        p = torch.sigmoid(self.linear(x)).squeeze(-1)
        return p.clamp(0.05, 0.95)


model = ClickModel()
x, y = torch.randn(8, 3) * 4, torch.rand(8)
F.binary_cross_entropy(model(x), y).backward()
""",
            note='the clamp as an op autograd sees: the gradient of what the forward computed',
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Linear(4, 3)
scores = model(torch.randn(8, 4)).detach()
stats = {"first": scores.sum(0)}
print(scores.data[0], stats["first"].data[0])
""",
            note="`.data[0]` on 1-d tensors without a graph (a detached batch, a dict item): a row and an element, no error",
            runtime="assert scores.data[0].shape == (3,) and stats['first'].data[0].dim() == 0",
        ),
        Valid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def keep_finite(p):
    return p.clamp(1e-4, 1 - 1e-4)


class ClickModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, x):
        p = torch.sigmoid(self.linear(x)).squeeze(-1)
        p = keep_finite(p)
        return p
""",
            note="the same helper clamping out of place: a new tensor, the sigmoid's saved output untouched",
            runtime="model = ClickModel()\nF.binary_cross_entropy(model(torch.randn(6, 3)), torch.rand(6)).backward()\n"
                    "assert torch.isfinite(model.linear.weight.grad).all()",
        ),
        Valid(
            """
import torch
from torch import nn


class Normalizer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.register_buffer("running", torch.zeros(dim))

    def forward(self, x):
        n = x.data.size(0)
        mask = (x.data > 0).float()
        pad = x.data.new_zeros(n, 1)
        self.running.copy_(x.data.mean(0))
        with torch.no_grad():
            self.running.mul_(0.9).add_(0.1 * x.data.mean(0))
        return torch.cat([self.fc(x) * mask, pad], 1)
""",
            note="issue 29: `.data` in forward() only for what has no gradient - a size, a mask, a new tensor's "
            "shape, a statistic copied into a buffer (also under no_grad)",
            runtime="norm = Normalizer(3)\nx = torch.randn(4, 3, requires_grad=True)\nnorm(x).sum().backward()\n"
            "assert norm.fc.weight.grad is not None and x.grad is not None",
        ),
        Valid(
            """
import torch


class Clip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x.data.clamp(-1, 1)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad
""",
            note="issue 29: an autograd.Function's forward() runs without grad; its own backward() says what passes",
            runtime="x = torch.randn(3, requires_grad=True)\nClip.apply(x).sum().backward()\nassert torch.equal(x.grad, torch.ones(3))",
        ),
        Valid(
            """
import torch
from torch import nn

from colors import lab_distance


class Perceptual(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, 3, 1)

    def forward(self, x, ref):
        value = lab_distance(x.data, ref.data)
        scale = self.proj.weight.type(type(x.data))
        return torch.tensor([value]) * scale.sum()
""",
            note="issue 29: `.data` in forward() handed to a helper of another file (LPIPS's `util.tensor2im`, "
            "which makes NumPy of it) or to `type()`: the `.data` is not what ends the gradient",
        ),
        Valid(
            """
import torch
from torch import nn


class SMAPE(nn.Module):
    def forward(self, forecast, target, mask):
        return 200 * torch.mean(torch.abs(forecast - target) / (forecast.data.abs() + target.data.abs()) * mask)
""",
            note="issue 29: a loss module without weights: its inputs may be targets, and N-BEATS' sMAPE stops the "
            "gradient through its denominator on purpose",
            runtime="f = torch.rand(4, requires_grad=True)\nSMAPE()(f, torch.rand(4), torch.ones(4)).backward()\n"
            "assert f.grad is not None",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.autograd import Variable


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 8)
        self.fc = nn.Linear(8, 2)

    def forward(self, x, hidden, cell):
        hidden = hidden.data
        out, hidden = self.rnn(x, hidden)
        return self.fc(out), hidden, Variable(cell.data)
""",
            note="issue 29: a recurrent state cut as it enters the layer (truncated backpropagation, GG102's "
            "subject), and `Variable(h.data)`, the way to detach before torch 0.4: the cut is meant",
            runtime="tagger = Tagger()\nout, h, c = tagger(torch.randn(3, 1, 4), torch.zeros(1, 1, 8), torch.zeros(1))\n"
            "out.sum().backward()\nassert tagger.rnn.weight_ih_l0.grad is not None",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def pad_channels(x, extra):
    pads = torch.zeros(x.size(0), extra, x.size(2), x.size(3))
    return torch.cat([x.data, pads], 1)


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.extra = cout - cin

    def forward(self, x):
        return F.relu(self.conv(x) + pad_channels(x, self.extra))
""",
            range=(9, 22, 9, 28),
            message="`x.data` in `pad_channels()`, whose result `forward()` returns (line 19), feeds what it returns "
            "(line 9) without a graph: the backward sends nothing to `x` along this path, silently; use `x`, or "
            "`x.detach()` where the cut is meant",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "def pad_channels(x, extra):\n    pads = torch.zeros(x.size(0), extra, x.size(2), x.size(3))\n"
                "    return torch.cat([x.detach(), pads], 1)\n\n\n"
                "class Block(nn.Module):\n    def __init__(self, cin, cout):\n        super().__init__()\n"
                "        self.conv = nn.Conv2d(cin, cout, 3, padding=1)\n        self.extra = cout - cin\n\n"
                "    def forward(self, x):\n        return F.relu(self.conv(x) + pad_channels(x, self.extra))\n",
            ),
            runtime="block = Block(2, 4)\nx = torch.randn(1, 2, 5, 5, requires_grad=True)\nblock(x).sum().backward()\n"
            "x2 = x.detach().requires_grad_()\n"
            "F.relu(block.conv(x2) + torch.cat([x2, torch.zeros(1, 2, 5, 5)], 1)).sum().backward()\n"
            "assert not torch.allclose(x.grad, x2.grad)",
            note="issue 33: the shortcut in a helper function the forward computes with (extracted from forward())",
        ),
        Invalid(
            """
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, cin, cout, shortcut):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1)
        self.shortcut = shortcut

    def forward(self, x):
        return F.relu(self.conv(x) + self.shortcut(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 2, 3, padding=1)
        self.block = Block(2, 4, partial(self._pad_shortcut, planes=4))

    def _pad_shortcut(self, x, planes):
        out = F.avg_pool2d(x, 1, stride=2)
        pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3))
        return torch.cat([out.data, pads], 1)

    def forward(self, x):
        return self.block(self.stem(x)).mean()
""",
            range=(28, 26, 28, 34),
            message="`out.data` in `_pad_shortcut()`, which the module hands out to run in its forward (line 23), feeds "
            "what it returns (line 28) without a graph: the backward sends nothing to `out` along this path, silently; "
            "use `out`, or `out.detach()` where the cut is meant",
            severity=Severity.WARNING,
            fixes=(
                "\nfrom functools import partial\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "class Block(nn.Module):\n    def __init__(self, cin, cout, shortcut):\n        super().__init__()\n"
                "        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1)\n        self.shortcut = shortcut\n\n"
                "    def forward(self, x):\n        return F.relu(self.conv(x) + self.shortcut(x))\n\n\n"
                "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.stem = nn.Conv2d(1, 2, 3, padding=1)\n"
                "        self.block = Block(2, 4, partial(self._pad_shortcut, planes=4))\n\n"
                "    def _pad_shortcut(self, x, planes):\n        out = F.avg_pool2d(x, 1, stride=2)\n"
                "        pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3))\n"
                "        return torch.cat([out.detach(), pads], 1)\n\n"
                "    def forward(self, x):\n        return self.block(self.stem(x)).mean()\n",
            ),
            # the stem's gradient comes only through the block's convolution, not through the shortcut
            runtime="net = Net()\nx = torch.randn(1, 1, 4, 4)\nnet(x).backward()\ncut = net.stem.weight.grad.clone()\n"
            "net.zero_grad()\nnet.block.shortcut = lambda h: torch.cat([F.avg_pool2d(h, 1, stride=2), "
            "torch.zeros(1, 2, 2, 2)], 1)\nnet(x).backward()\nassert not torch.allclose(cut, net.stem.weight.grad)",
            note="issue 29: 3D-ResNets' type-A shortcut, a method of the model given to each block through "
            "`functools.partial`: it runs inside the block's forward, and `.data` of what it computed from its input "
            "cuts the identity path",
        ),
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
            message="in-place write through `w.data` after `w` was saved for backward: autograd never sees "
            "it, and the backward that follows computes silently wrong gradients",
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
            message="in-place write through `layer.weight.data` after `layer.weight` was saved for backward: autograd never sees "
            "it, and the backward that follows computes silently wrong gradients",
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
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train_step(model, x, target, optimizer):
    probs = torch.sigmoid(model(x))
    probs.data.clamp_(0.05, 0.95)  # keep the log away from 0
    loss = F.binary_cross_entropy(probs, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
x, target = 4 * torch.randn(8, 3), torch.ones(8, 1)
train_step(model, x, target, optimizer)
""",
            range=(9, 4, 9, 14),
            message='in-place write through `probs.data` after `probs` was saved for backward: autograd never sees it, and the backward that follows computes silently wrong gradients',
            fixes=(
                """
import torch
import torch.nn.functional as F
from torch import nn


def train_step(model, x, target, optimizer):
    probs = torch.sigmoid(model(x))
    with torch.no_grad():
        probs.clamp_(0.05, 0.95)  # keep the log away from 0
    loss = F.binary_cross_entropy(probs, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
x, target = 4 * torch.randn(8, 3), torch.ones(8, 1)
train_step(model, x, target, optimizer)
""",
            ),
            severity=Severity.WARNING,
            note="sigmoid saved its output; the clamp through .data changes it before backward: the gradient uses values the forward never produced",
            runtime="ref = nn.Linear(3, 1)\nref.load_state_dict(model.state_dict())\nF.binary_cross_entropy(torch.sigmoid(ref(x)).clamp(0.05, 0.95), target).backward()\nassert not torch.allclose(model.weight.grad, ref.weight.grad)",
        ),
        Invalid(
            """
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        g = torch.tanh(self.fc(x))
        g.data.mul_(0.5)  # damp the gate
        return g * x


gate = Gate()
x = torch.randn(2, 4)
gate(x).sum().backward()
""",
            range=(13, 8, 13, 14),
            message='in-place write through `g.data` after `g` was saved for backward: autograd never sees it, and the backward that follows computes silently wrong gradients',
            fixes=(
                """
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        g = torch.tanh(self.fc(x))
        with torch.no_grad():
            g.mul_(0.5)  # damp the gate
        return g * x


gate = Gate()
x = torch.randn(2, 4)
gate(x).sum().backward()
""",
            ),
            severity=Severity.WARNING,
            note="inside a model's forward: its caller back-propagates",
            runtime="ref = Gate()\nref.load_state_dict(gate.state_dict())\n(0.5 * torch.tanh(ref.fc(x)) * x).sum().backward()\nassert not torch.allclose(gate.fc.weight.grad, ref.fc.weight.grad)",
        ),
        Invalid(
            """
import torch
from torch import nn


def train(model, criterion, batches, optimizer):
    total = 0.0
    for x, y in batches:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.data[0]
    return total / len(batches)


model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train(model, nn.CrossEntropyLoss(), [(torch.randn(8, 4), torch.randint(0, 2, (8,)))], optimizer)
""",
            range=(13, 17, 13, 29),
            message='`loss` is a 0-dim tensor: `.data[0]` on it raises IndexError ("invalid index of a 0-dim tensor") on every torch since 0.5; use `.item()`',
            fixes=(
                """
import torch
from torch import nn


def train(model, criterion, batches, optimizer):
    total = 0.0
    for x, y in batches:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(batches)


model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train(model, nn.CrossEntropyLoss(), [(torch.randn(8, 4), torch.randint(0, 2, (8,)))], optimizer)
""",
            ),
            severity=Severity.ERROR,
            note="old tutorials' `loss.data[0]`: a loss is 0-dim since torch 0.5",
            raises="invalid index of a 0-dim tensor",
        ),
        Invalid(
            """
import torch
from torch import nn


def soft_update(target, source, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(tau * param.detach() + (1.0 - tau) * target_param.detach())


critic, critic_target = nn.Linear(4, 1), nn.Linear(4, 1)
optimizer = torch.optim.Adam(critic.parameters())
state = torch.randn(8, 4)
loss = (critic(state) - critic_target(state).detach()).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
soft_update(critic_target, critic, 0.005)
""",
            range=(8, 8, 8, 25),
            message='in-place write through `target_param.data` is invisible to autograd: if `target_param` was saved for backward, its gradients become silently wrong',
            fixes=(
                """
import torch
from torch import nn


def soft_update(target, source, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        with torch.no_grad():
            target_param.copy_(tau * param.detach() + (1.0 - tau) * target_param.detach())


critic, critic_target = nn.Linear(4, 1), nn.Linear(4, 1)
optimizer = torch.optim.Adam(critic.parameters())
state = torch.randn(8, 4)
loss = (critic(state) - critic_target(state).detach()).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
soft_update(critic_target, critic, 0.005)
""",
            ),
            note="Polyak target update after step(): the sanctioned idiom is info, not a warning",
            runtime="assert critic_target.weight.grad is None",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
for step in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = (model(x) - y).pow(2).mean()
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= 0.1 * p.grad.data
""",
            range=(12, 8, 12, 14),
            message='in-place write through `p.data` is invisible to autograd: if `p` was saved for backward, its gradients become silently wrong',
            fixes=(
                """
import torch
from torch import nn

model = nn.Linear(4, 1)
for step in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = (model(x) - y).pow(2).mean()
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        with torch.no_grad():
            p -= 0.1 * p.grad.data
""",
            ),
            note="manual SGD after backward(): nothing saved the parameters any more (info)",
            runtime="assert model.weight.grad is not None",
        ),
        Invalid(
            """
import torch
from torch import nn

critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
for step in range(3):
    real, fake = torch.randn(8, 4), torch.randn(8, 4)
    loss = critic(fake).mean() - critic(real).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for p in critic.parameters():
        p.data.clamp_(-0.01, 0.01)
""",
            range=(14, 8, 14, 14),
            message='in-place write through `p.data` is invisible to autograd: if `p` was saved for backward, its gradients become silently wrong',
            fixes=(
                """
import torch
from torch import nn

critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
for step in range(3):
    real, fake = torch.randn(8, 4), torch.randn(8, 4)
    loss = critic(fake).mean() - critic(real).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for p in critic.parameters():
        with torch.no_grad():
            p.clamp_(-0.01, 0.01)
""",
            ),
            note="WGAN weight clipping after step(), before the next forward (info)",
            runtime="assert critic[0].weight.abs().max().item() <= 0.01",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class ClickModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, x):
        p = torch.sigmoid(self.linear(x)).squeeze(-1)
        p.data.clamp_(0.05, 0.95)
        return p


model = ClickModel()
x, y = torch.randn(8, 3) * 4, torch.rand(8)
F.binary_cross_entropy(model(x), y).backward()
""",
            range=(14, 8, 14, 14),
            message='in-place write through `p.data` after `p` was saved for backward: autograd never sees it, and the backward that follows computes silently wrong gradients',
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass ClickModel(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.linear = nn.Linear(3, 1)\n\n    def forward(self, x):\n        p = torch.sigmoid(self.linear(x)).squeeze(-1)\n        with torch.no_grad():\n            p.clamp_(0.05, 0.95)\n        return p\n\n\nmodel = ClickModel()\nx, y = torch.randn(8, 3) * 4, torch.rand(8)\nF.binary_cross_entropy(model(x), y).backward()\n',
            ),
            runtime='ref = nn.Linear(3, 1)\nref.load_state_dict(model.linear.state_dict())\nF.binary_cross_entropy(torch.sigmoid(ref(x)).squeeze(-1).clamp(0.05, 0.95), y).backward()\nassert not torch.allclose(model.linear.weight.grad, ref.weight.grad)',
            note="a view of sigmoid's output (`.squeeze(-1)` shares its storage) clamped through .data in forward (pytorch#6990)",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def train_generator(G, D, z, g_opt):
    fake = G(z)
    losses = {"g": F.binary_cross_entropy_with_logits(D(fake), torch.ones(len(z), 1))}
    g_opt.zero_grad()
    losses["g"].backward()
    g_opt.step()
    return losses["g"].data[0]


G, D = nn.Linear(2, 4), nn.Linear(4, 1)
train_generator(G, D, torch.randn(8, 2), torch.optim.SGD(G.parameters(), lr=0.1))
""",
            range=(13, 11, 13, 30),
            message='`losses["g"]` is a 0-dim tensor: `.data[0]` on it raises IndexError ("invalid index of a 0-dim tensor") on every torch since 0.5; use `.item()`',
            fixes=(
                """
import torch
import torch.nn.functional as F
from torch import nn


def train_generator(G, D, z, g_opt):
    fake = G(z)
    losses = {"g": F.binary_cross_entropy_with_logits(D(fake), torch.ones(len(z), 1))}
    g_opt.zero_grad()
    losses["g"].backward()
    g_opt.step()
    return losses["g"].item()


G, D = nn.Linear(2, 4), nn.Linear(4, 1)
train_generator(G, D, torch.randn(8, 2), torch.optim.SGD(G.parameters(), lr=0.1))
""",
            ),
            severity=Severity.ERROR,
            note="a loss reached through a dict (a GAN's generator step): 0-dim however it is reached",
            raises="invalid index of a 0-dim tensor",
        ),
        Invalid(
            """
import torch
from torch import nn


def reconstruction_errors(autoencoder, batch):
    out = autoencoder(batch)
    return [(out[i] - batch[i]).pow(2).sum().data[0] for i in range(len(batch))]


autoencoder = nn.Sequential(nn.Linear(6, 2), nn.Linear(2, 6))
reconstruction_errors(autoencoder, torch.randn(4, 6))
""",
            range=(8, 12, 8, 52),
            message='`(out[i] - batch[i]).pow(2).sum()` is a 0-dim tensor: `.data[0]` on it raises IndexError ("invalid index of a 0-dim tensor") on every torch since 0.5; use `.item()`',
            fixes=(
                """
import torch
from torch import nn


def reconstruction_errors(autoencoder, batch):
    out = autoencoder(batch)
    return [(out[i] - batch[i]).pow(2).sum().item() for i in range(len(batch))]


autoencoder = nn.Sequential(nn.Linear(6, 2), nn.Linear(2, 6))
reconstruction_errors(autoencoder, torch.randn(4, 6))
""",
            ),
            severity=Severity.ERROR,
            note="a full reduction of one sample's error: `.sum()` without a dim is 0-dim",
            raises="invalid index of a 0-dim tensor",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def step(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits, y), (logits.argmax(1) == y).float().mean()


model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]:
    result = step(model, x, y)
    optimizer.zero_grad()
    result[0].backward()
    optimizer.step()
    print("loss %.3f" % result[0].data[0])
""",
            range=(19, 24, 19, 41),
            message='`result[0]` is a 0-dim tensor: `.data[0]` on it raises IndexError ("invalid index of a 0-dim tensor") on every torch since 0.5; use `.item()`',
            fixes=(
                """
import torch
import torch.nn.functional as F
from torch import nn


def step(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits, y), (logits.argmax(1) == y).float().mean()


model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]:
    result = step(model, x, y)
    optimizer.zero_grad()
    result[0].backward()
    optimizer.step()
    print("loss %.3f" % result[0].item())
""",
            ),
            severity=Severity.ERROR,
            note="the loss is the first item of the tuple a function of the file returns",
            raises="invalid index of a 0-dim tensor",
        ),
        Invalid(
            """
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = (model(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step %d: %.4f" % (step, loss.data[-1]))
""",
            range=(13, 35, 13, 48),
            message='`loss` is a 0-dim tensor: `.data[-1]` on it raises IndexError ("index -1 is out of bounds for dimension 0 with size 0") on every torch since 0.5; use `.item()`',
            fixes=(
                """
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = (model(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step %d: %.4f" % (step, loss.item()))
""",
            ),
            severity=Severity.ERROR,
            note="`[-1]`, the last (and only) element of a loss before torch 0.4",
            raises="index -1 is out of bounds for dimension 0 with size 0",
        ),
        Invalid(
            """
import torch

w = torch.ones(3, requires_grad=True)
y = (w * w).sum()
view = w.data
view.mul_(2)  # rescale
y.backward()
""",
            range=(6, 7, 6, 13),
            message="in-place write through `w.data` after `w` was saved for backward: autograd never sees it, "
            "and the backward that follows computes silently wrong gradients",
            severity=Severity.WARNING,
            note="the `.data` alias kept in a name and written in place later: the same unseen write (no fix: the read and the write are separate statements)",
            runtime="assert w.grad.tolist() == [4.0, 4.0, 4.0]",
        ),
        Invalid(
            """
import torch
from torch import nn


def train(net, criterion, batches, optimizer, history):
    for x, y in batches:
        out = net(x)
        main = criterion(out, y)
        loss = main + 0.001 * out.norm(2)
        history.append(main.data[0])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


net = nn.Linear(4, 2)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
train(net, nn.CrossEntropyLoss(), [(torch.randn(8, 4), torch.randint(0, 2, (8,)))], optimizer, [])
""",
            range=(11, 23, 11, 35),
            message='`main` is a 0-dim tensor: `.data[0]` on it raises IndexError ("invalid index of a 0-dim tensor") on every torch since 0.5; use `.item()`',
            fixes=(
                """
import torch
from torch import nn


def train(net, criterion, batches, optimizer, history):
    for x, y in batches:
        out = net(x)
        main = criterion(out, y)
        loss = main + 0.001 * out.norm(2)
        history.append(main.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


net = nn.Linear(4, 2)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
train(net, nn.CrossEntropyLoss(), [(torch.randn(8, 4), torch.randint(0, 2, (8,)))], optimizer, [])
""",
            ),
            severity=Severity.ERROR,
            note="`loss.backward()` with no gradient proves `loss` 0-dim, and a broadcast sum is 0-dim only when each term is: `main` too, whatever `criterion` is",
            raises="invalid index of a 0-dim tensor",
        ),
        Invalid(
            """
import torch
from torch import nn


def log_norms(net, x, history):
    out = net(x)
    history.append(out.norm(2).data[0])


log_norms(nn.Linear(4, 2), torch.randn(8, 4), [])
""",
            range=(8, 19, 8, 38),
            message='`out.norm(2)` is a 0-dim tensor: `.data[0]` on it raises IndexError ("invalid index of a 0-dim tensor") on every torch since 0.5; use `.item()`',
            fixes=(
                """
import torch
from torch import nn


def log_norms(net, x, history):
    out = net(x)
    history.append(out.norm(2).item())


log_norms(nn.Linear(4, 2), torch.randn(8, 4), [])
""",
            ),
            severity=Severity.ERROR,
            note="`x.norm(2)`: the 2 is the order, not a dim - the norm of every element, 0-dim",
            raises="invalid index of a 0-dim tensor",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


def keep_finite(p):
    p.data.clamp_(1e-4, 1 - 1e-4)


class ClickModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, x):
        p = torch.sigmoid(self.linear(x)).squeeze(-1)
        keep_finite(p)
        return p
""",
            range=(8, 4, 8, 10),
            message='in-place write through `p.data` after `p` was saved for backward: autograd never sees it, and the backward that follows computes silently wrong gradients',
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\ndef keep_finite(p):\n    with torch.no_grad():\n        p.clamp_(1e-4, 1 - 1e-4)\n\n\nclass ClickModel(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.linear = nn.Linear(3, 1)\n\n    def forward(self, x):\n        p = torch.sigmoid(self.linear(x)).squeeze(-1)\n        keep_finite(p)\n        return p\n',
            ),
            note="the sigmoid output is clamped through .data by a helper the forward calls: the output the caller's backward reads was saved by sigmoid, and the write is hidden from autograd",
            runtime='torch.manual_seed(0)\nmodel = ClickModel()\nwith torch.no_grad():\n    model.linear.weight.copy_(torch.tensor([[6.0, -4.0, 2.0]]))\nref = ClickModel()\nref.load_state_dict(model.state_dict())\nx, y = torch.randn(6, 3) * 2, torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])\nF.binary_cross_entropy(model(x), y).backward()\np = torch.sigmoid(ref.linear(x)).squeeze(-1).clamp(1e-4, 1 - 1e-4)\nF.binary_cross_entropy(p, y).backward()\nassert not torch.allclose(model.linear.weight.grad, ref.linear.weight.grad)',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class ShortcutBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.pad = cout - cin

    def forward(self, x):
        out = self.conv(x)
        zero_pads = torch.zeros(x.size(0), self.pad, x.size(2), x.size(3))
        short = torch.cat([x.data, zero_pads], 1)
        return F.relu(out + short)
""",
            range=(16, 27, 16, 33),
            message="`x.data` in `forward()` feeds what it returns (line 17) without a graph: the backward sends "
            "nothing to `x` along this path, silently; use `x`, or `x.detach()` where the cut is meant",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
                "class ShortcutBlock(nn.Module):\n    def __init__(self, cin, cout):\n        super().__init__()\n"
                "        self.conv = nn.Conv2d(cin, cout, 3, padding=1)\n        self.pad = cout - cin\n\n"
                "    def forward(self, x):\n        out = self.conv(x)\n"
                "        zero_pads = torch.zeros(x.size(0), self.pad, x.size(2), x.size(3))\n"
                "        short = torch.cat([x.detach(), zero_pads], 1)\n        return F.relu(out + short)\n",
            ),
            # the input's gradient comes only through the convolution, not through the identity shortcut
            runtime="block = ShortcutBlock(2, 4)\nx = torch.randn(1, 2, 5, 5, requires_grad=True)\n"
            "block(x).sum().backward()\nx2 = x.detach().requires_grad_()\n"
            "F.relu(block.conv(x2) + torch.cat([x2, torch.zeros(1, 2, 5, 5)], 1)).sum().backward()\n"
            "assert not torch.allclose(x.grad, x2.grad)",
            note="issue 29: ResNet's option-A shortcut zero-pads `x.data` (pytorch forum reports): the layers "
            "before the block get only the residual branch's gradient; the fix only makes the cut explicit (unsafe)",
        ),
        Invalid(
            """
import torch.nn.functional as F
from torch import nn


class StdConv2d(nn.Conv2d):
    def forward(self, x):
        w = self.weight.data
        w = (w - w.mean((1, 2, 3), keepdim=True)) / (w.std((1, 2, 3), keepdim=True) + 1e-5)
        return F.conv2d(x, w, self.bias, self.stride, self.padding)
""",
            range=(8, 12, 8, 28),
            message="`self.weight.data` in `forward()` feeds what it returns (line 10) without a graph: the backward "
            "sends nothing to `self.weight` along this path, silently; use `self.weight`, or "
            "`self.weight.detach()` where the cut is meant",
            severity=Severity.WARNING,
            fixes=(
                "\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass StdConv2d(nn.Conv2d):\n"
                "    def forward(self, x):\n        w = self.weight.detach()\n"
                "        w = (w - w.mean((1, 2, 3), keepdim=True)) / (w.std((1, 2, 3), keepdim=True) + 1e-5)\n"
                "        return F.conv2d(x, w, self.bias, self.stride, self.padding)\n",
            ),
            runtime="import torch\nconv = StdConv2d(2, 3, 3)\nconv(torch.randn(1, 2, 5, 5)).sum().backward()\n"
            "assert conv.weight.grad is None and conv.bias.grad is not None",
            note="issue 29: weight standardisation through `.data`: the weight never learns, the bias does",
        ),
        Invalid(
            """
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


class Record:
    def __init__(self, **fields):
        self.fields = fields


class Block(nn.Module):
    def __init__(self, cin, cout, shortcut):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1)
        self.shortcut = shortcut

    def forward(self, x):
        return F.relu(self.conv(x) + self.shortcut(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 2, 3, padding=1)
        self.block = Block(2, 4, partial(self._pad_shortcut, planes=4))

    def _pad_shortcut(self, x, planes):
        out = F.avg_pool2d(x, 1, stride=2)
        pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3))
        return torch.cat(Record(parts=[out.data, pads]).fields["parts"], 1)

    def forward(self, x):
        return self.block(self.stem(x)).mean()
""",
            range=(33, 39, 33, 47),
            message='`out.data` in `_pad_shortcut()`, which the module hands out to run in its forward (line 28), feeds what it returns (line 33) without a graph: the backward sends nothing to `out` along this path, silently; use `out`, or `out.detach()` where the cut is meant',
            severity=Severity.WARNING,
            fixes=('\nfrom functools import partial\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Record:\n    def __init__(self, **fields):\n        self.fields = fields\n\n\nclass Block(nn.Module):\n    def __init__(self, cin, cout, shortcut):\n        super().__init__()\n        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1)\n        self.shortcut = shortcut\n\n    def forward(self, x):\n        return F.relu(self.conv(x) + self.shortcut(x))\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.stem = nn.Conv2d(1, 2, 3, padding=1)\n        self.block = Block(2, 4, partial(self._pad_shortcut, planes=4))\n\n    def _pad_shortcut(self, x, planes):\n        out = F.avg_pool2d(x, 1, stride=2)\n        pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3))\n        return torch.cat(Record(parts=[out.detach(), pads]).fields["parts"], 1)\n\n    def forward(self, x):\n        return self.block(self.stem(x)).mean()\n',),
            note='the same type-A shortcut with its parts routed through an object of the file (`Record(parts=[out.data, pads]).fields["parts"]`, which `__init__` keeps as given): `torch.cat` still concatenates the cut',
            runtime='net = Net()\nx = torch.randn(1, 1, 4, 4)\nnet(x).backward()\ncut = net.stem.weight.grad.clone()\nnet.zero_grad()\nnet.block.shortcut = lambda h: torch.cat([F.avg_pool2d(h, 1, stride=2), torch.zeros(1, 2, 2, 2)], 1)\nnet(x).backward()\nassert not torch.allclose(cut, net.stem.weight.grad)',
        ),
        Invalid(
            """
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


def as_dict(value):
    return {"parts": value}


class Block(nn.Module):
    def __init__(self, cin, cout, shortcut):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1)
        self.shortcut = shortcut

    def forward(self, x):
        return F.relu(self.conv(x) + self.shortcut(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 2, 3, padding=1)
        self.block = Block(2, 4, partial(self._pad_shortcut, planes=4))

    def _pad_shortcut(self, x, planes):
        out = F.avg_pool2d(x, 1, stride=2)
        pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3))
        for key, parts in as_dict([out.data, pads]).items():
            out = torch.cat(parts, 1)
        return out

    def forward(self, x):
        return self.block(self.stem(x)).mean()
""",
            range=(32, 35, 32, 43),
            message='`out.data` in `_pad_shortcut()`, which the module hands out to run in its forward (line 27), feeds what it returns (line 34) without a graph: the backward sends nothing to `out` along this path, silently; use `out`, or `out.detach()` where the cut is meant',
            severity=Severity.WARNING,
            fixes=('\nfrom functools import partial\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\ndef as_dict(value):\n    return {"parts": value}\n\n\nclass Block(nn.Module):\n    def __init__(self, cin, cout, shortcut):\n        super().__init__()\n        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1)\n        self.shortcut = shortcut\n\n    def forward(self, x):\n        return F.relu(self.conv(x) + self.shortcut(x))\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.stem = nn.Conv2d(1, 2, 3, padding=1)\n        self.block = Block(2, 4, partial(self._pad_shortcut, planes=4))\n\n    def _pad_shortcut(self, x, planes):\n        out = F.avg_pool2d(x, 1, stride=2)\n        pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3))\n        for key, parts in as_dict([out.detach(), pads]).items():\n            out = torch.cat(parts, 1)\n        return out\n\n    def forward(self, x):\n        return self.block(self.stem(x)).mean()\n',),
            note="the same type-A shortcut with its parts read in a loop over a dict a helper builds (`for key, parts in as_dict([out.data, pads]).items():`): the loop's items are what the dict holds",
            runtime='net = Net()\nx = torch.randn(1, 1, 4, 4)\nnet(x).backward()\ncut = net.stem.weight.grad.clone()\nnet.zero_grad()\nnet.block.shortcut = lambda h: torch.cat([F.avg_pool2d(h, 1, stride=2), torch.zeros(1, 2, 2, 2)], 1)\nnet(x).backward()\nassert not torch.allclose(cut, net.stem.weight.grad)',
        ),
    ]


def _static(fn: cst.FunctionDef) -> bool:
    """A @staticmethod forward(): an autograd.Function's, which runs without grad (its backward is its own)."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in fn.decorators)


_RECURRENT = frozenset("RNN LSTM GRU RNNCell LSTMCell GRUCell".split())
# Methods and torch functions whose result takes only the shape, dtype or device of what they are given.
_FRESH = frozenset(
    "new new_zeros new_ones new_full new_empty new_tensor zeros_like ones_like empty_like full_like rand_like "
    "randn_like randint_like".split()
)


def _returned_from(fn: cst.FunctionDef, data: cst.Attribute, passing, handed=None):
    """The `return` whose value `data` reaches through differentiable steps - assignments, arithmetic,
    tensor methods, the arguments `passing(call)` says a call passes on (`torch.cat([x.data, pads])`,
    `self.fc(h)`) - and not through what ends a graph (`.size()`, comparisons, `.argmax()`, an in-place
    write into a buffer, `type(x.data)`), in statement order. (`handed`: the expression whose very
    value an expression is, FlowAnalysis.handed_on: `x` of `Record(out=x).fields["out"]`.)"""
    found = _Carry(data, set(), passing, handed=handed).walk_body(fn.body.body)
    return found if isinstance(found, cst.Return) else None


def _carried_at(fn: cst.FunctionDef, seeds: set, statement: cst.CSTNode, passing, handed=None) -> set:
    """The names that hold what `seeds` (parameters) computed, through the same differentiable steps,
    when `statement` runs (empty if it is not in `fn`'s own body)."""
    carry = _Carry(None, set(seeds), passing, statement, handed)
    found = carry.walk_body(fn.body.body)
    return found if isinstance(found, set) else set()


class _Carry:
    """Names bound, statement by statement, to what a `.data` read (or a function's inputs) reaches."""

    def __init__(self, data, names: set, passing, stop=None, handed=None):
        self.data, self.names, self.passing, self.stop = data, names, passing, stop
        self.handed = handed

    def carries(self, e) -> bool:
        inner = self.handed(e) if self.handed is not None and isinstance(e, (cst.Subscript, cst.Attribute)) else e
        if inner is not e:
            return self.carries(inner)  # `Record(out=[x.data, pads]).fields["out"]` is that list
        if e is self.data or isinstance(e, cst.Name) and e.value in self.names:
            return True
        if isinstance(e, cst.Attribute):
            return e.attr.value not in K.NEVER_GRAD_ATTRIBUTES and self.carries(e.value)
        if isinstance(e, cst.Call):
            f = e.func
            if isinstance(f, cst.Attribute):
                if f.attr.value in K.NEVER_GRAD_METHODS | _FRESH or K.is_inplace_method(f.attr.value):
                    return False
                if self.carries(f.value):
                    return True
            given = e.args if isinstance(f, cst.Name) and f.value in ("sum", "abs", "max", "min") else self.passing(e)
            return any(self.carries(a.value) for a in given)
        if isinstance(e, cst.Subscript):
            inner = e.value
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and len(e.slice) == 1 \
                    and isinstance(e.slice[0].slice, cst.Index):
                items = K.TUPLE_RESULTS.get(inner.func.attr.value)
                at = _literal_index(e.slice[0].slice.value)
                if items is not None and isinstance(at, int) and -len(items) <= at < len(items) and items[at] == "none":
                    return False  # `x.data.max(1)[1]`: indices
            return self.carries(inner)
        if isinstance(e, cst.BinaryOperation):
            return self.carries(e.left) or self.carries(e.right)
        if isinstance(e, cst.UnaryOperation):
            return not isinstance(e.operator, cst.Not) and self.carries(e.expression)
        if isinstance(e, (cst.List, cst.Tuple)):
            return any(self.carries(el.value) for el in e.elements)
        if isinstance(e, cst.IfExp):
            return self.carries(e.body) or self.carries(e.orelse)
        return False

    def bind(self, target, carried: bool) -> None:
        if isinstance(target, cst.Name):
            (self.names.add if carried else self.names.discard)(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self.bind(el.value, carried)

    def walk_body(self, body):
        """The first `return` the value reaches; with `stop`, the names when that statement runs."""
        for stmt in body:
            if stmt is self.stop:
                return set(self.names)
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if self.data is not None and isinstance(small, cst.Return) and small.value is not None \
                            and self.carries(small.value):
                        return small
                    if isinstance(small, cst.Assign):
                        carried = self.carries(small.value)
                        for t in small.targets:
                            self.bind(t.target, carried)
                    elif isinstance(small, cst.AnnAssign) and small.value is not None:
                        self.bind(small.target, self.carries(small.value))
                    elif isinstance(small, cst.AugAssign) and self.carries(small.value):
                        self.bind(small.target, True)  # (`out += short`: still what it was, and now this too)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            else:
                if isinstance(stmt, cst.For):  # `for key, value in as_dict([x.data, pads]).items():` - its items
                    self.bind(stmt.target, self.carries(stmt.iter))
                for block in _blocks(stmt):
                    found = self.walk_body(block)
                    if found is not None:
                        return found
        return None


def _blocks(stmt) -> list:
    """The statement lists of a compound statement, in source order."""
    out = []
    for name in ("body", "orelse", "handlers", "finalbody"):
        part = getattr(stmt, name, None)
        parts = part if isinstance(part, (list, tuple)) else [part]
        for p in parts:
            if p is None:
                continue
            if isinstance(p, (cst.Else, cst.If, cst.ExceptHandler, cst.Finally)):
                out.extend(_blocks(p) if isinstance(p, cst.If) else [p.body.body])
            elif isinstance(p, cst.BaseSuite):
                out.append(p.body if isinstance(p, cst.IndentedBlock) else [cst.SimpleStatementLine(body=p.body)])
    return out


def _through_views(node):
    """The op whose output `node` views: `torch.sigmoid(z).squeeze(-1).T` -> `torch.sigmoid(z)`."""
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in K.VIEW_METHODS:
            node = node.func.value
        elif isinstance(node, cst.Attribute) and node.attr.value in K.VIEW_ATTRIBUTES:
            node = node.value
        else:
            return node


def _literal_index(node: cst.BaseExpression):
    """The integer an index literal is (`0`, `-1`), else None."""
    if isinstance(node, cst.Integer):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -node.expression.evaluated_value
    return None


def _is_data(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "data"


def _prefixes(rule, node: cst.BaseExpression) -> set:
    """`mlp[2].weight` -> {"mlp[2].weight", "mlp[2]", "mlp"}: the module a parameter belongs to."""
    out = set()
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Name)):
        out.add(rule.code_of(node))
        if isinstance(node, cst.Name):
            break
        node = node.value
    return out

