"""The engine's model of a program: grad state with evidence, storage aliasing,
loop context and import aliases - read back through `describe_at`."""

from __future__ import annotations

import textwrap

import pytest

from gradguard.engine import analyze
from gradguard.engine.describe import describe_at


def state(source: str, marker: str, offset: int = 0) -> str | None:
    """Describe the expression at the first occurrence of `marker` (plus `offset` characters)."""
    source = textwrap.dedent(source)
    analysis = analyze(source, keep_flow=True)
    assert analysis.error is None and analysis.flow is not None
    for lineno, line in enumerate(source.splitlines(), 1):
        col = line.find(marker)
        if col != -1:
            return describe_at(analysis, lineno, col + offset)
    raise AssertionError(f"{marker!r} not in source")


PROGRAM = """
import torch as T
from torch import nn
import torch.nn.functional as F

model = nn.Linear(4, 2)
x = T.randn(3, 4)
out = model(x)
loss = F.mse_loss(out, T.zeros(3, 2))
y = out.detach()
v = out[:2]
c = out.clone()
n = loss.item()
k = out.argmax(1)
w = T.zeros(2, requires_grad=True)
with T.no_grad():
    quiet = model(x)
use(out, loss, y, v, c, n, k, w, quiet, model)
"""


@pytest.mark.parametrize(
    "marker,expected",
    [
        ("out, loss", "`out` carries an autograd graph: from `model(x)` on line 8"),
        ("loss, y", "`loss` carries an autograd graph: from `F.mse_loss(out, T.zeros(3, 2))` on line 9"),
        ("y, v", "`y` carries no graph (`.detach()` on line 10); `y` shares storage with `out` (from `out.detach()` on line 10)"),
        ("v, c", "`v` carries an autograd graph: from `model(x)` on line 8; `v` shares storage with `out` (from `out[:2]` on line 11)"),
        ("c, n", "`c` carries an autograd graph: from `model(x)` on line 8; `c` has its own storage (a copy)"),
        ("n, k", None),  # a Python number: nothing to say
        ("k, w", "`k` carries no graph (`.argmax()` on line 14)"),
        ("w, quiet", "`w` requires grad (`requires_grad=True` on line 15); it is a leaf, with no graph behind it"),
        ("quiet, model", "`quiet` carries no graph (computed inside `torch.no_grad()` on line 17)"),
        ("model)", "`model` is an `nn.Module`"),
    ],
)
def test_grad_state_and_storage(marker, expected):
    assert state(PROGRAM, marker) == expected


def test_hover_on_a_method_describes_its_receiver():
    src = """
    import torch
    from torch import nn
    net = nn.Linear(2, 2)
    feat = net(torch.ones(1, 2))
    copy = feat.detach()
    """
    assert state(src, "detach()") == "`feat` carries an autograd graph: from `net(torch.ones(1, 2))` on line 5"


def test_a_view_of_a_detach_alias_still_aliases_the_original():
    src = """
    import torch
    from torch import nn
    net = nn.Linear(2, 2)
    h = net(torch.ones(1, 2))
    d = h.detach()
    row = d[0]
    row
    """
    assert state(src, "row = ") is None  # the target of an assignment is not an evaluated expression
    analysis = analyze(textwrap.dedent(src), keep_flow=True)
    assert describe_at(analysis, 8, 0) == (
        "`row` carries no graph (`.detach()` on line 6); `row` shares storage with `h` (from `h.detach()` on line 6)"
    )


def test_arguments_flow_into_functions_called_here():
    src = """
    import torch
    from torch import nn

    def step(m, batch):
        pred = m(batch)
        return pred

    step(nn.Linear(2, 1), torch.ones(1, 2))
    """
    assert state(src, "return pred", 7) == "`pred` carries an autograd graph: from `m(batch)` on line 6"


def test_parameters_of_uncalled_functions_are_unknown():
    src = """
    import torch

    def step(m, batch):
        pred = m(batch)
        return pred
    """
    assert state(src, "return pred", 7) is None


def test_no_grad_decorator_and_set_grad_enabled():
    src = """
    import torch
    from torch import nn
    net = nn.Linear(2, 2)

    @torch.no_grad()
    def infer(x):
        a = net(x)
        return a

    def maybe(x, train):
        with torch.set_grad_enabled(train):
            b = net(x)
        return b

    infer(torch.ones(1, 2))
    maybe(torch.ones(1, 2), True)
    """
    assert state(src, "return a", 7) == "`a` carries no graph (computed inside `torch.no_grad()` on line 8)"
    assert state(src, "return b", 7) is None  # grad mode unknown: nothing claimed


def test_a_caller_under_no_grad_reaches_the_callee():
    src = """
    import torch
    from torch import nn
    net = nn.Linear(2, 2)

    def forward_only(x):
        z = net(x)
        return z

    with torch.no_grad():
        forward_only(torch.ones(1, 2))
    """
    # the evidence is the call under no_grad, not line 7 (which sits in no `with` block)
    assert state(src, "return z", 7) == "`z` carries no graph (`forward_only` is called inside `torch.no_grad()` on line 11)"


def test_self_submodules_of_module_classes():
    src = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.act = nn.ReLU()

        def forward(self, x):
            h = self.fc(x)
            return self.act(h)
    """
    assert state(src, "h = ") is None
    assert state(src, "h)") == "`h` carries an autograd graph: from `self.fc(x)` on line 12"
    assert state(src, "self.act(", 5) == "`self.act` is an `nn.Module`"


def test_file_without_torch_is_skipped_before_parsing():
    result = analyze("this is not python at all (((")
    assert result.skipped and result.error is None


def test_skip_file_comment():
    assert analyze("# gradguard: skip-file\nimport torch\n").skipped


@pytest.mark.parametrize(
    ("source", "message", "line", "column"),
    [
        ("import torch\nx = (1,\n", "'(' was never closed", 2, 4),
        # libcst's tokenizer puts these at line 1: CPython's place and words are used
        ("import torch\nif True:\n\tx = 1\n        y = 2\n", "inconsistent use of tabs and spaces in indentation", 4, 0),
        ("import torch\ny = '训练😀'\x00\n", "source code cannot contain a NUL byte", 2, 9),  # code points
        ('import torch\nprint "loss"\n', "Missing parentheses in call to 'print'. Did you mean print(...)?", 2, 0),
    ],
)
def test_syntax_error_position(source, message, line, column):
    error = analyze(source).error
    assert (error.message, error.line, error.column, error.syntax) == (message, line, column, True)


def test_a_method_named_like_the_class_key_does_not_confuse_the_engine():
    # accelerate's data_loader.py defines `@property def __class__(self)`.
    src = """
    import torch

    class Wrapper:
        @property
        def __class__(self):
            return object

        def step(self):
            return torch.zeros(1)
    """
    result = analyze(textwrap.dedent(src))
    assert result.error is None and result.internal_errors == []


def test_evidence_from_use_says_why():
    """A parameter nobody constructed here: its uses tell what it holds, and the hover says which use."""
    src = """
    import torch


    def train(model, loader, optimizer, criterion):
        model.train()
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    assert state(src, "model(x)") == "`model` is an `nn.Module` (`model.train()` on line 6)"
    # (`criterion` is a loss by that use - given `model`'s output and a target, its result back-propagated -
    # so `loss` is known from where it was made)
    assert state(src, "loss.backward") == "`loss` carries an autograd graph: from `criterion(model(x), y)` on line 8"
    assert state(src, "optimizer.step", 1) is None  # an optimizer is never called: zero_grad/step say nothing


def test_evidence_from_the_members_a_name_uses():
    """`decoder.init_state(...)` on a parameter: only one nn.Module class of the file has that method
    (and the other members used), so the parameter is an instance of it; `model.blocks[i].dense.weight`:
    only one class sets `self.dense` to a torch layer, so `.weight` is that layer's parameter."""
    src = """
    import torch
    from torch import nn


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(4, 4)
            self.dense = nn.Linear(4, 4)

        def init_state(self, features):
            return torch.tanh(features)


    def greedy(decoder, features):
        h = decoder.init_state(features)
        return decoder.cell(features, h)


    def edit(model, i):
        weight = model.blocks[i].dense.weight
        return weight


    def encode_all(tokenizer, texts):
        return [tokenizer.init_state(t) for t in texts]
    """
    assert state(src, "decoder.cell") == (
        "`decoder` is an `nn.Module` (`decoder.init_state`: only `Decoder`, an nn.Module of this file, "
        "has that method; on line 17)"
    )
    assert state(src, "return weight", 7) == (
        "`weight` requires grad (`.dense` is an `nn.Linear` in `Decoder`, the only class of this file with a "
        "`.dense`, on line 10); it is a leaf, with no graph behind it"
    )
    # one method only `Decoder` defines is enough, whatever the receiver is called
    assert state(src, "tokenizer.init_state") == (
        "`tokenizer` is an `nn.Module` (`tokenizer.init_state`: only `Decoder`, an nn.Module of this file, "
        "has that method; on line 27)"
    )


def test_evidence_from_a_call_that_fits_one_forward():
    """`model(frame, memory=state)["memory"]` for `Tracker.forward(self, frame, memory=None)` returning
    `{"memory": ..., "score": ...}`: a name called the way one nn.Module of the file declares its
    forward and read the way it returns (keywords it declares, keys of the dict it returns) is an
    instance of it. Spellings are no evidence (rules.md: names are never the only reason): arguments
    named as its parameters and a receiver named after the class say nothing, so `tracker(frame,
    memory)` is as unknown as the same call renamed. A keyword the forward does not declare, a key
    its dict lacks, or one agreement alone, says nothing."""
    src = """
    import torch
    from torch import nn


    class Tracker(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(4, 4)

        def forward(self, frame, memory=None):
            h = self.cell(frame, memory)
            return {"memory": h, "score": h.sum(-1)}


    def stream(model, frame, state):
        return model(frame, memory=state)["memory"]


    def watch(net, frame):
        out = net(frame)
        return out["memory"], out["score"]


    def follow(tracker, frame, memory):
        return tracker(frame, memory)


    def renamed(a1, a2, a3):
        return a1(a2, a3)


    def smooth(update, frame, memory):
        return update(frame, memory=memory, decay=0.9)


    def once(fn, frame):
        return fn(frame, memory=None)


    def other(g, frame):
        out = g(frame, memory=None)
        return out["memory"], out["logits"]
    """
    assert state(src, "model(frame") == (
        "`model` is an `nn.Module` (`model(frame, memory=state)`: the call fits `Tracker.forward()` (`memory=`, "
        "`[\"memory\"]`), an nn.Module of this file; on line 17)"
    )
    assert state(src, "net(frame") == (
        "`net` is an `nn.Module` (`net(frame)`: the call fits `Tracker.forward()` (`[\"memory\"]`, `[\"score\"]`), "
        "an nn.Module of this file; on line 21)"
    )
    assert state(src, "tracker(frame") is None  # parameter names and the class's name: spellings
    assert state(src, "a1(a2") is None  # the same call renamed: the same answer
    assert state(src, "update(frame") is None  # `decay=` is no parameter of Tracker.forward
    assert state(src, "fn(frame") is None  # one agreement
    assert state(src, "g(frame") is None  # "logits" is no key of what Tracker.forward returns


def test_evidence_from_results_unpacked_as_forward_returns_them():
    """`a, b = net(image, scale=2.0)` for `forward(self, x, scale=1.0)` returning `self.hm(x).sigmoid(),
    self.box(x)`: results unpacked to as many names as forward returns agree with it; another number
    of names rules the class out. A result used as only a tensor can be (`box.cpu()`) where forward
    returns a computed value is a second agreement, whatever the results are called; where forward
    returns a literal there, the class is ruled out."""
    src = """
    import torch
    from torch import nn


    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            self.hm = nn.Conv2d(3, 1, 1)
            self.box = nn.Conv2d(3, 4, 1)

        def forward(self, x, scale=1.0):
            return self.hm(x * scale).sigmoid(), self.box(x)


    def detect(net, image):
        a, b = net(image, scale=2.0)
        return a, b


    def split(fn, image):
        hm, box = fn(image)
        return hm, box


    def used(g, image):
        p, q = g(image)
        return q.flatten(2)[0].data.numpy()


    def three(fn, image):
        a, b, c = fn(image, scale=2.0)
        return c


    class Tagged(nn.Module):
        def forward(self, x):
            return x, "tag"


    def literal(h, image):
        p, q = h(image)
        return q.cpu()
    """
    assert state(src, "net(image") == (
        "`net` is an `nn.Module` (`net(image, scale=2.0)`: the call fits `Detector.forward()` (`scale=`, "
        "2 results unpacked), an nn.Module of this file; on line 17)"
    )
    assert state(src, "hm, box = fn", 10) is None  # names as forward's return spells them: no evidence
    assert state(src, "p, q = g", 7) == (
        "`g` is an `nn.Module` (`g(image)`: the call fits `Detector.forward()` (2 results unpacked, "
        "`q` used as a tensor), an nn.Module of this file; on line 27)"
    )
    assert state(src, "a, b, c = fn", 10) is None  # three names for two results
    # `Tagged.forward` returns a string where `q.cpu()` needs a tensor: ruled out, so Detector alone fits
    assert state(src, "p, q = h", 7) == (
        "`h` is an `nn.Module` (`h(image)`: the call fits `Detector.forward()` (2 results unpacked, "
        "`q` used as a tensor), an nn.Module of this file; on line 42)"
    )


def test_evidence_from_a_method_whatever_the_name():
    """`user.test(x)` and `runner.test(x)`, where only `User` defines `test`: one method no other class
    of the file defines is enough, and the name of the receiver plays no part (rules.md: names are
    never the only reason)."""
    src = """
    import torch
    from torch import nn


    class User:
        def __init__(self, model):
            self.model = model

        def test(self, x):
            return self.model(x)


    def evaluate(users, x):
        for user in users:
            out = user.test(x)
        return out


    def other(runner, x):
        return runner.test(x)
    """
    assert state(src, "user.test") == (
        "`user` is a `User` (`user.test`: only `User`, a class of this file, has that method; on line 16)"
    )
    assert state(src, "runner.test") == (
        "`runner` is a `User` (`runner.test`: only `User`, a class of this file, has that method; on line 21)"
    )


def test_evidence_from_what_a_loss_takes_as_its_prediction():
    """`out = self.model(x); self.criterion(out, y)`: what the code was given (an attribute of self,
    a parameter) and whose output a loss takes is a model; a function imported from elsewhere is not."""
    src = """
    import torch
    from utils import decode_boxes


    class Evaluator:
        def __init__(self, model, criterion):
            self.model = model
            self.criterion = criterion

        def run(self, x, y):
            out = self.model(x)
            boxes = decode_boxes(out)
            return self.criterion(out, y).item() + self.criterion(boxes, y).item()


    def validate(net, x, y, loss_fn):
        return loss_fn(net(x), y).item()
    """
    assert state(src, "model(x)", 1) == (
        "`self.model` is an `nn.Module` (`self.criterion(out, y)` takes its output as a prediction on line 14)"
    )
    assert state(src, "net(x)") == "`net` is an `nn.Module` (`loss_fn(net(x), y)` takes its output as a prediction on line 18)"
    assert state(src, "decode_boxes(out)") is None


def test_sampled_indices_and_detection_labels_carry_no_graph():
    src = """
    import torch
    net = torch.nn.Linear(4, 3)
    policy = torch.softmax(net(torch.randn(2, 4)), dim=1)
    action = policy.multinomial(1)
    outputs = net(torch.randn(2, 4))
    labels = outputs["labels"]
    print(action, labels)
    """
    assert state(src, "action, labels") == "`action` carries no graph (`.multinomial()` on line 5)"
    assert state(src, "labels)") == '`labels` carries no graph (`outputs["labels"]`, class indices on line 7)'


def test_freezing_a_model_then_giving_it_a_new_head_still_trains_that_head():
    # `for p in model.parameters(): p.requires_grad = False` makes the model's forward record
    # no graph (GG103 stays silent); a head assigned afterwards has parameters that do.
    frozen = textwrap.dedent(
        """\
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        for param in model.parameters():
            param.requires_grad = False
        model.eval()
        scores = model(torch.randn(3, 4))
        """
    )
    assert analyze(frozen).findings == []
    head = frozen.replace("model.eval()\n", "model.fc = nn.Linear(8, 2)\nmodel.eval()\n")
    assert [(f.code, f.range.start.line) for f in analyze(head).findings] == [("GG103", 9)]


def test_a_backward_proves_only_the_callables_terms_of_its_sum_0_dim():
    # Beta-VAE's `klds.sum(1).mean(0, True)` is a 1-element vector: `loss = recon + beta * kld` then has
    # one element, so `loss.backward()` runs and `kld.data[0]` works (torch 2.13); `main`, computed by
    # the criterion the code was handed, is 0-dim and `main.data[0]` raises IndexError.
    src = textwrap.dedent("""
    import torch


    def train(enc, criterion, x, y, opt, log):
        mu, logvar = enc(x)
        klds = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())
        kld = klds.sum(1).mean(0, True)
        main = criterion(mu, y)
        loss = main + 4.0 * kld
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append(kld.data[0])
        log.append(main.data[0])
    """)
    errors = [(f.code, f.range.start.line) for f in analyze(src).findings if f.severity.value == "error"]
    assert errors == [("GG202", 15)]  # main.data[0], not kld.data[0]


def test_evidence_from_a_class_joined_from_another_file_names_that_file():
    """A class of another module analysed with the file (Settings.neighbours) is that module's, not
    "of this file", in what the engine says of a name it tells."""
    from gradguard.settings import Settings

    cell = textwrap.dedent("""\
    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 4)

        def forward(self, x, h):
            return torch.tanh(self.fc(torch.cat([x, h], dim=1)))
    """)
    stream = textwrap.dedent("""\
    import torch
    from torch import nn
    from pkg.rnn import Cell


    def stream(cell, frames):
        h = torch.zeros(1, 4)
        for x in frames:
            h = cell(x=x, h=h)
        return h.argmax(-1)
    """)
    for neighbours, where in (((("pkg/rnn.py", 4, cell),), "pkg/rnn.py"), ((), None)):
        source = stream if neighbours else stream.replace("from pkg.rnn import Cell\n", "") + "\n\n" + cell
        analysis = analyze(source, Settings(neighbours=neighbours), keep_flow=True)
        line = source[:source.index("h = cell(")].count("\n") + 1
        said = describe_at(analysis, line, 12)
        assert f"an nn.Module of {where or 'this file'};" in said, said


def test_a_prediction_after_a_module_level_training_loop_is_reported_without_a_crash():
    """GG103 asked whether module-level code back-propagates a graph of unseen source with the
    function's node, and module-level code has none (found by tests/robustness/test_engine_fuzz.py)."""
    source = textwrap.dedent("""\
    import torch

    W = torch.randn(3, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)


    def net(X):
        return X @ W + b


    for _ in range(3):
        loss = ((net(torch.ones(4, 3)) - 1) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            W -= 0.1 * W.grad
            b -= 0.1 * b.grad
            W.grad.zero_()
            b.grad.zero_()

    pred = net(torch.ones(1, 3))
    print("prediction:", pred.item())
    """)
    analysis = analyze(source)
    assert (analysis.internal_errors, [(f.code, f.range.start.line) for f in analysis.findings]) == ([], [("GG103", 20)])


HANDED_VAE = """
import torch
from torch import nn


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc, self.dec = nn.Linear(4, 2), nn.Linear(2, 4)

    def encode(self, x):
        return self.enc(x)

    def decode(self, z):
        return self.dec(z)


def as_dict(value):
    return {"out": value}


def reconstruct(vae, x):
    ROUTED
    return vae.decode(z).detach().numpy()
"""


@pytest.mark.parametrize("routed,used,line", [
    ('z = as_dict(vae)["out"].encode(x)', 'as_dict(vae)["out"].encode', 23),
    ("for key, value in as_dict(vae).items():\n        z = value.encode(x)", "value.encode", 24),
])
def test_evidence_from_use_reads_through_a_helper_that_hands_the_value_on(routed, used, line):
    # the methods used on what a helper of the file hands on are used on `vae` (`encode` and `decode`:
    # only VAE has both), however routed: an item of the dict it returns, or a loop over its items
    assert state(HANDED_VAE.replace("ROUTED", routed), "vae.decode") == (
        f"`vae` is an `nn.Module` (`{used}`: only `VAE`, an nn.Module of this file, has that method; on line {line})")


def test_a_call_read_back_through_a_loop_over_a_dict_fits_one_forward():
    # `outputs` is what `model(ids, state=state)` returned, read back from the dict `as_dict` builds:
    # the keys read from it agree with the dict Rwkv.forward() returns
    source = """
    import torch
    from torch import nn


    class Rwkv(nn.Module):
        def __init__(self):
            super().__init__()
            self.mix = nn.Linear(4, 4)

        def forward(self, ids, state=None):
            return {"logits": self.mix(ids), "state": state}


    def as_dict(value):
        return {"out": value}


    def stream(model, chunks):
        state = None
        for ids in chunks:
            for key, value in as_dict(model(ids, state=state)).items():
                outputs = value
            state = outputs["state"]
            yield outputs["logits"].argmax(-1)
    """
    assert state(source, "model(ids") == (
        "`model` is an `nn.Module` (`model(ids, state=state)`: the call fits `Rwkv.forward()` (`state=`, "
        '`["logits"]`, `["state"]`), an nn.Module of this file; on line 22)')


def test_an_editors_document_with_joined_classes_is_parsed_again_only_where_edited():
    """A document analysed with classes of other modules (Settings.neighbours) keeps its incremental
    parse: after an edit only the statements around the edit are parsed again, and the findings are
    a fresh analysis's."""
    from gradguard.engine import Incremental
    from gradguard.settings import Settings

    net = textwrap.dedent("""\
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 1)

        def forward(self, x):
            return self.fc(x)
    """)
    train = textwrap.dedent("""\
    import torch
    from pkg.net import Net


    def fit(batches, lr=0.1):
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        history = []
        for x, y in batches:
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            history.append(loss)
        return history


    def evaluate(batches):
        return len(batches)
    """)
    settings = Settings(neighbours=(("pkg/net.py", 1, net),))
    incremental = Incremental()

    def found(analysis):
        return [(f.code, f.range.start.line, f.range.start.column, f.message) for f in analysis.findings]

    first = analyze(train, settings, incremental=incremental)
    assert [(code, line) for code, line, _, _ in found(first)] == [("GG101", 14)]
    edited = train.replace("return len(batches)", "return len(batches) + 1")
    again = analyze(edited, settings, incremental=incremental)
    # the edited function and its neighbours in the module (the splice's margin), of the file's four
    # statements and the joined class: not the imports
    assert (again.reparsed, len(again.module.body)) == (3, 5)
    assert found(again) == found(analyze(edited, settings)) == found(first)
