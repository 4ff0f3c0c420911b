"""The type layer in the server: syntactic diagnostics first, then the same version
re-published with what jedi knows (a model class from another file of the workspace);
hovers show the resolved type. Real jedi, real torch, over stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_harness import Client, initialize
from test_lsp_hover import hover

pytestmark = pytest.mark.asyncio

WORKSPACE = Path(__file__).resolve().parents[1] / "typelayer" / "workspace"
COLD_JEDI_S = 180  # jedi's first inference reads torch: seconds on a quiet machine, more on a busy one
LEAK = (
    "`out` carries an autograd graph (from `model(x)` on line 10) that is never back-propagated; "
    "storing it in `outputs` keeps every saved activation alive across iterations"
)


async def wait(client: Client, predicate, timeout: float = COLD_JEDI_S):
    async with asyncio.timeout(timeout):
        while not (result := predicate()):
            client.event.clear()
            await client.event.wait()
        return result


async def test_refined_publish_of_the_same_version_then_typed_hover(client: Client):
    await initialize(client, options={"debounceMs": 0, "types": True}, root=WORKSPACE)
    path = WORKSPACE / "train.py"
    uri = path.as_uri()
    client.open(uri, path.read_text())
    publishes = await wait(client, lambda: len(client.publishes(uri)) >= 2 and client.publishes(uri))
    first, refined = publishes[0], publishes[1]
    assert (first.version, first.diagnostics) == (1, [])  # syntax alone: `model` could be anything
    assert refined.version == 1
    assert [(d.code, d.range, d.message) for d in refined.diagnostics] == [
        ("GG101", types.Range(types.Position(10, 23), types.Position(10, 26)), LEAK)
    ]
    result = await hover(client, uri, types.Position(7, 12))  # model.requires_grad_(True)
    text = result.contents.value
    assert "`model` is `models.net.Net` (an nn.Module)" in text
    assert "resolves to `torch.nn.modules.module.Module.requires_grad_`" in text


async def test_types_off_publishes_each_version_once(client: Client):
    await initialize(client, options={"debounceMs": 0}, root=WORKSPACE)
    path = WORKSPACE / "train.py"
    uri = path.as_uri()
    client.open(uri, path.read_text())
    assert await client.diagnostics_for(uri) == []
    client.replace(uri, path.read_text() + "\n")
    assert await client.diagnostics_for(uri) == []
    assert [p.version for p in client.publishes(uri)] == [1, 2]
