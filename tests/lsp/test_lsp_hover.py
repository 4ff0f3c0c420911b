"""Hover: what a call does to storage and graph, the clone/detach table with the
current form marked, the receiver's state, and rule docs on findings and noqa codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from gradguard.docs import rule_markdown
from gradguard.rules import rule_by_code
from lsp_harness import Client, diag, initialize, source, uri_for
from test_lsp_diagnostics import TRAIN

pytestmark = pytest.mark.asyncio

CODE = source(
    """
    import torch
    import torch as T
    from torch import nn, no_grad

    net = nn.Linear(2, 2)
    feat = net(torch.ones(1, 2))
    copy = feat.detach()
    twin = feat.clone().detach()
    cheap = feat.detach().clone()
    s = "训练😀"; frozen = feat.detach()
    value = feat.sum().item()
    with torch.no_grad():
        quiet = net(feat)
    with T.inference_mode():
        quiet = net(feat)
    with no_grad():
        quiet = net(feat)
    t = torch.tensor([1.0])
    other.no_grad()
    losses = []  # noqa: GG101
    """
)

DETACH_ON_FEAT = """\
**`Tensor.detach()`**: the **same storage** as `x`, out of the graph: `requires_grad=False`, `grad_fn=None`, \
`is_leaf=True`; the version counter is shared. An in-place write through it changes `x`. If `x` was saved for \
backward before the write, `backward()` raises "one of the variables needed for gradient computation has been \
modified by an inplace operation"; if the write comes before the op that saves `x`, there is no error at all and \
results and gradients are silently wrong.

**Here:** `feat` carries an autograd graph: from `net(torch.ones(1, 2))` on line 6

| | form | storage | autograd |
| --- | --- | --- | --- |
| | `x.clone()` | new | tracked: `grad_fn=CloneBackward0`, the gradient flows back to `x` unchanged; the clone \
of a leaf that requires grad is **not** a leaf (its `.grad` stays `None`) |
| **→** | `x.detach()` | shared with `x`, and so is the version counter | cut: `requires_grad=False`, \
`grad_fn=None`, `is_leaf=True` |
| | `x.clone().detach()` | new | cut; a `CloneBackward0` node is recorded, then dropped |
| | `x.detach().clone()` | new | cut; no node is recorded (about 1.3x cheaper on small tensors, equal on large \
ones); what torch 2.13's own warning recommends |

GradGuard's fixes write `.clone().detach()` (setting `copyOrder`: "clone-detach"); both orders give equal \
results, `"detach-clone"` is the cheaper one."""


def at(text: str, needle: str, offset: int = 0, occurrence: int = 0) -> types.Position:
    """The UTF-16 position of `needle` (+ offset code points) in `text`."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    index += offset
    line = text.count("\n", 0, index)
    start = text.rfind("\n", 0, index) + 1
    return types.Position(line, sum(2 if ord(c) > 0xFFFF else 1 for c in text[start:index]))


async def hover(client: Client, uri: str, position: types.Position) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )


async def opened(client: Client, tmp_path, text: str = CODE, **options) -> str:
    await initialize(client, options={"select": ["GG101"], "debounceMs": 0, **options})
    uri = uri_for(tmp_path)
    client.open(uri, text)
    await client.diagnostics_for(uri)  # the analysis the hover reads is done
    return uri


async def test_detach_facts_table_and_receiver_state(client: Client, tmp_path):
    uri = await opened(client, tmp_path)
    result = await hover(client, uri, at(CODE, "detach()", 2))
    assert result.contents.kind == types.MarkupKind.Markdown
    assert result.contents.value == DETACH_ON_FEAT
    assert result.range == diag((6, 12, 6, 18))


async def test_hover_after_emoji_finds_the_name_and_its_range(client: Client, tmp_path):
    uri = await opened(client, tmp_path)
    position = at(CODE, "detach()", 3, occurrence=3)  # `s = "训练😀"; frozen = feat.detach()`
    assert position == types.Position(9, 29)
    result = await hover(client, uri, position)
    assert result.contents.value == DETACH_ON_FEAT
    assert result.range == diag((9, 26, 9, 32))  # 25 code points before `detach`, 26 UTF-16 units


@pytest.mark.parametrize(
    ("needle", "marked"),
    [
        ("clone().detach", "| **→** | `x.clone().detach()` |"),
        ("detach().clone", "| **→** | `x.detach().clone()` |"),
    ],
)
async def test_the_current_copy_form_is_marked(client: Client, tmp_path, needle, marked):
    uri = await opened(client, tmp_path)
    result = await hover(client, uri, at(CODE, needle, 1))
    rows = [line for line in result.contents.value.splitlines() if line.startswith("| **→**")]
    assert len(rows) == 1 and rows[0].startswith(marked)


async def test_copy_order_setting_is_explained(client: Client, tmp_path):
    uri = await opened(client, tmp_path, copyOrder="detach-clone")
    result = await hover(client, uri, at(CODE, "clone().detach", 1))
    assert result.contents.value.endswith(
        "GradGuard's fixes write `.detach().clone()` (setting `copyOrder`: \"detach-clone\"); both orders give "
        "equal results, `\"detach-clone\"` is the cheaper one."
    )


@pytest.mark.parametrize(
    ("needle", "offset", "heading"),
    [
        ("item()", 1, "**`Tensor.item()`**: a Python number"),
        ("torch.no_grad", 8, "**`torch.no_grad()`**: operations inside record no graph"),
        ("T.inference_mode", 4, "**`torch.inference_mode()`**: like `torch.no_grad()`"),
        ("with no_grad", 6, "**`torch.no_grad()`**"),
        ("torch.tensor", 7, "**`torch.tensor(data)`**: always copies `data` into new storage"),
    ],
)
async def test_facts_for_calls(client: Client, tmp_path, needle, offset, heading):
    uri = await opened(client, tmp_path)
    result = await hover(client, uri, at(CODE, needle, offset))
    assert result.contents.value.startswith(heading)


@pytest.mark.parametrize(("needle", "offset"), [("net = ", 1), ("other.no_grad", 7), ("feat = net", 8)])
async def test_no_hover_elsewhere(client: Client, tmp_path, needle, offset):
    uri = await opened(client, tmp_path)
    assert await hover(client, uri, at(CODE, needle, offset)) is None


async def test_hover_on_a_finding_shows_the_rule_in_a_line_links_its_page_and_names_the_fixes(client: Client, tmp_path):
    # The editor shows the diagnostic's message and evidence; the hover adds the rule (not its whole
    # page) and the fixes, by the titles the quick-fix menu shows.
    uri = await opened(client, tmp_path, text=TRAIN)
    result = await hover(client, uri, at(TRAIN, "append(loss)", 9))
    page = Path(__file__).resolve().parents[2] / "docs" / "rules" / "GG101.md"
    assert result.contents.value == (
        "**GG101** `graph-kept-across-iterations` (error / warning): A value with an autograd graph is stored past "
        f"the loop iteration. [GG101 rule page]({page.as_uri()})\n\n"
        "Fix: Store `loss.detach()`; or Store `loss.detach().item()` (unsafe)"
    )
    assert result.contents.value.count("](") == 1  # one link
    assert result.range is None


async def test_hover_on_a_noqa_code_shows_the_rule_docs(client: Client, tmp_path):
    uri = await opened(client, tmp_path)
    result = await hover(client, uri, at(CODE, "GG101", 2))
    assert result.contents.value == rule_markdown(rule_by_code("GG101"))
    assert result.range == diag((19, 21, 19, 26))


async def test_hover_is_off_when_disabled(client: Client, tmp_path):
    await initialize(client, options={"enable": False, "debounceMs": 0})
    uri = uri_for(tmp_path)
    client.open(uri, CODE)
    assert await client.diagnostics_for(uri) == []
    assert await hover(client, uri, at(CODE, "detach()", 2)) is None
