"""The corpus oracle: reads a program's header, runs its `observe()` with real
PyTorch, and says whether the labelled effect is there (see README.md here).

Each checker takes the observations (the dict `observe()` returned, plus
`error` and `warnings` that running it produced) and an optional argument, and
returns True when the effect is present.
"""

from __future__ import annotations

import ast
import re
import shlex
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
HEADER_KEYS = ("source", "label", "effect", "note")


@dataclass(frozen=True)
class Program:
    path: Path
    source: str
    url: str
    codes: tuple[str, ...]  # the rule(s) of the label ("GG101", or "GG101", "GG103")
    line: Optional[int]  # the labelled line of a bug; None for a look-alike
    effect: str
    argument: Optional[str]
    note: str = ""

    @property
    def lookalike(self) -> bool:
        return self.line is None

    @property
    def name(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def cls(self) -> str:
        """The class a program counts in: its directory (the rule it is about)."""
        return self.path.parent.name


def programs(root: Path = HERE) -> list[Program]:
    return [load(p) for p in sorted(root.glob("GG*/*.py"))]


def load(path: Path) -> Program:
    return parse(path.read_text(encoding="utf-8"), path)


def parse(source: str, path: Path) -> Program:
    """A program from its text (`path` names it: its directory is its class)."""
    header: dict[str, str] = {}
    for line in source.splitlines():
        m = re.match(r"#\s*(\w+):\s*(.*)$", line)
        if not m:
            break
        header[m.group(1)] = m.group(2).strip()
    missing = [k for k in ("source", "label", "effect") if k not in header]
    if missing:
        raise ValueError(f"{path}: header lacks {', '.join(missing)}")
    label = header["label"].split()
    if label[0] == "lookalike":
        codes, line = tuple(label[1].split("|")), None
    else:
        codes, line = tuple(label[0].split("|")), int(label[1])
    effect, *rest = shlex.split(header["effect"])
    return Program(path, source, header["source"], codes, line, effect, rest[0] if rest else None,
                   header.get("note", ""))


def stripped(source: str) -> str:
    """The program as an editor sees it: `observe()` and a `__main__` block blanked
    (line numbers kept)."""
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        drop = isinstance(node, ast.FunctionDef) and node.name == "observe"
        drop |= isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        if drop:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            for i in range(first - 1, node.end_lineno):
                lines[i] = "\n"
    return "".join(lines).rstrip("\n") + "\n"


def run(program: Program) -> dict:
    """Run the program and its observe(); the observations, with `error` (the
    exception's text, or None) and `warnings` (their texts)."""
    import torch

    torch.manual_seed(0)
    ns: dict = {"__name__": f"corpus_{program.path.stem}", "__file__": str(program.path)}
    obs: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(program.source, str(program.path), "exec"), ns)
        try:
            obs = dict(ns["observe"]() or {})
            obs.setdefault("error", None)
        except Exception as e:  # noqa: BLE001 - the error is what some programs prove
            obs["error"] = f"{type(e).__name__}: {e}"
    obs["warnings"] = [str(w.message) for w in caught]
    return obs


def present(program: Program, obs: dict) -> bool:
    checker = CHECKERS[program.effect]
    return checker(obs, program.argument) if program.argument is not None else checker(obs)


# ------------------------------------------------------------------ helpers
def tensors(value) -> list:
    """Every tensor in a value: a tensor, or lists / tuples / dicts of them."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors(v)]
    return []


def _nodes(t):
    fn = getattr(t, "grad_fn", None)
    seen, stack = set(), [fn] if fn is not None else []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(n for n, _ in node.next_functions)
    return seen


def graph_size(t) -> int:
    """Autograd nodes reachable from a tensor: grows when graphs pile up."""
    return len(_nodes(t))


def has_saved_tensors(t) -> bool:
    """Some tensor saved for backward in t's graph is still in memory (backward frees them)."""
    import torch

    for node in _nodes(t):
        for attr in dir(node):
            if attr.startswith("_saved_"):
                try:
                    if isinstance(getattr(node, attr), torch.Tensor):
                        return True
                except RuntimeError:  # freed by backward
                    continue
    return False


def hook_outputs(module, where=None) -> list:
    """Record, for every forward of `module`, whether its output built a graph
    (a list of bools; the output itself is not kept). `where(inputs)`, if given,
    picks the forwards to record (e.g. the fixed noise of a sample, not the batches
    of the training step around it)."""
    seen: list = []

    def hook(_m, inputs, out):
        if where is None or where(inputs):
            seen.append(any(t.grad_fn is not None for t in tensors(out)))

    module.register_forward_hook(hook)
    return seen


@contextmanager
def forward_outputs():
    """`hook_outputs` for models the code builds itself (a factory, `Net().eval()`
    inside the function): yields the list, filled for every nn.Module forward that
    runs inside the block."""
    import torch

    seen: list = []

    def hook(_m, _inputs, out):
        seen.append(any(t.grad_fn is not None for t in tensors(out)))

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        yield seen
    finally:
        handle.remove()


def call_outputs(fn, where=None):
    """`hook_outputs` for a hand-written model (a function over parameter tensors,
    which has no forward hook): returns (a wrapper to call instead of `fn`, the list
    of bools it fills, one per call: whether the result built a graph). `where(args)`
    as in `hook_outputs`."""
    seen: list = []

    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if where is None or where(args):
            seen.append(any(t.grad_fn is not None for t in tensors(out)))
        return out

    return wrapper, seen


def _track_flow(out, seen: list) -> None:
    """Append one record for a forward's output: None when it built no graph, else a
    one-item list that turns [True] when some gradient flows back through it."""
    outs = [t for t in tensors(out) if t.grad_fn is not None]
    if not outs:
        seen.append(None)
        return
    record = [False]
    seen.append(record)
    for t in outs:
        t.register_hook(lambda g, record=record: record.__setitem__(0, True))


def output_flows(module, where=None) -> list:
    """Record, for every forward of `module`, whether its output built a graph and
    whether a gradient (a backward or `torch.autograd.grad`) ever flowed back through
    it: a list with None per forward that built no graph and [bool] per forward that
    did. `where(inputs)` as in `hook_outputs`."""
    seen: list = []

    def hook(_m, inputs, out):
        if where is None or where(inputs):
            _track_flow(out, seen)

    module.register_forward_hook(hook)
    return seen


def call_flows(fn, where=None):
    """`output_flows` for a hand-written model (a function over parameter tensors):
    returns (a wrapper to call instead of `fn`, the list it fills)."""
    seen: list = []

    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if where is None or where(args):
            _track_flow(out, seen)
        return out

    return wrapper, seen


def grad_arrivals(values) -> list:
    """Record every gradient that reaches one of `values` (tensors that require grad)
    during a backward, before an optimizer's `zero_grad()` can clear it: returns the
    list, one entry per arrival."""
    seen: list = []
    for v in values:
        v.register_hook(lambda g: seen.append(bool(g.abs().sum().item())))
    return seen


# ----------------------------------------------------------------- checkers
def graph_kept(obs) -> bool:
    """obs["kept"]: what the code kept (tensors, or containers of them). Present when
    any of it still carries a grad_fn chain."""
    return any(t.grad_fn is not None for t in tensors(obs["kept"]))


def activations_alive(obs) -> bool:
    """obs["kept"]: present when a kept value's graph still holds saved activations
    (nothing back-propagated it: they are never freed)."""
    return any(has_saved_tensors(t) for t in tensors(obs["kept"]))


def graph_built(obs) -> bool:
    """obs["built"]: the list `hook_outputs(model)` filled. Present when a forward
    built a graph (ran with grad enabled on a model that has parameters)."""
    return any(obs["built"])


def graph_unused(obs) -> bool:
    """obs["flows"]: the list `output_flows(model)` / `call_flows(fn)` filled. Present
    when a forward built a graph that no gradient ever flowed back through (its
    outputs were only looked at); absent when every graph built was back-propagated
    or differentiated, or none was built."""
    return any(r is not None and not r[0] for r in obs["flows"])


def graph_grows(obs) -> bool:
    """obs["sizes"]: graph sizes (`graph_size`) of the carried value after each
    iteration or call, in order. Present when the last is larger than the first."""
    sizes = obs["sizes"]
    return len(sizes) >= 2 and sizes[-1] > sizes[0]


def no_grad(obs) -> bool:
    """obs["params"]: parameters the training step should reach, after it ran.
    Present when one of them got no gradient (`.grad` None or all zeros)."""
    return any(p.grad is None or not p.grad.abs().sum().item() for p in obs["params"])


def no_grad_arrived(obs) -> bool:
    """obs["arrived"]: the list `grad_arrivals(values)` filled while the code ran.
    Present when no (non-zero) gradient ever reached those values: nothing the code
    back-propagated depended on them."""
    return not any(obs["arrived"])


def changed(obs) -> bool:
    """obs["before"], obs["after"]: a tensor's value before and after the code ran,
    where the code did not mean to change it. Present when they differ."""
    import torch

    return not torch.equal(obs["before"], obs["after"])


def wrong_grad(obs) -> bool:
    """obs["grad"], obs["expected"]: a gradient autograd computed, and the true one
    (worked out by hand or by a clean re-computation). Present when they differ."""
    import torch

    return not torch.allclose(obs["grad"], obs["expected"], atol=1e-6)


def raises(obs, text: str) -> bool:
    """Present when running raised an error whose text contains `text`."""
    return obs["error"] is not None and text in obs["error"]


def warns(obs, text: str) -> bool:
    """Present when running warned with a message that contains `text`."""
    return any(text in w for w in obs["warnings"])


CHECKERS = {f.__name__: f for f in (graph_kept, activations_alive, graph_built, graph_unused, graph_grows, no_grad,
                                     no_grad_arrived, changed, wrong_grad, raises, warns)}
