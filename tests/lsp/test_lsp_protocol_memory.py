"""The server's protocol lets go of every handler's future once it is done.

pygls 2.1.1 files the future of each notification it handles through a
generator or a coroutine (every `didChange`: the built-in handler updates the
document, then yields to ours) in `_request_futures`, under a fresh uuid, and
removes only those of requests; over a long editing session that is one
future per keystroke (bench/soak.py: +37% RSS over 10,000 edits before the
mend). The soak measures the memory; this pins the cause.
"""

from __future__ import annotations

import asyncio

import pytest

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.lsp.server import LanguageServer

from gradguard.lsp.server import Protocol

URI = "file:///tmp/train.py"
CHANGES = 50


def _server(protocol_cls) -> LanguageServer:
    ls = LanguageServer("memory-test", "1", protocol_cls=protocol_cls)
    seen = []

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params):  # sync, behind the built-in generator handler
        seen.append(params.text_document.version)

    @ls.feature("gradguard/asyncNote")
    async def async_note(ls, params):
        seen.append("async")

    @ls.feature("gradguard/ask")
    async def ask(ls, params):
        return 1

    ls.seen = seen
    ls.protocol._send_data = lambda data: None  # no transport: answers go nowhere
    return ls


def _message(ls, method, params, msg_id=None):
    data = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        data["id"] = msg_id
    return ls.protocol.structure_message(data)


async def _drive(ls) -> None:
    ls.protocol.handle_message(_message(ls, types.INITIALIZE, {"capabilities": {}}, msg_id=0))
    doc = {"uri": URI, "languageId": "python", "version": 1, "text": "x = 1\n"}
    ls.protocol.handle_message(_message(ls, types.TEXT_DOCUMENT_DID_OPEN, {"textDocument": doc}))
    for version in range(2, CHANGES + 2):
        change = {"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}}, "text": str(version % 10)}
        params = {"textDocument": {"uri": URI, "version": version}, "contentChanges": [change]}
        ls.protocol.handle_message(_message(ls, types.TEXT_DOCUMENT_DID_CHANGE, params))
        ls.protocol.handle_message(_message(ls, "gradguard/asyncNote", {}))
        ls.protocol.handle_message(_message(ls, "gradguard/ask", {}, msg_id=version))
    for _ in range(10):  # let the coroutines finish
        await asyncio.sleep(0)


@pytest.mark.asyncio
async def test_no_handler_future_outlives_its_message():
    ls = _server(Protocol)
    await _drive(ls)
    assert ls.seen.count("async") == CHANGES
    assert [v for v in ls.seen if v != "async"] == list(range(2, CHANGES + 2))
    assert ls.workspace.get_text_document(URI).source == f"x = {(CHANGES + 1) % 10}\n"
    assert ls.protocol._request_futures == {}


@pytest.mark.asyncio
async def test_plain_pygls_keeps_them_which_is_why_the_mend_exists():
    # When this fails, pygls has fixed it and Protocol._execute_handler can go.
    ls = _server(LanguageServerProtocol)
    await _drive(ls)
    assert len(ls.protocol._request_futures) >= CHANGES
