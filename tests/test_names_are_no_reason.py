"""rules.md, "Names are never the only reason": a finding must not appear or vanish only because a
user-defined identifier changed. Each program here was once decided by a spelling (a receiver
named after a class, arguments named as forward's parameters, results unpacked to the names
forward returns, a function called `generate`, `train_step`, `clip_` or `_checkpointed_forward`,
an initialiser called `_init_weights`, a class called `ToyModel`, a context manager called
`eval_mode`); it is checked as written and with every identifier it defines
renamed by bench/variants.py's `rename` transformation (functions `f1`, classes `C1`, parameters
`p1`, variables `v1`, attributes `a1`), and both give the same diagnostics, line for line.
The examples' runtime claims are the rules' own (tests/runtime/test_runtime_truth.py)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from corpus import oracle
from gradguard.engine import analyze
from gradguard.rules import all_rules
from gradguard.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "bench"))  # after tests/: bench/corpus.py must not shadow the corpus package

from transforms import rename  # noqa: E402
from transforms.subject import Subject, finish  # noqa: E402

HEADER = "# source: https://example.org\n# label: {code} {line}\n# effect: graph_grows\n"


def renamed(source: str, code: str, line: int) -> str:
    """`source` with every identifier it defines renamed (the header bench/variants.py reads kept)."""
    head = HEADER.format(code=code, line=line + 3)
    program = oracle.parse(head + source, Path(f"/corpus/{code}/names.py"))
    (outcome,) = rename.variants(Subject(program))
    assert outcome.code is not None, outcome.reason
    text, _ = finish(outcome.code, program)
    return text[len(head):]


def diagnostics(source: str, select: tuple = ("GG",)) -> list:
    return sorted((f.code, f.range.start.line) for f in analyze(source, Settings(select=select)).findings)


def example(code: str, kind: str, marker: str) -> str:
    """The one `kind` example of rule `code` whose code holds `marker`."""
    rule = next(r for r in all_rules() if r.code == code)
    (found,) = [ex.code for ex in getattr(rule, kind) if marker in ex.code]
    return found


# (rule, example kind, a line of its code): the rule examples whose finding or silence a name once decided
EXAMPLES = [
    # the file's Tracker by `memory=` and two results unpacked; once by `tracker(frame, memory)` and the class's name
    ("GG102", "INVALID", "scores, memory = tracker(frame, memory=memory)"),
    # the file's Stepper by two keywords in a helper; once by arguments named as its parameters
    ("GG102", "INVALID", "return model(tokens=tokens, state=state)"),
    # a rollout found by its `.numpy()` actions; once only when the function was called `rollout`
    ("GG102", "INVALID", "def run_episode(policy, env, steps):"),
    # the file's Deformer by `cage=` and the key read; once by arguments named as its parameters
    ("GG301", "INVALID", "outputs = model(points, cage=cage)"),
    # an initialisation hook silent because it dispatches on the module it is given; once because of `init`
    ("GG203", "VALID", "def _init_weights(self, module):"),
    # given weights edited by `init_head`: once silenced by the word `init`
    ("GG203", "INVALID", "def init_head(model):"),
    # the file's Detector by two results unpacked and `box` used as a tensor (`.data.numpy()`); once by
    # the unpacked names being those of the layers forward's `return` calls (`self.heatmap`, `self.box`)
    ("GG103", "INVALID", "heatmap, box = net(torch.from_numpy(image)[None])"),
    ("GG103", "INVALID", "heatmap, box = tagged(net(torch.from_numpy(image)[None]), \"raw\")[0]"),
]


@pytest.mark.parametrize("code,kind,marker", EXAMPLES, ids=[f"{c}-{k.lower()}-{n}" for n, (c, k, _) in enumerate(EXAMPLES)])
def test_a_rule_example_renamed_gives_the_same_diagnostics(code, kind, marker):
    source = example(code, kind, marker)
    found = diagnostics(source)
    assert any(c == code for c, _ in found) == (kind == "INVALID")
    line = next((n for c, n in found if c == code), None) or source[:source.index(marker)].count("\n") + 1
    other = renamed(source, code, line)
    assert other != source
    assert diagnostics(other) == found


def test_a_corpus_program_renamed_gives_the_same_diagnostics():
    """tests/corpus/GG103/dbface_detect_loaded_weights.py: `hm, box, landmark = model(torch_image)`
    for a forward returning `self.hm(x).sigmoid(), self.box(x), self.landmark(x)` - found by the
    three results unpacked and `box.cpu()` / `hm.numel()`, as written and renamed (once by the
    names matching the layers')."""
    text = (ROOT / "tests/corpus/GG103/dbface_detect_loaded_weights.py").read_text()
    source = "".join(text.splitlines(keepends=True)[4:])  # (the header renamed() writes again)
    found = diagnostics(source)
    line = source[:source.index("hm, box, landmark = model(")].count("\n") + 1
    assert ("GG103", line) in found
    other = renamed(source, "GG103", line)
    assert other != source and "hm, box, landmark" not in other
    assert diagnostics(other) == found


# A call named as the class and its forward's parameters, and nothing else: no evidence either way.
SPELLED = """
import torch
from torch import nn


class LocationAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.project = nn.Linear(1, hidden_size)
        self.score = nn.Linear(hidden_size, 1)

    def forward(self, last_alignment):
        return torch.softmax(self.score(self.project(last_alignment.unsqueeze(2))).squeeze(2), dim=1)


def align_frames(attention, batch_size, num_tokens, num_frames):
    last_alignment = torch.zeros(batch_size, num_tokens)
    alignments = []
    for _ in range(num_frames):
        last_alignment = attention(last_alignment)
        alignments.append(last_alignment.argmax(dim=1))
    return torch.stack(alignments, dim=1)
"""


def test_a_call_spelled_like_a_class_and_its_parameters_is_no_evidence():
    """`attention(last_alignment)` for `LocationAttention.forward(self, last_alignment)`: the called
    name is a word of the class's name and the argument is named as the parameter, but a spelling
    is no fact of the class's API; renamed, the program is the same program, so it is silent both
    ways (bench: tests/corpus/GG102/location_attention_alignment_fed_back.py, now missed)."""
    source = textwrap.dedent(SPELLED)
    assert diagnostics(source) == []
    assert diagnostics(renamed(source, "GG102", 20)) == []


def test_the_shape_of_a_forward_in_another_file_is_read():
    """project/neighbours.py reads the forward of another file's class with `ast`: the number of
    items it returns, the keys of the dict it returns (not the names of the items: a spelling).
    (A tuple return once crashed the project scan: every file of a checkout went unchecked.)"""
    import ast

    from gradguard.project import neighbours

    tuple_fn = ast.parse("def forward(self, x):\n    return self.hm(x).sigmoid(), self.box(x)\n").body[0]
    dict_fn = ast.parse("def forward(self, x, state=None):\n    return {'logits': x, 'state': state}\n").body[0]
    assert neighbours._returned_shape(tuple_fn) == (2, frozenset())
    assert neighbours._returned_shape(dict_fn) == (0, frozenset({"logits", "state"}))


def test_a_keyword_only_kwargs_takes_is_no_agreement():
    """`tok(texts, max_length=3, padding="max_length")` beside a `forward(self, x, max_length=None,
    **kwargs)`: `padding=` is accepted by `**kwargs`, not declared, so only `max_length=` agrees -
    one agreement, and a tokenizer is not taken for the model (`Masked` declares both, but the call
    leaves its `mask` out). Found on peft's adalora example: a GG103 on `tokenizer(...)` while the
    agreements were being rewritten."""
    source = textwrap.dedent("""
    import torch
    from torch import nn


    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, max_length=None, **kwargs):
            return self.fc(x)


    class Masked(nn.Module):
        def forward(self, x, mask, max_length=None, padding=None):
            return x * mask


    def preprocess(tok, texts):
        labels = tok(texts, max_length=3, padding="max_length", truncation=True)
        return labels["input_ids"] == 0
    """)
    from gradguard.engine.describe import describe_at

    analysis = analyze(source, keep_flow=True)
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "labels = tok(" in text)
    assert describe_at(analysis, line, 13) is None  # `tok`: nothing known


# Programs a name once decided (issue 33, item 6), each with the code, the line of its finding (or of
# what stays silent) and the rules selected: as written and renamed, the same diagnostics.
PROGRAMS = {
    # engine/model.py MODEL_SUFFIXES: a class of a base from elsewhere was module-like when named
    # `...Model`; now when it does what only a module does (sets torch layers in `__init__`, uses nn.Module's
    # API on self) - its uncalled method is the model's internals either way (GG101 leaves it alone)
    "module_like_by_layers": ("GG101", 17, ("GG",), """
import torch
from torch import nn

from toolkit import Base


class ToyModel(Base):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.history = []

    def run(self, xs):
        for x in xs:
            out = self.fc(x)
            self.history.append(out)
        return out
"""),
    # GG501's HOT_FUNCTIONS: `train_step`/`step` made a clone hot by name; now a function that
    # back-propagates or steps an optimizer is a training step, run once per batch
    "clone_in_a_training_step": ("GG501", 6, ("GG501",), """
import torch


def train_step(model, optimizer, x, y):
    target = y.clone()
    loss = ((model(x) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


net = torch.nn.Linear(4, 2)
train_step(net, torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(3, 4), torch.randn(3, 2))
"""),
    # GG201: a function whose name ends with `_` was left alone; the write changes the caller's tensor
    # whatever the function is called
    "detached_write_in_an_underscore_function": ("GG201", 7, ("GG",), """
import torch


def clip_(scores):
    probs = scores.detach()
    probs.clamp_(0, 1)
"""),
    # `name.endswith("forward")` (GG101, GG104, GG202, outside.py): forward code is now `forward`, a
    # function defined in it, a method the module hands out uncalled (`checkpoint(self._block, x)`),
    # or one only forward code calls (engine/model.py forward_code)
    "state_in_a_checkpointed_method": ("GG104", 15, ("GG",), """
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class RunningNorm(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)
        self.register_buffer("running_mean", torch.zeros(features))

    def _checkpointed_forward(self, x):
        h = self.fc(x)
        self.running_mean = 0.9 * self.running_mean + 0.1 * h.mean(0)
        return h - self.running_mean

    def forward(self, x):
        return checkpoint(self._checkpointed_forward, x, use_reentrant=False)
"""),
    # engine/gradmodes.py: a `with` of a context manager of this file is read from its code - one that
    # only calls `.eval()` leaves grad on (once unknown when it was called `eval_mode`), one that yields
    # inside `torch.no_grad()` turns it off (once unknown, whatever it was called)
    "context_managers_read_from_their_code": ("GG103", 29, ("GG",), """
import contextlib

import torch
from torch import nn


@contextlib.contextmanager
def no_grad_scope(model):
    model.eval()
    with torch.no_grad():
        yield


@contextlib.contextmanager
def eval_mode(model):
    model.eval()
    yield


def score(model, x):
    with no_grad_scope(model):
        out = model(x)
    return out.argmax(1).tolist()


def score_again(model, x):
    with eval_mode(model):
        out = model(x)
    return out.argmax(1).tolist()


net = nn.Linear(4, 2)
print(score(net, torch.randn(3, 4)), score_again(net, torch.randn(3, 4)))
"""),
    # ... and one that hands on a switch it imports (whose code is elsewhere) is that switch: unknown
    "context_manager_handing_on_an_imported_switch": ("GG103", 14, ("GG",), """
import torch
from torch import nn
from utils import smart_inference_mode


def quiet():
    return smart_inference_mode()


def score(model, x):
    model.eval()
    with quiet():
        out = model(x)
    return out.argmax(1).tolist()


net = nn.Linear(4, 2)
print(score(net, torch.randn(3, 4)))
"""),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_program_renamed_gives_the_same_diagnostics(name):
    code, line, select, source = PROGRAMS[name]
    found = diagnostics(source, select)
    other = renamed(source, code, line)
    assert other != source
    assert diagnostics(other, select) == found


def test_what_the_programs_report():
    """What each program above reports, as written (the renamed ones report the same)."""
    got = {name: diagnostics(source, select) for name, (_, _, select, source) in PROGRAMS.items()}
    assert got == {
        "module_like_by_layers": [],
        "clone_in_a_training_step": [("GG501", 6)],
        "detached_write_in_an_underscore_function": [("GG201", 7)],
        "state_in_a_checkpointed_method": [("GG104", 15)],
        "context_managers_read_from_their_code": [("GG103", 29)],
        "context_manager_handing_on_an_imported_switch": [],
    }
