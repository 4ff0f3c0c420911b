"""Hover texts: what a call does to a tensor's two layers (storage and autograd
graph), what the analysis knows about its receiver, and rule docs on findings
and `# noqa` codes.

The facts are those of rules.md ("Ground facts", checked with torch 2.13).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Optional, Sequence

from gradguard.engine.describe import describe_at, told_at
from gradguard.docs import rule_markdown, rule_summary_markdown, url_for
from gradguard.engine.suppress import IGNORE, NOQA
from gradguard.findings import Position
from gradguard.rules import rule_by_code

log = logging.getLogger(__name__)

_WORD = re.compile(r"\w+")
_TORCH_ALIAS = re.compile(r"^[ \t]*import[ \t]+torch[ \t]+as[ \t]+(\w+)", re.M)
_FROM_TORCH = re.compile(r"^[ \t]*from[ \t]+torch[ \t]+import[ \t]+\(?([^)\n]*)", re.M)

TENSOR_METHODS = ("clone", "detach", "data", "item", "numpy", "requires_grad_", "backward")
TORCH_FUNCTIONS = ("no_grad", "inference_mode", "tensor")

COPY_FORMS = ("x.clone()", "x.detach()", "x.clone().detach()", "x.detach().clone()")
COPY_TABLE = (
    ("x.clone()", "new", "tracked: `grad_fn=CloneBackward0`, the gradient flows back to `x` unchanged; "
     "the clone of a leaf that requires grad is **not** a leaf (its `.grad` stays `None`)"),
    ("x.detach()", "shared with `x`, and so is the version counter",
     "cut: `requires_grad=False`, `grad_fn=None`, `is_leaf=True`"),
    ("x.clone().detach()", "new", "cut; a `CloneBackward0` node is recorded, then dropped"),
    ("x.detach().clone()", "new", "cut; no node is recorded (about 1.3x cheaper on small tensors, "
     "equal on large ones); what torch 2.13's own warning recommends"),
)

FACTS = {
    "clone": (
        "**`Tensor.clone()`**: new storage; autograd keeps tracking the copy (`grad_fn=CloneBackward0`) and "
        "the gradient flows back to the source unchanged. The clone of a leaf that requires grad is **not** "
        "a leaf (its `.grad` stays `None`); a fresh leaf copy is `x.detach().clone().requires_grad_(True)`."
    ),
    "detach": (
        "**`Tensor.detach()`**: the **same storage** as `x`, out of the graph: `requires_grad=False`, "
        "`grad_fn=None`, `is_leaf=True`; the version counter is shared. An in-place write through it changes "
        "`x`. If `x` was saved for backward before the write, `backward()` raises \"one of the variables "
        "needed for gradient computation has been modified by an inplace operation\"; if the write comes "
        "before the op that saves `x`, there is no error at all and results and gradients are silently wrong."
    ),
    "data": (
        "**`Tensor.data`**: like `detach()` (same storage, no graph), but in-place writes through it do not "
        "bump the version counter: autograd never notices them, and gradients are silently wrong. Read with "
        "`x.detach()`; write under `with torch.no_grad():`."
    ),
    "item": (
        "**`Tensor.item()`**: a Python number copied out of a one-element tensor (on a GPU it waits for the "
        "device); it never carries a graph, and it drops it silently. `float(t)` on a tensor that requires "
        "grad warns instead: \"Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
        "behavior. Consider using tensor.detach() first.\""
    ),
    "numpy": (
        "**`Tensor.numpy()`**: a NumPy array sharing the CPU tensor's storage, with no graph. On a tensor that "
        "requires grad it raises \"Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
        "instead.\" (so do `.cpu().numpy()`, `np.array(t)`, `np.sum(list_of_t)`, `np.log10(t)`); under "
        "`torch.no_grad()` it works."
    ),
    "requires_grad_": (
        "**`Tensor.requires_grad_()`**: sets `requires_grad` in place and returns the same tensor (same "
        "storage, no copy); on a leaf, autograd records the operations that use it from here on and "
        "`backward()` fills its `.grad`. A fresh leaf copy of `x` is `x.detach().clone().requires_grad_(True)`."
    ),
    "backward": (
        "**`Tensor.backward()`**: computes gradients through the value's graph into the `.grad` of the leaves "
        "and frees the graph's saved activations unless `retain_graph=True` (the graph's nodes stay alive while a stored tensor refers to "
        "them). On a value with no graph it raises \"element 0 of tensors does not require grad and does not "
        "have a grad_fn\"."
    ),
    "no_grad": (
        "**`torch.no_grad()`**: operations inside record no graph; storage is unaffected. Results and clones "
        "carry no graph, except a *view* (`x[:2]`) of a tensor that requires grad, which keeps "
        "`requires_grad=True`. In-place ops on leaves that require grad and `.numpy()` are allowed inside. "
        "`model.eval()` does **not** do this: outputs of an eval-mode model still build a graph."
    ),
    "inference_mode": (
        "**`torch.inference_mode()`**: like `torch.no_grad()`, operations inside record no graph (results and "
        "clones carry none), and it also skips autograd's bookkeeping (version counters, views); tensors "
        "created inside cannot be used later in operations that autograd records. `model.eval()` does **not** "
        "stop graph building."
    ),
    "tensor": (
        "**`torch.tensor(data)`**: always copies `data` into new storage and records no graph. With a tensor "
        "`t` as data it warns \"To copy construct from a tensor, it is recommended to use "
        "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
        "torch.tensor(sourceTensor).\"; `torch.as_tensor(t)`, `torch.Tensor(t)` and `torch.tensor([t0, t1])` "
        "of 0-d tensors do not warn."
    ),
}


@dataclass(frozen=True)
class Topic:
    name: str  # a FACTS key
    start: int  # code-point columns of the hovered name on its line
    end: int
    form: Optional[str] = None  # for clone/detach: which row of the copy table this is


def topic_at(line: str, column: int, source: str) -> Optional[Topic]:
    """The documented name under the cursor: `.clone` (any receiver), `torch.no_grad` (or an alias)."""
    word = _word_at(line, column)
    if word is None:
        return None
    start, end, name = word
    before = line[:start].rstrip()
    if name in TENSOR_METHODS and before.endswith("."):
        return Topic(name, start, end, _copy_form(line, start, end, name))
    if name in TORCH_FUNCTIONS:
        receiver = re.search(r"([\w.]+)\.$", before)
        if receiver is not None and receiver.group(1) in _torch_names(source):
            return Topic(name, start, end)
        if receiver is None and not before.endswith(".") and name in _imported_from_torch(source):
            return Topic(name, start, end)
    return None


def _word_at(line: str, column: int) -> Optional[tuple[int, int, str]]:
    for m in _WORD.finditer(line):
        if m.start() <= column <= m.end():
            return m.start(), m.end(), m.group()
    return None


def _copy_form(line: str, start: int, end: int, name: str) -> Optional[str]:
    if name not in ("clone", "detach"):
        return None
    other = "detach" if name == "clone" else "clone"
    if re.match(rf"\s*\(\s*\)\s*\.\s*{other}\s*\(", line[end:]):
        return f"x.{name}().{other}()"
    if re.search(rf"\.\s*{other}\s*\(\s*\)\s*\.\s*$", line[:start]):
        return f"x.{other}().{name}()"
    return f"x.{name}()"


def _torch_names(source: str) -> set[str]:
    return {"torch", "torch.autograd", "torch.autograd.grad_mode"} | set(_TORCH_ALIAS.findall(source))


def _imported_from_torch(source: str) -> set[str]:
    names = set()
    for m in _FROM_TORCH.finditer(source):
        for part in m.group(1).split(","):
            bits = part.split()
            if bits:
                names.add(bits[-1])  # `no_grad` or the `as` name
    return names


def copy_table(current: Optional[str], copy_order: str) -> str:
    rows = ["| | form | storage | autograd |", "| --- | --- | --- | --- |"]
    for form, storage, autograd in COPY_TABLE:
        mark = "| **→** |" if form == current else "| |"
        rows.append(f"{mark} `{form}` | {storage} | {autograd} |")
    chosen = ".clone().detach()" if copy_order == "clone-detach" else ".detach().clone()"
    rows.append("")
    rows.append(
        f"GradGuard's fixes write `{chosen}` (setting `copyOrder`: \"{copy_order}\"); both orders give equal "
        "results, `\"detach-clone\"` is the cheaper one."
    )
    return "\n".join(rows)


def facts(topic: Topic, copy_order: str, state: Optional[str] = None) -> str:
    """The call's facts, then the receiver's state here (when known), then the copy table."""
    parts = [FACTS[topic.name]]
    if state:
        parts.append(f"**Here:** {state}")
    if topic.form is not None:
        parts.append(copy_table(topic.form, copy_order))
    return "\n\n".join(parts)


def receiver_state(analysis, line: int, column: int) -> Optional[str]:
    """What the engine knows about the value at this point (line 1-based, column in code points)."""
    if analysis is None or analysis.flow is None:
        return None
    try:
        return describe_at(analysis, line, column)
    except Exception:  # noqa: BLE001 - a hover must not fail because of the engine
        log.exception("describe_at failed at %s:%s", line, column)
        return None


def told_state(analysis, line: int, column: int) -> Optional[str]:
    """What another file of the project says the value at this point is, and where it says so."""
    if analysis is None or analysis.flow is None:
        return None
    try:
        return told_at(analysis, line, column)
    except Exception:  # noqa: BLE001 - a hover must not fail because of the engine
        log.exception("told_at failed at %s:%s", line, column)
        return None


def word_span(line: str, column: int) -> Optional[tuple[int, int]]:
    """The columns of the name under the cursor."""
    word = _word_at(line, column)
    return word[:2] if word is not None else None


def suppression_code_at(line: str, column: int) -> Optional[tuple[int, int, str]]:
    """The rule code under the cursor in a `# noqa: GG101` or `# gradguard: ignore[GG101]` comment."""
    for pattern in (NOQA, IGNORE):
        for m in pattern.finditer(line):
            if m.group("codes") is None:
                continue
            offset = m.start("codes")
            for code in re.finditer(r"[A-Za-z]+[0-9]+", m.group("codes")):
                start, end = offset + code.start(), offset + code.end()
                if start <= column <= end and rule_by_code(code.group()) is not None:
                    return start, end, code.group().upper()
    return None


def rule_docs(code: str) -> Optional[str]:
    """The whole rule page: for a hover on a rule code written in a `# noqa` (nothing else says
    what the rule is there)."""
    rule = rule_by_code(code)
    return rule_markdown(rule) if rule is not None else None


def rule_summary(code: str, fixes: Sequence[str] = ()) -> Optional[str]:
    """For a hover on a finding (the editor shows its message and evidence): the rule in a line
    and a link to its page, then the finding's fixes by their quick-fix titles."""
    rule = rule_by_code(code)
    if rule is None:
        return None
    summary = rule_summary_markdown(rule, url_for(rule.code))
    return summary + (f"\n\nFix: {'; or '.join(fixes)}" if fixes else "")


def describe(
    line: str,
    pos: Position,
    topic: Optional[Topic],
    state: Optional[str],
    copy_order: str,
    findings: Sequence[tuple[str, Sequence[str]]],
) -> Optional[tuple[str, Optional[tuple[int, int]]]]:
    """The hover at `pos` on `line`: Markdown and the hovered name's columns (None: no hover).

    `topic` is `topic_at(...)`, `state` the engine's words on its receiver (or, with no topic, on the
    name, from another file: `told_state`), `findings` the
    rule code and fix titles of each diagnostic under the cursor."""
    sections, span = [], None
    if topic is not None:
        sections.append(facts(topic, copy_order, state))
        span = (topic.start, topic.end)
    elif state:  # a name another file of the project says something about
        sections.append(f"**Here:** {state}")
        span = word_span(line, pos.column)
    codes = [code for code, _ in findings]
    fixes: dict[str, list[str]] = {}
    for code, titles in findings:  # one section a rule; two findings of one rule here share it
        fixes.setdefault(code, []).extend(t for t in titles if t not in fixes.get(code, ()))
    for code, titles in fixes.items():
        summary = rule_summary(code, titles)
        if summary:
            sections.append(summary)
    suppressed = suppression_code_at(line, pos.column)
    if suppressed is not None and suppressed[2] not in codes:
        docs = rule_docs(suppressed[2])
        if docs:
            sections.append(docs)
        span = span or suppressed[:2]
    if not sections:
        return None
    return "\n\n---\n\n".join(sections), span
