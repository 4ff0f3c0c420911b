"""Diagnostics: published on open, change and save with the document version,
exactly placed in every position encoding, cleared on close, never stale."""

from __future__ import annotations

import pytest
from lsprotocol import types

from gradguard import docs
from lsp_harness import Client, diag, initialize, source, uri_for

pytestmark = pytest.mark.asyncio

TRAIN = source(
    """
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
    val_losses = []
    model.eval()
    for x, y in loader:
        loss = criterion(model(x), y)
        val_losses.append(loss)
    train_losses = []
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        print("训练😀", train_losses.append(loss))
    """
)
EMOJI_LINE = 18  # 0-based: `    print("训练😀", train_losses.append(loss))`

NEVER_BACKWARDED = (
    "`loss` carries an autograd graph (from `criterion(model(x), y)` on line 11) that is never back-propagated; "
    "storing it in `val_losses` keeps every saved activation alive across iterations"
)
BACKWARDED = (
    "`loss` carries an autograd graph; `.backward()` on line 17 freed its activations, but storing it in "
    "`train_losses` keeps the graph's nodes alive across iterations"
)


async def test_open_publishes_findings_with_version_and_evidence(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN, version=7)
    first, second = await client.diagnostics_for(uri, 7)

    assert first.range == diag((11, 22, 11, 26))
    assert first.message == NEVER_BACKWARDED
    assert first.severity == types.DiagnosticSeverity.Error
    assert (first.code, first.source) == ("GG101", "gradguard")
    href = docs.url_for("GG101")
    assert first.code_description == (types.CodeDescription(href) if href else None)
    assert first.tags is None
    assert list(first.related_information) == [
        types.DiagnosticRelatedInformation(types.Location(uri, diag((10, 11, 10, 33))), "the graph is created here")
    ]

    assert second.message == BACKWARDED
    assert second.severity == types.DiagnosticSeverity.Warning
    assert [(r.location.range, r.message) for r in second.related_information] == [
        (diag((15, 11, 15, 28)), "the graph is created here"),
        (diag((16, 4, 16, 19)), "backward runs here"),
    ]


@pytest.mark.parametrize(
    ("encodings", "negotiated", "start", "end"),
    [
        # `    print("训练😀", train_losses.append(` is 37 code points, 38 UTF-16 units, 44 UTF-8 bytes
        (None, types.PositionEncodingKind.Utf16, 38, 42),
        (["utf-16"], types.PositionEncodingKind.Utf16, 38, 42),
        (["utf-8", "utf-16"], types.PositionEncodingKind.Utf8, 44, 48),
        (["utf-32", "utf-16"], types.PositionEncodingKind.Utf32, 37, 41),
    ],
)
async def test_ranges_on_a_line_with_chinese_and_emoji(client: Client, tmp_path, encodings, negotiated, start, end):
    result = await initialize(client, encodings=encodings)
    assert result.capabilities.position_encoding == negotiated
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    _, on_emoji_line = await client.diagnostics_for(uri)
    assert on_emoji_line.range == diag((EMOJI_LINE, start, EMOJI_LINE, end))


async def test_related_information_after_emoji_is_placed_exactly(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    text = TRAIN.replace("    loss = criterion(out, y)\n", "    s = '😀'; loss = criterion(out, y)\n")
    client.open(uri, text)
    _, second = await client.diagnostics_for(uri)
    # `    s = '😀'; loss = ` is 20 code points, 21 UTF-16 units
    assert second.related_information[0].location.range == diag((15, 21, 15, 38))


async def test_change_publishes_for_the_new_text(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    assert len(await client.diagnostics_for(uri)) == 2
    version = client.replace(uri, TRAIN.replace("val_losses.append(loss)", "val_losses.append(loss.item())"))
    (only,) = await client.diagnostics_for(uri, version)
    assert only.message == BACKWARDED


async def test_save_republishes(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    await client.diagnostics_for(uri)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await client.wait_until(lambda: len(client.publishes(uri)) == 2, "the save's publish")
    assert client.publishes(uri)[1].version == 1
    assert len(client.publishes(uri)[1].diagnostics) == 2


async def test_close_clears(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    await client.diagnostics_for(uri)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await client.wait_until(lambda: len(client.publishes(uri)) == 2, "the clearing publish")
    assert client.publishes(uri)[1].diagnostics == []


async def test_debounce_coalesces_rapid_changes(client: Client, tmp_path):
    await initialize(client, options={"select": ["GG101"], "debounceMs": 200})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    await client.diagnostics_for(uri)
    for i in range(5):
        last = client.replace(uri, TRAIN + f"# edit {i}\n")
    await client.diagnostics_for(uri, last)
    assert [p.version for p in client.publishes(uri)] == [1, last]


async def test_superseded_work_is_never_published(client: Client, tmp_path):
    """debounceMs 0: each change starts an analysis at once. A result is published only while its
    version is current, so versions only go up, and the final text's diagnostics come last."""
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    await client.diagnostics_for(uri)
    big = TRAIN * 40  # slow enough that newer changes arrive while an analysis runs
    for i in range(1, 10):
        client.replace(uri, big + "\n" * i)
    final = TRAIN.replace("val_losses.append(loss)", "val_losses.append(loss.item())")
    last = client.replace(uri, final)
    (only,) = await client.diagnostics_for(uri, last)
    assert only.message == BACKWARDED
    # A save of the final version: any late result of an older version would arrive before it.
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await client.wait_until(lambda: [p.version for p in client.publishes(uri)][-2:] == [last, last], "the save's publish")
    versions = [p.version for p in client.publishes(uri)]
    assert versions == sorted(versions) and len(versions) < 12, versions
    assert all(len(p.diagnostics) == 80 for p in client.publishes(uri) if p.version not in (1, last))
    assert client.publishes(uri)[-1].diagnostics == [only]


async def test_syntax_error_mid_typing_keeps_the_last_diagnostics(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    await client.diagnostics_for(uri)
    broken = client.replace(uri, TRAIN.replace("    loss.backward()\n", "    loss.backward(\n"))
    await client.wait_until(
        lambda: any(f"v{broken}: syntax error" in m.message for m in client.log_messages), "the syntax-error log"
    )
    assert [p.version for p in client.publishes(uri)] == [1]  # nothing new for the broken version
    fixed = client.replace(uri, TRAIN.replace("val_losses.append(loss)", "val_losses.append(loss.item())"))
    (only,) = await client.diagnostics_for(uri, fixed)
    assert only.message == BACKWARDED
    assert [p.version for p in client.publishes(uri)] == [1, fixed]


async def test_file_without_findings_publishes_an_empty_list(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path, "plain.py")
    client.open(uri, "print('no tensors here')\n")
    assert await client.diagnostics_for(uri) == []


async def test_non_python_documents_are_ignored(client: Client, tmp_path):
    await initialize(client)
    notes, code = uri_for(tmp_path, "notes.md"), uri_for(tmp_path)
    client.open(notes, "torch " + TRAIN, language="markdown")
    client.open(code, TRAIN)
    await client.diagnostics_for(code)
    assert client.publishes(notes) == []
