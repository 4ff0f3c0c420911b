"""Code actions: quick fixes from Diagnostic.data, the ignore comment, and
source.fixAll.gradguard; every edit applied to the text gives exactly the expected text."""

from __future__ import annotations

import attrs
import pytest
from lsprotocol import types

from lsp_harness import Client, apply, edits_of, initialize, uri_for
from test_lsp_diagnostics import TRAIN

pytestmark = pytest.mark.asyncio


async def actions_for(
    client: Client, uri: str, diagnostics: list[types.Diagnostic], only=None, at: types.Range | None = None
) -> list[types.CodeAction]:
    rng = at or diagnostics[0].range
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )
    return list(result or [])


async def test_quick_fixes_of_a_diagnostic(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    first, _ = await client.diagnostics_for(uri)
    store, store_item, ignore = await actions_for(client, uri, [first], only=[types.CodeActionKind.QuickFix])

    assert (store.title, store.kind, store.is_preferred) == ("Store `loss.detach()`", "quickfix", True)
    # An unsafe fix (it changes the stored value's type) says so in its title.
    assert (store_item.title, store_item.is_preferred) == ("Store `loss.detach().item()` (unsafe)", None)
    assert first.data["fixes"][1]["safe"] is False
    assert ignore.title == "Ignore GG101 on this line"
    assert list(store.diagnostics) == [first]
    assert store.edit.document_changes[0].text_document.version == 1  # stale edits are refused by the editor

    assert apply(TRAIN, edits_of(store.edit, uri)) == TRAIN.replace(
        "val_losses.append(loss)", "val_losses.append(loss.detach())"
    )
    assert apply(TRAIN, edits_of(store_item.edit, uri)) == TRAIN.replace(
        "val_losses.append(loss)", "val_losses.append(loss.detach().item())"
    )
    assert apply(TRAIN, edits_of(ignore.edit, uri)) == TRAIN.replace(
        "val_losses.append(loss)\n", "val_losses.append(loss)  # noqa: GG101\n"
    )


async def test_fix_on_the_emoji_line_lands_exactly(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    _, on_emoji_line = await client.diagnostics_for(uri)
    store, *_ = await actions_for(client, uri, [on_emoji_line])
    assert apply(TRAIN, edits_of(store.edit, uri)) == TRAIN.replace(
        'print("训练😀", train_losses.append(loss))', 'print("训练😀", train_losses.append(loss.detach()))'
    )


async def test_ignore_comment_silences_the_finding(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    first, second = await client.diagnostics_for(uri)
    *_, ignore = await actions_for(client, uri, [first], only=[types.CodeActionKind.QuickFix])
    version = client.replace(uri, apply(TRAIN, edits_of(ignore.edit, uri)))
    (left,) = await client.diagnostics_for(uri, version)
    assert (left.range, left.message) == (second.range, second.message)


async def test_ignore_extends_an_existing_noqa(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    text = TRAIN.replace("val_losses.append(loss)\n", "val_losses.append(loss)  # noqa: E501\n")
    client.open(uri, text)
    first, _ = await client.diagnostics_for(uri)
    *_, ignore = await actions_for(client, uri, [first], only=[types.CodeActionKind.QuickFix])
    assert apply(text, edits_of(ignore.edit, uri)) == TRAIN.replace(
        "val_losses.append(loss)\n", "val_losses.append(loss)  # noqa: E501, GG101\n"
    )


async def test_fix_all_applies_every_safe_fix(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    diagnostics = await client.diagnostics_for(uri)
    (fix_all,) = await actions_for(client, uri, [], only=["source.fixAll"], at=diagnostics[0].range)
    assert (fix_all.kind, fix_all.title) == ("source.fixAll.gradguard", "GradGuard: fix all safe problems")
    # the safe fix of each finding; never the unsafe `.detach().item()` alternative
    assert apply(TRAIN, edits_of(fix_all.edit, uri)) == TRAIN.replace(
        "val_losses.append(loss)", "val_losses.append(loss.detach())"
    ).replace("train_losses.append(loss)", "train_losses.append(loss.detach())")


async def test_fix_all_is_offered_with_the_quick_fixes_and_not_when_clean(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    first, _ = await client.diagnostics_for(uri)
    kinds = [a.kind for a in await actions_for(client, uri, [first])]
    assert kinds == ["quickfix", "quickfix", "quickfix", "source.fixAll.gradguard"]
    clean = client.replace(uri, "import torch\nx = torch.ones(2)\n")
    assert await client.diagnostics_for(uri, clean) == []
    assert await actions_for(client, uri, [], at=first.range) == []


async def test_stale_diagnostics_get_no_fixes(client: Client, tmp_path):
    await initialize(client, options={"select": ["GG101"], "debounceMs": 60000})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    first, _ = await client.diagnostics_for(uri)
    client.replace(uri, "\n" + TRAIN)  # not analysed yet: the debounce is a minute
    assert await actions_for(client, uri, [first], only=[types.CodeActionKind.QuickFix]) == []


async def test_edits_without_document_changes_support(client: Client, tmp_path):
    """Clients such as Neovim 0.7 take `changes` keyed by URI."""
    caps_client = client
    original = caps_client.initialize_session

    async def without_document_changes(params):
        params.capabilities.workspace.workspace_edit = attrs.evolve(
            params.capabilities.workspace.workspace_edit, document_changes=False
        )
        return await original(params)

    caps_client.initialize_session = without_document_changes
    await initialize(caps_client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    first, _ = await client.diagnostics_for(uri)
    store, *_ = await actions_for(client, uri, [first])
    assert store.edit.document_changes is None
    assert apply(TRAIN, store.edit.changes[uri]) == TRAIN.replace(
        "val_losses.append(loss)", "val_losses.append(loss.detach())"
    )


async def fix_all_of(client: Client, uri: str, diagnostics) -> types.CodeAction:
    (fix_all,) = await actions_for(client, uri, [], only=["source.fixAll"], at=diagnostics[0].range)
    return fix_all


async def test_fix_all_applies_overlapping_fixes_in_rounds(client: Client, tmp_path):
    # GG103 wraps the loop in no_grad; `loss.data[0]` inside it is fixed in the next round
    from cli.test_fix import EVAL_LOSS, EVAL_LOSS_FIXED

    await initialize(client, options={"select": ["GG103", "GG202"], "debounceMs": 0})
    uri = uri_for(tmp_path, "eval.py")
    client.open(uri, EVAL_LOSS)
    fix_all = await fix_all_of(client, uri, await client.diagnostics_for(uri))
    assert apply(EVAL_LOSS, edits_of(fix_all.edit, uri)) == EVAL_LOSS_FIXED
    assert [m.message for m in client.log_messages if "fix-all" in m.message] == []


async def test_fix_all_logs_each_fix_not_applied_and_why(client: Client, tmp_path):
    from cli.test_fix import EVAL_KEPT, EVAL_KEPT_FIXED

    await initialize(client, options={"select": ["GG101", "GG103", "GG202"], "debounceMs": 0})
    uri = uri_for(tmp_path, "eval.py")
    client.open(uri, EVAL_KEPT)
    fix_all = await fix_all_of(client, uri, await client.diagnostics_for(uri))
    assert apply(EVAL_KEPT, edits_of(fix_all.edit, uri)) == EVAL_KEPT_FIXED
    why = ("fix not applied: it overlaps the fix of the GG103 finding at 9:15, applied first, and the code after "
           "that fix no longer shows this finding")
    logged = [(m.type, m.message) for m in client.log_messages if "fix-all" in m.message]
    assert logged == [  # where they would be in the fixed text
        (types.MessageType.Warning, f"GradGuard fix-all, eval.py: line 10, column 24: GG101 {why}"),
        (types.MessageType.Warning, f"GradGuard fix-all, eval.py: line 11, column 15: GG202 {why}"),
    ]
