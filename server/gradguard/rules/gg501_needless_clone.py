from __future__ import annotations

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.evidence import dotted
from gradguard.engine.values import Kind
from gradguard.engine.walk import descendants
from gradguard.findings import Safety, Severity
from gradguard.rules._build import short
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid

# Calls that only read their tensor arguments.
PURE_BUILTINS = frozenset("print len float int bool str repr format isinstance abs min max sum zip enumerate".split())
# Functions torch or Lightning runs once per batch, by their API names (a user's `train_step` or
# `step` is hot by what it does: training_step below).
HOT_FUNCTIONS = frozenset({"forward", "training_step"})


def training_step(fn: cst.FunctionDef) -> bool:
    """A function whose own code back-propagates (`loss.backward()`, `torch.autograd.grad(...)`) or
    steps an optimizer (`opt.step()`): one training step, run once per batch, whatever it is called."""
    for node in descendants(fn.body, stop=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is cst.Call:
            func = node.func
            if isinstance(func, cst.Attribute) and (func.attr.value in K.BACKWARD_METHODS
                                                    or func.attr.value == "step" and not node.args):
                return True
            if (dotted(func) or "") in K.BACKWARD_SPELLINGS:
                return True
    return False


def _cloned(flow, node) -> "cst.Name | None":
    """`x` of `x.clone()` or `torch.clone(x)` (no other arguments), else None."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "clone" and not node.args and isinstance(func.value, cst.Name):
        return func.value
    if (flow._qualname(func) == "torch.clone" and len(node.args) == 1 and node.args[0].keyword is None
            and isinstance(node.args[0].value, cst.Name)):
        return node.args[0].value
    return None


class NeedlessClone(Rule):
    """
    ## What it does
    Finds `y = x.clone()` inside a loop or a hot function (`forward`,
    Lightning's `training_step`, a function that back-propagates or steps an optimizer) where neither `y` nor `x` is ever written in place,
    stored, returned, or passed to code that might write to it: every use only
    reads.

    ## Why is this bad?
    The copy costs memory (a new storage of the same size) and time (a copy
    kernel, and a `CloneBackward0` node when `x` has a graph), on every
    iteration, for nothing: without a write to either side, `y` and `x` always
    hold the same values.

    ## Example
    ```python
    for images, labels in loader:
        targets = labels.clone()
        loss = criterion(model(images), targets)
    ```

    ## Use instead
    ```python
    for images, labels in loader:
        loss = criterion(model(images), labels)
    ```

    ## Fix safety
    Unsafe: using `x` directly is only equivalent while nothing writes to either
    tensor - code added later, or code elsewhere holding a reference, may.
    """

    code = "GG501"
    name = "needless-clone"
    severity = Severity.INFO
    summary = "A `clone()` whose copy is never needed: neither side is written, stored or returned"

    def __init__(self, *args):
        super().__init__(*args)
        self._clones: list = []  # (assign node, call node, y binding, x binding, stamp)
        self._tainted: set = set()  # Bindings written, stored, returned or passed on
        self._read_in: dict = {}  # (stamp, loop) -> names read in it so far
        self._steps: dict = {}  # function node -> training_step(it)

    def _step(self, fn: cst.FunctionDef) -> bool:
        found = self._steps.get(fn)
        if found is None:
            found = self._steps[fn] = training_step(fn)
        return found

    def leave_Assign(self, node: cst.Assign) -> None:
        value = node.value
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                self._taint(t.target.value)
            elif not isinstance(t.target, cst.Name):
                self._taint(value)  # stored in an attribute or unpacked somewhere
        if isinstance(value, cst.Name):
            self._taint(value)  # z = y: another name for it
        elif isinstance(value, cst.Subscript) or (
            isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in K.VIEW_METHODS
        ):
            self._taint(value.value if isinstance(value, cst.Subscript) else value.func.value)  # z = y.view(...): writes to z reach y
        if not (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)):
            return
        source = _cloned(self.flow, value)
        if source is None:
            return
        src = self.flow.value(source)
        fn = self.flow.function
        hot = bool(self.flow.frame.loops) or fn is not None and (fn.name in HOT_FUNCTIONS or self._step(fn.node))
        if src.kind is not Kind.TENSOR or not hot:
            return
        name = node.targets[0].target.value
        loops = self.flow.frame.loops
        if loops and name in self._read_in.get((self.stamp(), loops[-1]), ()):
            return  # read earlier in the loop: the next iteration uses this copy (loop-carried)
        y = self.flow.lookup(name)
        x = self.flow.lookup(source.value)
        self._clones.append((node, value, y, x, self.stamp()))

    def visit_Name(self, node: cst.Name) -> None:
        stamp = self.stamp()  # a re-analysis of the function starts afresh
        for loop in self.flow.frame.loops:
            self._read_in.setdefault((stamp, loop), set()).add(node.value)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._taint(node.target)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._taint(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self._taint(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._is_loss(node):
            for arg in node.args:
                source = _cloned(self.flow, arg.value)
                if source is not None and self.flow.value(source).kind is not Kind.NDARRAY:
                    self._report_argument(arg.value, source)
        if isinstance(func, cst.Attribute):
            recv = self.flow.value(func.value)
            if K.is_inplace_method(func.attr.value) or recv.kind is not Kind.TENSOR:
                self._taint(func.value)  # written in place, or a method we cannot vouch for
        if not self._pure(node):
            for arg in node.args:
                self._taint(arg.value)

    def _pure(self, node: cst.Call) -> bool:
        q = self.flow._qualname(node.func) or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.") and not K.is_inplace_method(last) and not any(
            a.keyword is not None and a.keyword.value in ("out", "inplace") for a in node.args
        ):
            return q.count(".") == 1 or q.startswith("torch.nn.functional.")
        if isinstance(node.func, cst.Name) and node.func.value in PURE_BUILTINS and self.flow.lookup(node.func.value) is None:
            return True
        if isinstance(node.func, cst.Attribute):
            recv = self.flow.value(node.func.value)
            if recv.kind is Kind.TENSOR and not K.is_inplace_method(node.func.attr.value):
                return True  # y.add(x), y.sum(): read only
        f = self.flow.value(node.func)
        return f.kind is Kind.MODULE and (f.loss or f.pure)  # losses and torch.nn layers without inplace=True only read

    def _is_loss(self, node: cst.Call) -> bool:
        """`F.cross_entropy(...)`, `criterion(...)` with an nn loss: they read their arguments and return a new tensor."""
        return self.flow.is_loss_call(node)

    def _report_argument(self, call: cst.Call, source: cst.Name) -> None:
        x = source.value
        self.report(
            call,
            f"`{short(self.code_of(call))}` copies `{x}` only for a loss function to read it: the copy costs memory "
            "and time for nothing",
            fixes=[PendingFix(f"Use `{x}` itself", Safety.UNSAFE, [(call, source)])],
            tags=("unnecessary",),
        )

    def _taint(self, expr) -> None:
        for name in _names(expr):
            b = self.flow.lookup(name.value)
            if b is not None:
                self._tainted.add(b)
            # by name too: a branch merge gives the name a new binding (`if ...: y = x.clone()`)
            self._tainted.add((self.stamp(), name.value))

    def finish(self) -> None:
        for node, call, y, x, stamp in self._clones:
            source = _cloned(self.flow, call)
            yname, xname = node.targets[0].target.value, source.value
            if not self.current(stamp) or y in self._tainted or x in self._tainted:
                continue
            if (stamp, yname) in self._tainted or (stamp, xname) in self._tainted:
                continue
            self.report(
                call,
                f"`{yname} = {short(self.code_of(call))}` copies `{xname}`, but neither is written in place, stored or returned: "
                "the copy only costs memory and time",
                fixes=[PendingFix(f"Use `{xname}` itself", Safety.UNSAFE, [(call, source)])],
                tags=("unnecessary",),
            )

    VALID = [
        Valid(
            """
import torch

for step in range(3):
    noisy = torch.randn(4)
    clean = noisy.clone()
    noisy.add_(0.1)
    gap = (noisy - clean).abs().sum()
""",
            note="the original is written in place afterwards",
            runtime="assert gap.item() > 0",
        ),
        Valid(
            """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))
for x in [torch.randn(2, 3)]:
    x_in = x.clone()
    out = model(x_in)
""",
            note="passed to a model, which may write in place",
        ),
        Valid(
            """
import torch

history = []
for _ in range(2):
    state = torch.zeros(3)
    snapshot = state.clone()
    history.append(snapshot)
    state += 1
""",
            note="stored",
        ),
        Valid(
            """
import torch


def copy_of(t):
    out = t.clone()
    return out
""",
            note="returned (and not hot)",
        ),
        Valid(
            """
import torch

template = torch.zeros(4, 4)
for h in (2, 3):
    mask = template.clone()
    mask[:h, :h].fill_(1)
    print(mask.sum())
""",
            note="regression (transformers vilt): written through a view",
            runtime="assert template.sum().item() == 0",
        ),
        Valid(
            """
import torch
from torch import nn

attractors = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
prev = torch.zeros(2, 4)
for attractor in attractors:
    out = attractor(prev)
    prev = out.clone()
""",
            note="regression (transformers zoedepth): the copy is carried into the next iteration",
        ),
        Valid(
            """
import torch

logits = torch.randn(4, 5)
for step in range(2):
    picked = logits[:, 0]
    if picked.is_contiguous():
        picked = picked.clone()
    else:
        picked = picked.contiguous()
    picked[picked < 0] = 0.0
""",
            note="regression (nanotron, verl): written after a branch merges the copy",
        ),
        Valid(
            """
import torch

logits = torch.randn(4, 5)
for step in range(2):
    row = logits[0]
    row = row.clone()
    shaped = row.view(5, 1)
    shaped[0] = 0.0
""",
            note="regression (nanotron): written through a view bound to another name",
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(4, 3)
for images, labels in [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(2)]:
    targets = labels.clone()
    loss = F.cross_entropy(model(images), targets)
""",
            range=(8, 14, 8, 28),
            message="`targets = labels.clone()` copies `labels`, but neither is written in place, stored or returned: "
            "the copy only costs memory and time",
            fixes=(
                "\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\nmodel = nn.Linear(4, 3)\n"
                "for images, labels in [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(2)]:\n"
                "    targets = labels\n    loss = F.cross_entropy(model(images), targets)\n",
            ),
            runtime="assert targets.data_ptr() != labels.data_ptr() and torch.equal(targets, labels)",
        ),
        Invalid(
            """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        residual = x.clone()
        return self.fc(x) + residual


block = Block()
x = torch.randn(2, 4)
y = block(x)
""",
            range=(12, 19, 12, 28),
            message="`residual = x.clone()` copies `x`, but neither is written in place, stored or returned: the copy "
            "only costs memory and time",
            fixes=(
                "\nimport torch\nfrom torch import nn\n\n\nclass Block(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
                "        residual = x\n        return self.fc(x) + residual\n\n\nblock = Block()\n"
                "x = torch.randn(2, 4)\ny = block(x)\n",
            ),
            runtime="assert torch.allclose(y, block.fc(x) + x)",
            note="a residual in forward: the sum makes a new tensor anyway",
        ),
        Invalid(
            """
import torch

step = 0
weights = torch.ones(3)
while step < 3:
    w = weights.clone()
    print(w.sum().item(), torch.norm(w))
    step += 1
""",
            range=(7, 8, 7, 23),
            message="`w = weights.clone()` copies `weights`, but neither is written in place, stored or returned: the copy "
            "only costs memory and time",
            fixes=("\nimport torch\n\nstep = 0\nweights = torch.ones(3)\nwhile step < 3:\n    w = weights\n"
                   "    print(w.sum().item(), torch.norm(w))\n    step += 1\n",),
            runtime="assert w.data_ptr() != weights.data_ptr() and torch.equal(w, weights)",
            note="a `while` loop; only read by print and torch functions",
        ),
        Invalid(
            """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
correct = 0
for epoch in range(2):
    for xb, yb in [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]:
        logits = net(xb)
        scores = logits.clone()
        correct += (scores.argmax(1) == yb).sum().item()
""",
            range=(10, 17, 10, 31),
            message='`scores = logits.clone()` copies `logits`, but neither is written in place, stored or returned: '
            'the copy only costs memory and time',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n'
                'net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\ncorrect = 0\n'
                'for epoch in range(2):\n'
                '    for xb, yb in [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]:\n'
                '        logits = net(xb)\n        scores = logits\n'
                '        correct += (scores.argmax(1) == yb).sum().item()\n',
            ),
            runtime='assert scores.data_ptr() != logits.data_ptr() and torch.equal(scores, logits)',
            note='nested loops; an nn.Sequential model; the copy is only read by argmax',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

batch_logits = torch.randn(3, 5, 4)
total = 0.0
for logits in batch_logits:
    probs = F.softmax(logits, dim=-1)
    p = probs.clone()
    total += -(p * p.log()).sum().item()
""",
            range=(9, 8, 9, 21),
            message='`p = probs.clone()` copies `probs`, but neither is written in place, stored or returned: the '
            'copy only costs memory and time',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\n\nbatch_logits = torch.randn(3, 5, 4)\n'
                'total = 0.0\nfor logits in batch_logits:\n    probs = F.softmax(logits, dim=-1)\n    p = probs\n'
                '    total += -(p * p.log()).sum().item()\n',
            ),
            runtime='assert p.data_ptr() != probs.data_ptr() and torch.equal(p, probs)',
            note='`import torch.nn.functional as F`; renamed variables',
        ),
        Invalid(
            """
import torch
from torch import nn


def accuracy(classifier, batches):
    hits = 0
    for feats, tags in batches:
        out = classifier(feats)
        snapshot = out.clone()
        hits += (snapshot.argmax(1) == tags).sum().item()
    return hits


classifier = nn.Linear(4, 3)
for epoch in range(2):
    acc = accuracy(classifier, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))])
""",
            range=(10, 19, 10, 30),
            message='`snapshot = out.clone()` copies `out`, but neither is written in place, stored or returned: the '
            'copy only costs memory and time',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef accuracy(classifier, batches):\n    hits = 0\n'
                '    for feats, tags in batches:\n        out = classifier(feats)\n        snapshot = out\n'
                '        hits += (snapshot.argmax(1) == tags).sum().item()\n    return hits\n\n\n'
                'classifier = nn.Linear(4, 3)\nfor epoch in range(2):\n'
                '    acc = accuracy(classifier, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))])\n',
            ),
            runtime='assert 0 <= acc <= 5',
            note='a helper function with its own loop, called from the epoch loop',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(4, 3)
for x, labels in [(torch.randn(5, 4), torch.randint(0, 3, (5,)))]:
    loss = F.cross_entropy(model(x), labels.clone())
    loss.backward()
""",
            range=(8, 37, 8, 51),
            message='`labels.clone()` copies `labels` only for a loss function to read it: the copy costs memory and time for nothing',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\nmodel = nn.Linear(4, 3)\nfor x, labels in [(torch.randn(5, 4), torch.randint(0, 3, (5,)))]:\n    loss = F.cross_entropy(model(x), labels)\n    loss.backward()\n',
            ),
            runtime='assert torch.equal(labels.clone(), labels)',
            note='a copy made only for a loss function to read',
        ),
        Invalid(
            """
import torch

for step in range(3):
    frame = torch.randn(2, 3)
    shown = torch.clone(frame)
    print(shown.mean().item(), frame.std().item())
""",
            range=(6, 12, 6, 30),
            message='`shown = torch.clone(frame)` copies `frame`, but neither is written in place, stored or returned: the copy only costs memory and time',
            fixes=(
                '\nimport torch\n\nfor step in range(3):\n    frame = torch.randn(2, 3)\n    shown = frame\n    print(shown.mean().item(), frame.std().item())\n',
            ),
            runtime='assert torch.equal(shown, frame)',
            note='the function form torch.clone(x)',
        ),
    ]


def _names(expr) -> list:
    """Names an expression hands on, whole or as a view (`y`, `y[0]`, `y.T`; not `x + 1`)."""
    while type(expr) is cst.Subscript or type(expr) is cst.Attribute:  # (exact types: see function_facts)
        expr = expr.value
    if type(expr) is cst.Name:
        return [expr]
    if type(expr) in (cst.Tuple, cst.List, cst.Set):
        return [n for e in expr.elements for n in _names(e.value)]
    if isinstance(expr, cst.Dict):
        return [n for e in expr.elements if isinstance(e, cst.DictElement) for n in _names(e.value)]
    if isinstance(expr, cst.StarredElement):
        return _names(expr.value)
    return []
