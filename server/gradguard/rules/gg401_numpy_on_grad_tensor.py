from __future__ import annotations

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.model import GradMode
from gradguard.engine.syntax import keyword, positional
from gradguard.engine.values import Grad, Kind
from gradguard.findings import Safety, Severity
from gradguard.rules._build import evidence_note, method_chain, short
from gradguard.rules.base import Invalid, PendingFix, Rule, Valid

ERROR = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
# Calls between the tensor and .numpy() that a fix keeps: t.cpu().numpy() -> t.detach().cpu().numpy()
PASS_THROUGH = frozenset({"cpu", "to", "contiguous", "float", "double", "half", "cuda"})


class NumpyOnGradTensor(Rule):
    """
    ## What it does
    Finds `.numpy()` (also after `.cpu()`), `np.array(t)`, `np.asarray(t)` and
    other NumPy calls that convert a tensor which requires grad - a model's
    output, a loss, a parameter - outside `torch.no_grad()`. A list of such
    tensors passed to NumPy (`np.mean(losses)`) counts too. A model received
    from elsewhere (`def export(model)`) has a parameter `model.alpha` when the
    only class of the file that sets an `.alpha` makes it an `nn.Parameter`.

    ## Why is this bad?
    It raises at run time: `RuntimeError: Can't call numpy() on Tensor that
    requires grad. Use tensor.detach().numpy() instead.` - usually at the end of
    the first epoch, when the metrics are computed. Under `torch.no_grad()` the
    same call works. So the finding is an **error** where grad mode is known to be
    on (code at the top of a script, a function that trains, one the file calls
    with grad on) or the tensor is a parameter (which requires grad in any mode),
    and a **warning** in a function whose callers live elsewhere (a model's
    `generate()`): it raises only if they call it with grad enabled.

    ## Example
    ```python
    probs = model(x).softmax(1)
    np.save("probs.npy", probs.cpu().numpy())
    ```

    ## Use instead
    ```python
    probs = model(x).softmax(1)
    np.save("probs.npy", probs.detach().cpu().numpy())
    ```

    ## Fix safety
    Inserting `.detach()` before the conversion (and before any `.cpu()`, so the
    copy to the host records no graph) is safe: the NumPy array gets the same
    values. A list of tensors gets no automatic fix: detach them where they are
    stored (see GG101).
    """

    code = "GG401"
    name = "numpy-on-grad-tensor"
    severity = Severity.ERROR
    severities = (Severity.ERROR, Severity.WARNING)
    summary = "A tensor that requires grad is converted to NumPy: it raises"

    def __init__(self, *args):
        super().__init__(*args)
        # A function's summary: the parameters it converts to NumPy, where the value it was last walked
        # with does not say whether they require grad (callers passing different things): FunctionInfo ->
        # {parameter: (the conversion, its text, stamp)}. Each call passing a graph there raises.
        self._converts: dict = {}
        self._through: list = []  # (call, callee, parameter, argument, its value, proved, stamp)

    def visit_Call(self, node: cst.Call) -> None:
        if self.flow.frame.mode is not GradMode.ON:
            return
        self._calls_converting(node)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and not node.args:
            recv = self.flow.value(func.value)
            if recv.kind is Kind.TENSOR and recv.grad is Grad.YES:
                self._report(node, _base_of(func.value), recv, ".numpy()")
                # (a parameter's: the function's summary too, for the calls that pass a graph, should a
                # later analysis for another call - `as_float(lr)` - drop this report)
                self._converted_param(_base_of(func.value), node, "`.numpy()`", _base_of(func.value))
            elif recv.grad is Grad.UNKNOWN:
                self._converted_param(_base_of(func.value), node, "`.numpy()`", _base_of(func.value))
            return
        q = self.flow._qualname(func) or ""
        if not q.startswith("numpy.") or keyword(node, "force") is not None:
            return
        fname = q.rsplit(".", 1)[-1]
        args = positional(node)
        if not args or fname in K.NUMPY_NON_CONVERTING:
            return
        arg = args[0].value
        v = self.flow.value(arg)
        if v.kind is Kind.TENSOR and v.grad is Grad.YES and fname in K.NUMPY_CONVERTERS:
            self._report(node, arg, v, f"`np.{fname}()`", tensor=True)
            self._converted_param(arg, node, f"`np.{fname}()`", arg)
        elif v.grad is Grad.UNKNOWN and v.kind in (Kind.TENSOR, Kind.UNKNOWN) and fname in K.NUMPY_CONVERTERS:
            self._converted_param(arg, node, f"`np.{fname}()`", arg)
        elif v.kind is Kind.CONTAINER and v.item is not None and v.item.kind is Kind.TENSOR and v.item.grad is Grad.YES:
            self._report(node, arg, v.item, f"`np.{fname}()`", tensor=False)

    def _converted_param(self, param: cst.BaseExpression, node: cst.Call, call: str, base: cst.BaseExpression) -> None:
        """`def scalar_to_float(s): return float(s.cpu().numpy())`, walked with what several callers pass:
        the function converts its parameter `s` (its summary, for each call to apply). `node` converts
        `base`, in this function or in one it calls."""
        fn = self.flow.function
        if fn is None or not isinstance(param, cst.Name):
            return
        b = self.flow.lookup(param.value)
        if b is not None and isinstance(b.node, cst.Param) and param.value not in ("self", "cls"):
            self._converts.setdefault(fn, {})[param.value] = (node, call, base, self.stamp())

    def _calls_converting(self, node: cst.Call) -> None:
        """A call of a function of the file that converts a parameter: given a tensor with a graph there,
        the conversion raises (reported where it is, as when only that call is seen); given a parameter
        of this function, this function converts that one in turn (`log(name, data)` calling
        `scalar_to_float(data)`)."""
        callee = self.flow.value(node.func)
        fn = callee.cls if callee.kind is Kind.FUNCTION else None
        converts = self._converts.get(fn) if fn is not None else None
        if not converts:
            return
        args = [(a, self.flow.value(a.value)) for a in node.args]
        by_name = self.flow._arguments(fn, args, callee.elements[0] if callee.elements else None)
        for param, (converted, call, base, stamp) in list(converts.items()):
            a, v = by_name.get(param, (None, None))
            if a is None or not self.current(stamp):
                continue
            if v.kind is Kind.TENSOR and v.has_graph:
                self._through.append((node, converted, call, base, a.value, v, self.flow.grad_proved_on(), self.stamp()))
            elif v.grad is Grad.UNKNOWN:
                self._converted_param(a.value, converted, call, base)

    def finish(self) -> None:
        done = set()
        for node, converted, call, base, arg, v, proved, stamp in self._through:
            if not self.current(stamp) or converted in done:
                continue
            done.add(converted)
            # the call that passes the graph says more than the analysis of the helper for it did
            self._reports[:] = [r for r in self._reports if not (r.rule is self and r.node is converted)]
            name, why = short(self.code_of(base)), v.why

            def message(line_of, name=name, node=node, call=call, arg=arg, why=why, proved=proved):
                origin = evidence_note(why, arg, line_of, self.code_of)
                when = "" if proved else " when that runs with grad enabled"
                return (f"`{name}` requires grad: `{short(self.code_of(node))}` on line {line_of(node)} passes "
                        f"`{short(self.code_of(arg))}`{origin}; {call} on it {'raises' if proved else 'then raises'} "
                        f"\"{ERROR}\"{when}")

            new = method_chain(base, "detach")
            fixes = [PendingFix(f"Insert `.detach()`: `{short(self.code_of(new))}`", Safety.SAFE, [(base, new)])]
            related = [(node, "passed here")] + ([(why.node, "requires grad from here")] if why is not None else [])
            self.report(converted, message, fixes=fixes, related=related, severity=None if proved else Severity.WARNING)

    def _report(self, node: cst.Call, base: cst.BaseExpression, v, call: str, tensor: bool = True) -> None:
        name = short(self.code_of(base))
        why = v.why
        call_text = call if call.startswith("`") else f"`{call}`"
        holds = "requires grad" if tensor else "holds tensors that require grad"
        # A parameter requires grad in any grad mode; a computed value only where grad is on, which in a
        # function no code of this file calls depends on its caller: then the crash is not proved.
        proved = v.leaf or self.flow.grad_proved_on()
        fn = self.flow.function
        when = "" if proved else f" when `{fn.name}()` runs with grad enabled"
        raises = "raises" if proved else "then raises"
        callers = self.flow.proved_by_other_files() if proved and not v.leaf else None
        because = f" (`{fn.name}()` is {callers.why})" if callers else ""

        def message(line_of):
            origin = evidence_note(why, base, line_of, self.code_of)
            return f"`{name}` {holds}{when}{origin}; {call_text} on it {raises} \"{ERROR}\"{because}"

        fixes = []
        if tensor:
            new = method_chain(base, "detach")
            fixes.append(PendingFix(f"Insert `.detach()`: `{short(self.code_of(new))}`", Safety.SAFE, [(base, new)]))
        related = [(why.node, "requires grad from here")] if why is not None else []
        if callers and callers.at:
            related.append((callers.at, f"`{fn.name}()` is called here, with grad on"))
        self.report(node, message, fixes=fixes, related=related, severity=None if proved else Severity.WARNING)

    VALID = [
        Valid(
            """
import numpy as np
import torch


def compute_loss(model, x, y):
    pred = model(x)
    mse = ((pred - y) ** 2).mean()
    total = mse + 0.1 * pred.abs().mean()
    mse = mse.detach()
    return total, mse


def fit(model, data, optimizer):
    curve = []
    for x, y in data:
        loss, mse = compute_loss(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve.append(mse)
    return np.array(curve)
""",
            note="the helper's second item is a term of the back-propagated one, but it is detached before the return",
            runtime='model = torch.nn.Linear(3, 1)\n'
                    'opt = torch.optim.SGD(model.parameters(), lr=0.1)\n'
                    'fit(model, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)], opt)',
        ),
        Valid(
            """
import numpy as np
import torch


def compute_loss(model, x, y):
    pred = model(x)
    total = ((pred - y) ** 2).mean()
    with torch.no_grad():
        mae = (pred - y).abs().mean()
    return total, mae


def fit(model, data, optimizer):
    curve = []
    for x, y in data:
        loss, mae = compute_loss(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve.append(mae)
    return np.array(curve)
""",
            note="the helper's second item is computed under `torch.no_grad()`, not a term of the back-propagated one",
            runtime='model = torch.nn.Linear(3, 1)\n'
                    'opt = torch.optim.SGD(model.parameters(), lr=0.1)\n'
                    'fit(model, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)], opt)',
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn


def fit(model, data, optimizer, epochs):
    history = {"loss": [], "epoch": []}
    for epoch in range(epochs):
        for x, y in data:
            loss = ((model(x) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        history["loss"].append(loss)
        history["epoch"].append(epoch)
    return history


def curves(model, data, optimizer):
    history = fit(model, data, optimizer, 2)
    return [v.item() for v in history["loss"]], np.array(history["epoch"])


net = nn.Linear(4, 1)
curves(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            note='the same dict of curves: `history["loss"]` holds tensors (read with `.item()`), `history["epoch"]` '
                 "only numbers - the entry turned into NumPy is the other constant key's",
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn

model = nn.Linear(4, 3)
x = torch.randn(5, 4)
model.eval()
with torch.no_grad():
    probs = model(x).softmax(1).cpu().numpy()
""",
            note="computed under no_grad",
            runtime="assert probs.shape == (5, 3)",
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn

model = nn.Linear(4, 3)
scores = model(torch.randn(5, 4))
table = scores.detach().cpu().numpy()
mean = np.mean(table)
""",
            note="already detached",
            runtime="assert table.shape == (5, 3)",
        ),
        Valid(
            """
import numpy as np
import torch

weights = np.ones(4)
weights.copy()
ratio = np.array(weights) / 2
batch = torch.randn(3, 4)
pixels = batch.numpy()
""",
            note="NumPy arrays, and a tensor that does not require grad",
            runtime="assert pixels.shape == (3, 4)",
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn

net = nn.Linear(2, 1)
losses = []
for _ in range(3):
    loss = net(torch.randn(4, 2)).pow(2).mean()
    loss.backward()
    losses.append(loss.item())
print(np.mean(losses))
""",
            note="a list of Python floats",
        ),
        Valid(
            """
import torch


def to_numpy(t):
    return t.cpu().numpy()
""",
            note="`t` could be anything: unknown, so silent",
        ),
        Valid(
            """
import torch
from torch import nn
from torch.distributions import Categorical

policy = nn.Linear(4, 3)
obs = torch.randn(2, 4)
logits = policy(obs)
greedy = logits.argmax(1).numpy()
sampled = Categorical(logits=logits).sample().numpy()
drawn = torch.multinomial(logits.softmax(1), 1).numpy()
best = logits.max(1)[1].numpy()
top = logits.topk(2).indices.numpy()
positive = (logits > 0).numpy()
""",
            runtime='assert logits.requires_grad',
            note='integer and bool tensors never require grad: argmax, sample(), multinomial, max()[1], topk indices, comparisons',
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.steps = torch.zeros(1)
        self.register_buffer("shift", torch.zeros(3))


def export(model):
    model.eval()
    return np.copy(model.scale.data), np.copy(model.steps), np.copy(model.shift)


scale, steps, shift = export(Scaler())
""",
            runtime="assert scale.shape == (3,) and steps.shape == (1,)",
            note="a model's attributes read through `.data`, set to a plain tensor, or registered as a buffer",
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn


class Client:
    def __init__(self, model, batches):
        self.model = model
        self.batches = batches
        self.criterion = nn.CrossEntropyLoss()

    def evaluate(self):
        loss = 0
        for x, y in self.batches:
            loss += self.criterion(self.model(x), y)
        return loss, len(self.batches)


def average_loss(clients):
    losses, sizes = [], []
    for worker in clients:
        loss, n = worker.evaluate()
        losses.append(loss)
        sizes.append(n * worker.weight)
    return np.sum([l * n for l, n in zip(losses, sizes)]) / np.sum(sizes)
""",
            note="the file's `Client` has an `evaluate()`, but `worker.weight` is no member of it: the workers are "
                 "objects of another class (which returns floats); duck typing needs every member used to fit",
            runtime="class Worker:\n    weight = 1\n    def evaluate(self):\n        return 0.5, 2\nassert average_loss([Worker(), Worker()]) == 0.5",
        ),
        Valid(
            """
import numpy as np
import torch


class RefineCAM:
    def __init__(self, model, target_layers, base_method):
        self.base_cams = [base_method(model, [layer]) for layer in target_layers]

    def forward(self, input_tensor, targets=None):
        cam_per_layer = np.array([base_cam(input_tensor, targets) for base_cam in self.base_cams])
        return np.prod(cam_per_layer, axis=0)

    def __call__(self, input_tensor, targets=None):
        return self.forward(input_tensor, targets)
""",
            note="pytorch-grad-cam's RefineCAM: `base_cam(input_tensor, targets)` is called the way the file's own `forward()` is declared, but RefineCAM has no torch base - not an nn.Module - and the CAMs it calls return NumPy maps",
            runtime="class CAM:\n    def __init__(self, model, layers):\n        self.model = model\n    def __call__(self, x, targets=None):\n        return self.model(x).detach().numpy()\nassert RefineCAM(torch.nn.Linear(3, 2), [0, 1], CAM)(torch.randn(4, 3)).shape == (4, 2)",
        ),
        Valid(
            """
import torch


def predict(input_tensor, model, detection_threshold):
    model.eval()
    outputs = model(input_tensor)
    pred_labels = outputs[0]["labels"].cpu().numpy()
    pred_scores = outputs[0]["scores"].detach().cpu().numpy()
    pred_boxes = outputs[0]["boxes"].detach().cpu().numpy()
    keep = pred_scores >= detection_threshold
    return pred_boxes[keep], pred_labels[keep]
""",
            note="pytorch-grad-cam's Faster R-CNN tutorial: a detection model's `labels` are class indices (int64), which never require grad; the scores and boxes, which do, are detached",
            runtime="class Detector(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.head = torch.nn.Linear(4, 5)\n    def forward(self, x):\n        out = self.head(x)\n        return [{'boxes': out[:, :4], 'scores': out[:, 4].sigmoid(), 'labels': out.argmax(1)}]\nboxes, labels = predict(torch.randn(3, 4), Detector(), 0.0)\nassert labels.dtype.kind == 'i' and len(boxes) == 3",
        ),
        Valid(
            """
import numpy as np
import tensorflow as tf
from transformers import TFCamembertModel


def embeddings_slice():
    model = TFCamembertModel.from_pretrained("jplu/tf-camembert-base")
    input_ids = tf.convert_to_tensor([[5, 121, 11, 660, 16, 730, 25543, 110, 83, 6]], dtype=tf.int32)
    output = model(input_ids)["last_hidden_state"]
    # the reference values came from torch.hub.load("pytorch/fairseq", "camembert.v0")
    return np.asarray(output[:, :3, :3].numpy())
""",
            note="a TensorFlow model of transformers (`TFCamembertModel`, in the tests microsoft/LoRA vendors): its outputs are TF tensors, whose `.numpy()` never raises",
        ),
        Valid(
            """
import torch
from torch import nn


def as_float(value):
    if isinstance(value, float):
        return value
    return float(value.cpu().numpy())


def log_step(history, loss, lr):
    history.append((as_float(loss), as_float(lr)))


def train(model, batches, optimizer):
    history = []
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_step(history, loss.detach(), 0.1)
    return history


net = nn.Linear(4, 1)
history = train(net, [(torch.randn(5, 4), torch.randn(5, 1))], torch.optim.SGD(net.parameters(), lr=0.1))
""",
            note="the same helper given the detached loss at its one call with a tensor: nothing it converts requires grad",
            runtime="assert isinstance(history[0][0], float)",
        ),
        Valid(
            """
import numpy as np
import torch
from torch import nn


class C1:
    def __init__(self, aa, bb, zz):
        self.aa = aa
        self.bb = bb
        self.zz = zz

    def step2(self):
        tot = 0
        for x, y in self.bb:
            tot += self.zz(self.aa(x), y)
        return tot, len(self.bb)


def f2(cs):
    a, b = [], []
    for c in cs:
        t, n = c.step2()
        a.append(t)
        b.append(n)
    return np.sum([u * n for u, n in zip(a, b)]) / np.sum(b)
""",
            note="the same shape with `self.zz` a callable the class was given: nothing says it keeps a graph (here a "
            "metric returning a float)",
            runtime='f2([C1(nn.Linear(4, 3), [(torch.randn(2, 4), torch.tensor([0, 2]))], '
            'lambda o, t: (o.argmax(1) == t).float().mean().item())])',
        ),
    ]

    INVALID = [
        Invalid(
            """
import numpy as np
import torch


def compute_loss(model, x, y):
    pred = model(x)
    mse = ((pred - y) ** 2).mean()
    total = mse + 0.1 * pred.abs().mean()
    return total, mse


def fit(model, data, optimizer):
    curve = []
    for x, y in data:
        loss, mse = compute_loss(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve.append(mse)
    return np.array(curve)
""",
            range=(21, 11, 21, 26),
            message='`curve` holds tensors that require grad (`loss.backward()` back-propagates what `mse` is part of on line 18); `np.array()` on it raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            note="`model` is a parameter nothing types: the backward of the helper's first item proves it had a graph, and "
                 "so (in the helper's own code) `mse`, a term of it - the caller's name for the helper's second item",
            runtime='model = torch.nn.Linear(3, 1)\n'
                    'opt = torch.optim.SGD(model.parameters(), lr=0.1)\n'
                    'try:\n    fit(model, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)], opt)\n'
                    'except RuntimeError as e:\n    assert "Can\'t call numpy() on Tensor that requires grad" in str(e)\n'
                    'else:\n    raise AssertionError("no error")',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


def fit(model, data, optimizer, epochs):
    history = {"loss": [], "epoch": []}
    for epoch in range(epochs):
        for x, y in data:
            loss = ((model(x) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        history["loss"].append(loss)
        history["epoch"].append(epoch)
    return history


def curves(model, data, optimizer):
    history = fit(model, data, optimizer, 2)
    return np.array(history["loss"]), np.array(history["epoch"])


net = nn.Linear(4, 1)
curves(net, [(torch.randn(5, 4), torch.randn(5, 1))] * 2, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            range=(22, 11, 22, 36),
            message='`history["loss"]` holds tensors that require grad (from `model(x)` on line 11); `np.array()` on it raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            raises=ERROR,
            note='a list that is the value of a dict with a constant key (`history = {"loss": [], ...}`) holds what '
                 '`history["loss"].append(loss)` appends; read back as `history["loss"]` after a return to the caller',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn

model = nn.Linear(4, 3)
x = torch.randn(5, 4)
probs = model(x).softmax(1)
np.save("probs.npy", probs.cpu().numpy())
""",
            range=(9, 21, 9, 40),
            message="`probs` requires grad (from `model(x)` on line 8); `.numpy()` on it raises \"" + ERROR + "\"",
            fixes=(
                "\nimport numpy as np\nimport torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 3)\n"
                "x = torch.randn(5, 4)\nprobs = model(x).softmax(1)\n"
                "np.save(\"probs.npy\", probs.detach().cpu().numpy())\n",
            ),
            raises=ERROR,
        ),
        Invalid(
            """
import numpy
import torch

w = torch.zeros(3, requires_grad=True)
snapshot = numpy.array(w)
""",
            range=(6, 11, 6, 25),
            message="`w` requires grad (`requires_grad=True` on line 5); `np.array()` on it raises \"" + ERROR + "\"",
            fixes=("\nimport numpy\nimport torch\n\nw = torch.zeros(3, requires_grad=True)\nsnapshot = numpy.array(w.detach())\n",),
            raises=ERROR,
            note="a leaf that requires grad; numpy imported without an alias",
        ),
        Invalid(
            """
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def evaluate(network, samples):
    network.eval()
    history = []
    for inputs, labels in samples:
        history.append(F.cross_entropy(network(inputs), labels))
    return np.mean(history)


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
avg = evaluate(net, [(torch.randn(6, 4), torch.randint(0, 2, (6,))) for _ in range(2)])
""",
            range=(13, 11, 13, 27),
            message="`history` holds tensors that require grad (from `F.cross_entropy(network(inputs), labels)` on "
            "line 12); `np.mean()` on it raises \"" + ERROR + "\"",
            raises=ERROR,
            note="a list of losses handed to NumPy; in a helper function (GG101 also flags the append)",
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 2)

    def forward(self, x):
        return self.proj(x)

    def embed(self, x):
        emb = self.forward(x)
        return emb.numpy()


Probe().embed(torch.randn(4, 3))
""",
            range=(17, 15, 17, 26),
            message="`emb` requires grad (from `self.proj(x)` on line 13); `.numpy()` on it raises \"" + ERROR + "\"",
            fixes=(
                "\nimport numpy as np\nimport torch\nfrom torch import nn\n\n\nclass Probe(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(3, 2)\n\n"
                "    def forward(self, x):\n        return self.proj(x)\n\n    def embed(self, x):\n"
                "        emb = self.forward(x)\n        return emb.detach().numpy()\n\n\n"
                "Probe().embed(torch.randn(4, 3))\n",
            ),
            raises=ERROR,
            note="a method of a module",
        ),
        Invalid(
            """
import torch
from torch import nn

encoder = nn.Sequential(nn.Linear(4, 4), nn.GELU())
chunks = torch.randn(6, 4).split(2)
embeddings = [encoder(chunk).numpy() for chunk in chunks]
""",
            range=(7, 14, 7, 36),
            message='`encoder(chunk)` requires grad; `.numpy()` on it raises '
            '"Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\nencoder = nn.Sequential(nn.Linear(4, 4), nn.GELU())\n'
                'chunks = torch.randn(6, 4).split(2)\n'
                'embeddings = [encoder(chunk).detach().numpy() for chunk in chunks]\n',
            ),
            raises=ERROR,
            note='a list comprehension over an nn.Sequential model',
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Trainer:
    def __init__(self, net):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
        self.curve = []

    def fit(self, inputs, targets, max_steps=3):
        step = 0
        while step < max_steps:
            self.opt.zero_grad()
            cost = F.mse_loss(self.net(inputs), targets)
            cost.backward()
            self.opt.step()
            self.curve.append(cost.cpu().numpy())
            step += 1


Trainer(nn.Linear(2, 1)).fit(torch.randn(4, 2), torch.randn(4, 1))
""",
            range=(20, 30, 20, 48),
            message='`cost` requires grad (from `F.mse_loss(self.net(inputs), targets)` on line 17); `.numpy()` on '
            'it raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() '
            'instead."',
            fixes=(
                '\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Trainer:\n'
                '    def __init__(self, net):\n        self.net = net\n'
                '        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)\n        self.curve = []\n\n'
                '    def fit(self, inputs, targets, max_steps=3):\n        step = 0\n'
                '        while step < max_steps:\n            self.opt.zero_grad()\n'
                '            cost = F.mse_loss(self.net(inputs), targets)\n            cost.backward()\n'
                '            self.opt.step()\n            self.curve.append(cost.detach().cpu().numpy())\n'
                '            step += 1\n\n\nTrainer(nn.Linear(2, 1)).fit(torch.randn(4, 2), torch.randn(4, 1))\n',
            ),
            raises=ERROR,
            note='a trainer class logging the loss with `.numpy()` in a `while` loop; `F.mse_loss`',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn

critic = nn.Linear(3, 1)
values = np.zeros((2, 4))
for ep in range(2):
    for t in range(4):
        state = torch.randn(1, 3)
        values[ep, t] = critic(state).squeeze().numpy()
""",
            range=(11, 24, 11, 55),
            message='`critic(state).squeeze()` requires grad (from `critic(state)` on line 11); `.numpy()` on it '
            'raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            fixes=(
                '\nimport numpy as np\nimport torch\nfrom torch import nn\n\ncritic = nn.Linear(3, 1)\n'
                'values = np.zeros((2, 4))\nfor ep in range(2):\n    for t in range(4):\n'
                '        state = torch.randn(1, 3)\n'
                '        values[ep, t] = critic(state).squeeze().detach().numpy()\n',
            ),
            raises=ERROR,
            note='nested loops filling a NumPy table; renamed variables',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.alpha = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        return x * torch.sigmoid(self.alpha)


def log_gates(model, history):
    model.eval()
    history.append(np.array(model.alpha))
""",
            range=(18, 19, 18, 40),
            message="`model.alpha` requires grad (`.alpha` is an `nn.Parameter` in `Gate`, the only class of this file "
            "with a `.alpha`, on line 10); `np.array()` on it raises \"" + ERROR + "\"",
            fixes=('\nimport numpy as np\nimport torch\nfrom torch import nn\n\n\nclass Gate(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.alpha = nn.Parameter(torch.zeros(n))\n\n    def forward(self, x):\n        return x * torch.sigmoid(self.alpha)\n\n\ndef log_gates(model, history):\n    model.eval()\n    history.append(np.array(model.alpha.detach()))\n',),
            runtime="import pytest\nwith pytest.raises(RuntimeError, match='Can.t call numpy'):\n    log_gates(Gate(4), [])",
            note="a model received from elsewhere (`model.eval()`): its `.alpha` is the parameter the one class of "
            "the file with an `.alpha` makes (EdgeML's Bonsai)",
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


class Client:
    def __init__(self, model, batches):
        self.model = model
        self.batches = batches
        self.criterion = nn.CrossEntropyLoss()

    def evaluate(self):
        loss = 0
        for x, y in self.batches:
            loss += self.criterion(self.model(x), y)
        return loss, len(self.batches)


def average_loss(clients):
    losses, sizes = [], []
    for client in clients:
        loss, n = client.evaluate()
        losses.append(loss)
        sizes.append(n)
    return np.sum([l * n for l, n in zip(losses, sizes)]) / np.sum(sizes)
""",
            range=(26, 11, 26, 57),
            message='`[l * n for l, n in zip(losses, sizes)]` holds tensors that require grad when `average_loss()` runs with grad enabled (from `self.criterion(self.model(x), y)` on line 16); `np.sum()` on it then raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            severity=Severity.WARNING,
            runtime="client = Client(nn.Linear(4, 3), [(torch.randn(2, 4), torch.tensor([0, 1]))])\ntry:\n    average_loss([client])\n    raised = ''\nexcept RuntimeError as e:\n    raised = str(e)\nassert \"Can't call numpy() on Tensor that requires grad\" in raised",
            note="FedGen's server: `client` is the file's `Client` (only it has `evaluate()`), whose losses keep their graph; NumPy's sum converts them and raises",
        ),
        Invalid(
            """
import numpy as np
import torch


def fit_ranker(scorer, pairs, loss_fn, opt):
    history = []
    for feats, rel in pairs:
        scores = scorer(feats).squeeze(-1)
        loss = loss_fn(scores, rel)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(np.round(scores.cpu().numpy(), 3))
    return history
""",
            range=(14, 32, 14, 52),
            message='`scores` requires grad (from `scorer(feats)` on line 9); `.numpy()` on it raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            fixes=(
                '\nimport numpy as np\nimport torch\n\n\ndef fit_ranker(scorer, pairs, loss_fn, opt):\n    history = []\n    for feats, rel in pairs:\n        scores = scorer(feats).squeeze(-1)\n        loss = loss_fn(scores, rel)\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n        history.append(np.round(scores.detach().cpu().numpy(), 3))\n    return history\n',
            ),
            note="an unknown callable and a neutral op: `loss.backward()` proves `scores`, its loss's prediction, has a graph, and `scorer`, which made it from data, is a model",
            runtime='net = torch.nn.Linear(4, 1)\npairs = [(torch.randn(5, 4), torch.randn(5)) for _ in range(2)]\ntry:\n    fit_ranker(net, pairs, torch.nn.functional.mse_loss, torch.optim.SGD(net.parameters(), lr=0.1))\n    raise AssertionError("no error")\nexcept RuntimeError as e:\n    assert "Can\'t call numpy() on Tensor that requires grad" in str(e)',
        ),
        Invalid(
            """
import torch
from torch import nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x):
        return self.lin(x)

    def attribution(self, x):
        return self.lin.weight * x


def export_attributions(probes, x):
    return [p.attribution(x).numpy() for p in probes]
""",
            range=(19, 12, 19, 36),
            message='`p.attribution(x)` requires grad when `export_attributions()` runs with grad enabled (parameter `self.lin.weight` on line 15); `.numpy()` on it then raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass Probe(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(4, 1)\n\n    def forward(self, x):\n        return self.lin(x)\n\n    def attribution(self, x):\n        return self.lin.weight * x\n\n\ndef export_attributions(probes, x):\n    return [p.attribution(x).detach().numpy() for p in probes]\n',
            ),
            note="list elements typed by their members: only the file's `Probe` has `attribution()`, whatever the list is called",
            runtime='try:\n    export_attributions([Probe(), Probe()], torch.randn(3, 4))\n    raise AssertionError("no error")\nexcept RuntimeError as e:\n    assert "Can\'t call numpy() on Tensor that requires grad" in str(e)',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


def to_image(*channels):
    return np.stack([c.numpy() for c in channels])


def render(gen: nn.Module, z):
    r, g, b = gen(z).unbind(0)
    return to_image(r, g, b)
""",
            range=(8, 21, 8, 30),
            message='`c` requires grad when `to_image()` runs with grad enabled (from `gen(z)` on line 12); `.numpy()` on it then raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            severity=Severity.WARNING,
            fixes=(
                '\nimport numpy as np\nimport torch\nfrom torch import nn\n\n\ndef to_image(*channels):\n    return np.stack([c.detach().numpy() for c in channels])\n\n\ndef render(gen: nn.Module, z):\n    r, g, b = gen(z).unbind(0)\n    return to_image(r, g, b)\n',
            ),
            note="`*channels` binds the tuple of the call's arguments",
            runtime='try:\n    render(nn.Linear(4, 5), torch.randn(3, 4))\n    raise AssertionError("no error")\nexcept RuntimeError as e:\n    assert "Can\'t call numpy() on Tensor that requires grad" in str(e)',
        ),
        Invalid(
            """
import torch
from torch import nn


class CharRNN(nn.Module):
    def __init__(self, vocab=10, hidden=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y), h

    def generate(self, start, steps=3):
        x, h, result = start, None, []
        for _ in range(steps):
            logits, h = self.forward(x, h)
            probs = torch.softmax(logits[:, -1], -1)
            result.append(probs.numpy().argmax())
            x = probs.argmax(-1, keepdim=True)
        return result
""",
            range=(22, 26, 22, 39),
            message='`probs` requires grad when `generate()` runs with grad enabled (from `self.out(y)` on line 15); `.numpy()` on it then raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            severity=Severity.WARNING,
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\nclass CharRNN(nn.Module):\n    def __init__(self, vocab=10, hidden=16):\n        super().__init__()\n        self.emb = nn.Embedding(vocab, hidden)\n        self.rnn = nn.GRU(hidden, hidden, batch_first=True)\n        self.out = nn.Linear(hidden, vocab)\n\n    def forward(self, x, h=None):\n        y, h = self.rnn(self.emb(x), h)\n        return self.out(y), h\n\n    def generate(self, start, steps=3):\n        x, h, result = start, None, []\n        for _ in range(steps):\n            logits, h = self.forward(x, h)\n            probs = torch.softmax(logits[:, -1], -1)\n            result.append(probs.detach().numpy().argmax())\n            x = probs.argmax(-1, keepdim=True)\n        return result\n',
            ),
            note="a model's `generate()` its callers (in other files) may run under `torch.no_grad()`: the crash is not proved, so a warning",
            runtime='model = CharRNN()\nwith torch.no_grad():\n    assert len(model.generate(torch.zeros(1, 1, dtype=torch.long))) == 3\ntry:\n    model.generate(torch.zeros(1, 1, dtype=torch.long))\n    raise AssertionError("no error")\nexcept RuntimeError as e:\n    assert "Can\'t call numpy() on Tensor that requires grad" in str(e)',
        ),
        Invalid(
            """
import torch
from torch import nn


def as_float(value):
    if isinstance(value, float):
        return value
    return float(value.cpu().numpy())


def log_step(history, loss, lr):
    history.append((as_float(loss), as_float(lr)))


def train(model, batches, optimizer):
    history = []
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_step(history, loss, 0.1)
    return history


net = nn.Linear(4, 1)
train(net, [(torch.randn(5, 4), torch.randn(5, 1))], torch.optim.SGD(net.parameters(), lr=0.1))
""",
            range=(9, 17, 9, 36),
            message='`value` requires grad: `as_float(loss)` on line 13 passes `loss` (from `model(x)` on line 19); `.numpy()` on it raises "Can\'t call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."',
            fixes=(
                '\nimport torch\nfrom torch import nn\n\n\ndef as_float(value):\n    if isinstance(value, float):\n        return value\n    return float(value.detach().cpu().numpy())\n\n\ndef log_step(history, loss, lr):\n    history.append((as_float(loss), as_float(lr)))\n\n\ndef train(model, batches, optimizer):\n    history = []\n    for x, y in batches:\n        loss = ((model(x) - y) ** 2).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        log_step(history, loss, 0.1)\n    return history\n\n\nnet = nn.Linear(4, 1)\ntrain(net, [(torch.randn(5, 4), torch.randn(5, 1))], torch.optim.SGD(net.parameters(), lr=0.1))\n',
            ),
            note='a helper called with a loss at one call and a float at another: its parameter, walked with both, is unknown; the call that passes the loss makes its .numpy() raise',
            raises="Can't call numpy() on Tensor that requires grad",
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


class C1:
    def __init__(self, aa, bb):
        self.aa = aa
        self.bb = bb
        self.zz = nn.CrossEntropyLoss()

    def step2(self):
        tot = 0
        for x, y in self.bb:
            tot += self.zz(self.aa(x), y)
        return tot, len(self.bb)


def f2(cs):
    a, b = [], []
    for c in cs:
        t, n = c.step2()
        a.append(t)
        b.append(n)
    return np.sum([u * n for u, n in zip(a, b)]) / np.sum(b)
""",
            range=(26, 11, 26, 48),
            message='`[u * n for u, n in zip(a, b)]` holds tensors that require grad when `f2()` runs with grad enabled '
            '(from `self.zz(self.aa(x), y)` on line 16); `np.sum()` on it then raises "Can\'t call numpy() on Tensor '
            'that requires grad. Use tensor.detach().numpy() instead."',
            severity=Severity.WARNING,
            note="`self.zz` is one of torch's losses (`nn.CrossEntropyLoss()`), whatever it is called: `self.aa`, whose "
            "output it takes as a prediction, is a model",
            runtime='try:\n    f2([C1(nn.Linear(4, 3), [(torch.randn(2, 4), torch.tensor([0, 2]))])])\n'
            'except RuntimeError as e:\n    assert "Can\'t call numpy() on Tensor that requires grad" in str(e)\n'
            'else:\n    raise AssertionError("np.sum did not raise")',
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


class C1:
    def __init__(self, aa, bb):
        self.aa = aa
        self.bb = bb
        self.zz = nn.CrossEntropyLoss()

    def step2(self):
        tot = 0
        for x, y in self.bb:
            self.o = self.aa(x)
            tot += self.zz(self.o, y)
        return tot, len(self.bb)


def f2(cs):
    a, b = [], []
    for c in cs:
        t, n = c.step2()
        a.append(t)
        b.append(n)
    return np.sum([u * n for u, n in zip(a, b)]) / np.sum(b)
""",
            range=(27, 11, 27, 48),
            message='`[u * n for u, n in zip(a, b)]` holds tensors that require grad when `f2()` runs with grad enabled '
            '(from `self.zz(self.o, y)` on line 17); `np.sum()` on it then raises "Can\'t call numpy() on Tensor '
            'that requires grad. Use tensor.detach().numpy() instead."',
            severity=Severity.WARNING,
            note="the prediction kept on `self` between the model and the loss (`self.o = self.aa(x)`): still a prediction",
            runtime='try:\n    f2([C1(nn.Linear(4, 3), [(torch.randn(2, 4), torch.tensor([0, 2]))])])\n'
            'except RuntimeError as e:\n    assert "Can\'t call numpy() on Tensor that requires grad" in str(e)\n'
            'else:\n    raise AssertionError("np.sum did not raise")',
        ),
    ]


def _base_of(node: cst.BaseExpression) -> cst.BaseExpression:
    """The tensor before any `.cpu()` / `.to(...)` chain, where `.detach()` belongs."""
    while (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in PASS_THROUGH
    ):
        node = node.func.value
    return node
