"""Programs for fuzzing the engine: a grammar of training-loop idioms, and
mutations of the bundled examples and of every rule's VALID / INVALID code.

Shared by the bounded tests in this directory and the longer `bench/fuzz.py` run.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from gradguard.rules import all_rules

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_FILES = sorted((ROOT / "examples").glob("*.py"))

# Every corpus program with a name for failure reports: the examples, then each rule example.
SEEDS: list[tuple[str, str]] = [(f"examples/{p.name}", p.read_text()) for p in EXAMPLE_FILES] + [
    (f"{rule.code}-{kind.lower()}-{i}", ex.code)
    for rule in all_rules()
    for kind in ("VALID", "INVALID")
    for i, ex in enumerate(getattr(rule, kind))
]

# ------------------------------------------------------------------ the grammar
HEADER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 3))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 3), torch.randn(4, 3)) for _ in range(2)]
weight = torch.zeros(3, requires_grad=True)
losses = []
"""

VARS = ("x", "y", "out", "loss", "h", "feat", "t", "p", "weight")
CONTAINERS = ("losses", "history", "self.cache", "outs[k]")

# Expressions: {v} is a variable, {e} a nested expression, {c} a container.
LEAVES = (
    "{v}",
    "torch.randn(4, 3)",
    "torch.zeros(3, requires_grad=True)",
    "nn.Parameter(torch.randn(3))",
    "0.5",
    "model.parameters()",
)
WRAPPERS = (
    "model({e})",
    "criterion({e}, y)",
    "F.relu({e})",
    "{e}.detach()",
    "{e}.clone()",
    "{e}.detach().clone()",
    "{e}.item()",
    "{e}.data",
    "{e}.numpy()",
    "{e}.sum()",
    "{e}.mean()",
    "{e}.cpu()",
    "{e}[0]",
    "({e} * 2)",
    "({e} + {v})",
    "torch.tensor({e})",
    "torch.stack({c})",
    "[{e} for _ in range(3)]",
    "({e}, {v})",
    "{e}.view(-1)",
    "{e}.requires_grad_()",
)
SIMPLE = (
    "{v} = {e}",
    "{v}, {w} = {e}, {f}",
    "{c}.append({e})",
    "{c} += [{e}]",
    "{v}.backward()",
    "({e}).backward()",
    "{v} += {e}",
    "{v} -= 0.1 * {v}.grad",
    "{v}.add_({e})",
    "{v}.mul_(2)",
    "{v}[0] = 0",
    "{v}.data.zero_()",
    "optimizer.zero_grad()",
    "optimizer.step()",
    "print({e})",
    "model.eval()",
    "model.train()",
    "del {v}",
    "pass",
)
BLOCKS = (
    "for x, y in loader:",
    "for step in range(10):",
    "for {v} in {c}:",
    "while {v} is not None:",
    "with torch.no_grad():",
    "with torch.inference_mode():",
    "with torch.enable_grad():",
    "if {v} is None:",
    "try:",
)
# Multi-line idioms the rules are about, dropped into blocks as a whole.
IDIOMS = (
    "for x, y in loader:\n    {v} = model(x)\n    loss = criterion({v}, y)\n    loss.backward()\n    {c}.append(loss)",
    "rnn = nn.RNN(3, 3)\nfor x, y in loader:\n    {v}, h = rnn(x, h)\n    loss = criterion({v}, y)\n    loss.backward()",
    "{v} = model(x)\n{w} = {v}.detach()\n{w}.add_(1)\nprint({v}.sum())",
    "pred = model(x)\nloss = criterion(pred.detach(), y) + criterion(pred, y)\nloss.backward()",
    "{v} = model(x)\nprint({v}.numpy())",
    "{v} = model(x)\n{w} = {v}.clone()\nprint({w}.sum())",
    "h = model(x + h) if h is not None else model(x)\nloss = criterion(h, y)\nloss.backward()",
    "with torch.no_grad():\n    loss = criterion(model(x), y)\nloss.backward()",
    "{v} = torch.tensor(model(x))",
    "loss = criterion(model(x), y)\nloss = torch.tensor(loss.item(), requires_grad=True)\nloss.backward()",
    "{v} = self.fc(x)\nself.state = self.state * 0.9 + {v}.mean()",
    "probs = model(x).softmax(-1)\nnormed = probs.detach()\nnormed /= 2\nprint(probs.sum())",
)
COMMENTS = ("  # keep me", "  # noqa: GG101", "  # gradguard: ignore[GG501]", "")


@st.composite
def expression(draw, depth: int = 0) -> str:
    if depth >= 3 or draw(st.integers(0, 2)) == 0:
        text = draw(st.sampled_from(LEAVES))
    else:
        text = draw(st.sampled_from(WRAPPERS)).replace("{e}", draw(expression(depth + 1)), 1)
    return _fill(draw, text)


def _fill(draw, text: str) -> str:
    for slot, pool in (("{v}", VARS), ("{w}", VARS), ("{c}", CONTAINERS)):
        while slot in text:
            text = text.replace(slot, draw(st.sampled_from(pool)), 1)
    while "{e}" in text or "{f}" in text:
        slot = "{e}" if "{e}" in text else "{f}"
        text = text.replace(slot, draw(expression(3)), 1)
    return text


@st.composite
def block(draw, indent: str, depth: int, in_function: bool, backward: bool = True) -> list[str]:
    """Statements; `backward=False` in a forward(): a forward pass that runs backward itself is no idiom."""
    simple = SIMPLE if backward else tuple(t for t in SIMPLE if "backward" not in t)
    idioms = IDIOMS if backward else tuple(t for t in IDIOMS if "backward" not in t)
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 7)) if depth < 3 else 0
        if kind >= 6:
            idiom = _fill(draw, draw(st.sampled_from(idioms)))
            lines += [indent + line for line in idiom.split("\n")]
        elif kind <= 3:
            line = _fill(draw, draw(st.sampled_from(simple)))
            if in_function and draw(st.integers(0, 9)) == 0:
                line = "return " + draw(expression())
            lines.append(indent + line + draw(st.sampled_from(COMMENTS)))
        else:
            head = _fill(draw, draw(st.sampled_from(BLOCKS)))
            lines.append(indent + head)
            lines += draw(block(indent + "    ", depth + 1, in_function, backward))
            if head == "try:":
                lines += [indent + "except RuntimeError:", indent + "    pass"]
    return lines


@st.composite
def function(draw, index: int) -> list[str]:
    decorator = draw(st.sampled_from(("", "@torch.no_grad()", "@torch.inference_mode()")))
    params = draw(st.sampled_from(("model, loader", "model, x", "x, y", "")))
    lines = [decorator] if decorator else []
    lines.append(f"def step_{index}({params}):")
    lines += draw(block("    ", 1, True))
    return lines


@st.composite
def module_class(draw, index: int) -> list[str]:
    lines = [
        f"class Net{index}(nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        "        self.fc = nn.Linear(3, 3)",
        "        self.cache = []",
        "        self.state = torch.zeros(3)",
        "",
        "    def forward(self, x):",
        "        h = self.fc(x)",
    ]
    lines += draw(block("        ", 2, True, backward=False))
    lines.append("        return h")
    return lines


@st.composite
def training_program(draw) -> str:
    """A module: the header, then functions, classes, calls of them and top-level loops."""
    lines = HEADER.splitlines()
    lines += ["history, outs, k, x, y, h, t, p = [], {}, 0, None, None, None, None, None"]
    for index in range(draw(st.integers(1, 4))):
        part = draw(st.integers(0, 3))
        lines.append("")
        if part == 0:
            lines += draw(function(index))
            lines.append(f"step_{index}(model, loader)" if draw(st.booleans()) else "")
        elif part == 1:
            lines += draw(module_class(index))
            lines.append(f"net_{index} = Net{index}()")
            lines.append(f"out = net_{index}(torch.randn(2, 3))")
        else:
            lines += draw(block("", 0, False))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ mutations
def lines_of(source: str) -> list[str]:
    return source.splitlines(keepends=True)


@st.composite
def mutated_seed(draw) -> tuple[str, str]:
    """(description, source): one corpus program with a few line edits or a truncation."""
    name, source = draw(st.sampled_from(SEEDS))
    lines = lines_of(source)
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        op = draw(st.sampled_from(("delete", "duplicate", "swap", "truncate", "dedent", "indent")))
        i = draw(st.integers(0, len(lines) - 1))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "dedent":
            lines[i] = lines[i][4:] if lines[i].startswith("    ") else lines[i]
        elif op == "indent":
            lines[i] = "    " + lines[i]
        else:
            text = "".join(lines)
            cut = draw(st.integers(0, len(text)))
            lines = lines_of(text[:cut])
            i = cut
        steps.append(f"{op}@{i}")
    return f"{name} {' '.join(steps)}", "".join(lines)
