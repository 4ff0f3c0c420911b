"""Server abuse: bytes that are not JSON, params of the wrong type, unknown methods,
documents never opened, positions past the end, changes out of order, a burst of
1,000 changes, a hover storm during a long analysis, a client that vanishes.
Each gets a proper JSON-RPC error or is ignored as the protocol says, and the
server keeps serving.

Raw stdio (RawServer) where the client library would refuse to send the abuse;
pytest-lsp (lsp_harness) for the rest."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys

import pytest
from lsprotocol import types

from lsp_harness import SERVER, TIMEOUT_S, Client, initialize, uri_for
from test_lsp_diagnostics import BACKWARDED, NEVER_BACKWARDED, TRAIN
from test_lsp_hover import at, hover

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from lsp_latency import training_code  # noqa: E402 - realistic training code of any length

class RawServer:
    """The server as a subprocess, spoken to in raw JSON-RPC frames."""

    def __init__(self, proc: subprocess.Popen | None = None):
        """`proc`: a server started on some other stdin (a socket, a file); by default pipes."""
        self.proc = proc or subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.other: list[dict] = []  # notifications and responses read while waiting for another
        self.buffer = b""

    def send_bytes(self, body: bytes) -> None:
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def _fill(self) -> bool:
        """More of the server's output into the buffer; False at its end."""
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT_S)
        assert ready, f"no answer in {TIMEOUT_S} s; read so far: {self.other}"
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        self.buffer += chunk
        return bool(chunk)

    def read(self) -> dict:
        while b"\r\n\r\n" not in self.buffer:
            assert self._fill(), "the server closed its output"
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        length = next(int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")) if k.lower() == b"content-length")
        while len(self.buffer) < length:
            assert self._fill(), "the server closed its output"
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return json.loads(body)

    def wait_for(self, predicate) -> dict:
        while True:
            message = self.read()
            if predicate(message):
                return message
            self.other.append(message)

    def request(self, id_, method: str, params) -> dict:
        self.send({"id": id_, "method": method, "params": params})
        return self.answer(id_)

    def answer(self, id_) -> dict:
        return self.wait_for(lambda m: "method" not in m and m.get("id") == id_)

    def start(self) -> None:
        assert "capabilities" in self.request(0, "initialize", {"capabilities": {}, "initializationOptions": {"debounceMs": 0}})["result"]
        self.send({"method": "initialized", "params": {}})

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.request("bye", "shutdown", None)
            self.send({"method": "exit"})
        return self.proc.wait(TIMEOUT_S)


@pytest.fixture
def raw():
    server = RawServer()
    server.start()
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


def hover_params(uri: str, line=0, character=0) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def open_params(uri: str, text: str, version: int = 1) -> dict:
    return {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}}


def still_serving(raw: RawServer, id_) -> None:
    """A document opened after the abuse gets its two findings."""
    uri = f"file:///tmp/after-{id_}.py"
    raw.send({"method": "textDocument/didOpen", "params": open_params(uri, TRAIN)})
    published = raw.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
    assert sorted(d["message"] for d in published["params"]["diagnostics"] if d["code"] == "GG101") == sorted(
        [NEVER_BACKWARDED, BACKWARDED]
    )
    answer = raw.request(id_, "textDocument/hover", hover_params(uri, TRAIN.count("\n", 0, TRAIN.index("backward")), 9))
    assert answer["result"]["contents"]["value"].startswith("**`Tensor.backward()`**")


# ------------------------------------------------------------------ raw JSON-RPC
def test_bytes_that_are_not_json_get_a_parse_error(raw):
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {')
    error = raw.wait_for(lambda m: "error" in m)
    assert error == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "Parse Error: Expecting property name enclosed in double quotes: line 1 column 72 (char 71)",
        },
    }
    still_serving(raw, 2)
    assert raw.stop() == 0


@pytest.mark.parametrize(
    "params",
    [
        {"textDocument": {"uri": "file:///a.py"}, "position": {"line": "zero", "character": 0}},
        {"textDocument": "file:///a.py", "position": {"line": 0, "character": 0}},
        {"textDocument": {"uri": "file:///a.py"}},
        None,
        [1, 2],
    ],
    ids=["string-line", "string-document", "no-position", "null", "array"],
)
def test_a_request_with_params_of_the_wrong_type_gets_invalid_params(raw, params):
    answer = raw.request(7, "textDocument/hover", params)
    assert answer == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "Invalid Params"}}
    still_serving(raw, 8)


def test_a_notification_with_params_of_the_wrong_type_is_ignored(raw):
    raw.send({"method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///a.py", "version": "one"}}})
    logged = raw.wait_for(
        lambda m: m.get("method") == "window/logMessage" and not m["params"]["message"].startswith("GradGuard settings")
    )
    assert logged["params"] == {"type": 2, "message": "GradGuard ignored a notification with invalid params"}
    still_serving(raw, 3)


def test_unknown_methods(raw):
    assert raw.request(5, "gradguard/noSuchThing", {}) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32601, "message": "Method Not Found: gradguard/noSuchThing"},
    }
    raw.send({"method": "gradguard/noSuchNotification", "params": {}})  # ignored, no answer
    raw.send({"method": "$/noSuchNotification", "params": {}})  # "$/" notifications may always be ignored
    still_serving(raw, 6)
    assert not [m for m in raw.other if "error" in m or m.get("method") == "window/showMessage"]


def test_a_cancel_for_a_request_already_answered_is_not_reported_as_a_problem():
    """The answer and the client's `$/cancelRequest` may cross: that is the protocol working. pygls
    warns about it on stderr, which editors show as an error of the extension; the server drops it."""
    server = RawServer(subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    server.start()
    still_serving(server, 1)
    server.send({"method": "$/cancelRequest", "params": {"id": 1}})
    server.send({"method": "$/cancelRequest", "params": {"id": 12345}})
    still_serving(server, 2)
    assert server.stop() == 0
    assert b"Cancel notification" not in server.proc.stderr.read()


def test_requests_and_changes_for_documents_never_opened(raw):
    ghost = "file:///tmp/never-opened.py"
    assert raw.request(1, "textDocument/hover", hover_params(ghost))["result"] is None
    code_action = {
        "textDocument": {"uri": ghost},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": [], "only": ["source.fixAll.gradguard"]},
    }
    assert raw.request(2, "textDocument/codeAction", code_action)["result"] is None
    changed = {"textDocument": {"uri": ghost, "version": 2}, "contentChanges": [{"text": "import torch\n"}]}
    raw.send({"method": "textDocument/didChange", "params": changed})
    logged = raw.wait_for(lambda m: m.get("method") == "window/logMessage")
    assert logged["params"] == {
        "type": 2,
        "message": f"GradGuard ignored a notification it could not apply (KeyError: '{ghost}')",
    }
    raw.send({"method": "textDocument/didSave", "params": {"textDocument": {"uri": ghost}}})
    raw.send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": ghost}}})
    still_serving(raw, 3)
    assert not [m for m in raw.other if m.get("method") == "window/showMessage"]


def test_a_client_that_disconnects_ends_the_server(raw):
    raw.send({"method": "textDocument/didOpen", "params": open_params("file:///tmp/a.py", training_code(2_000))})
    raw.proc.stdin.close()  # gone without shutdown or exit, mid-analysis
    assert raw.proc.wait(TIMEOUT_S) is not None


def test_a_client_that_dies_mid_message_ends_the_server(raw):
    raw.proc.stdin.write(b"Content-Length: 1000\r\n\r\n{\"jsonrpc\": ")
    raw.proc.stdin.flush()
    raw.proc.stdin.close()
    assert raw.proc.wait(TIMEOUT_S) is not None


# ------------------------------------------------------------------ pytest-lsp
@pytest.mark.asyncio
async def test_positions_past_the_end_of_the_line_and_the_document(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    await client.diagnostics_for(uri)
    lines = TRAIN.count("\n")
    for line, character in [(0, 10_000), (lines - 1, 500), (lines, 0), (lines + 50, 3), (10**9, 10**9)]:
        assert await hover(client, uri, types.Position(line, character)) is None
    far = types.Range(types.Position(lines + 5, 0), types.Position(lines + 9, 99))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), far, types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])
        )
    )
    assert actions is None
    result = await hover(client, uri, at(TRAIN, "backward", 1))  # and real positions still work
    assert result.contents.value.startswith("**`Tensor.backward()`**")


@pytest.mark.asyncio
async def test_changes_out_of_order_publish_for_the_text_the_server_holds(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    await client.diagnostics_for(uri)
    fixed = TRAIN.replace("val_losses.append(loss)", "val_losses.append(loss.item())")

    def whole(version: int, text: str) -> None:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), [types.TextDocumentContentChangeWholeDocument(text)]
            )
        )

    whole(5, "import torch\n")
    whole(3, fixed)  # older than the version before it
    (only,) = await client.diagnostics_for(uri, 3)
    assert only.message == BACKWARDED
    assert all(p.version in (1, 5, 3) for p in client.publishes(uri))


@pytest.mark.asyncio
async def test_a_thousand_rapid_changes_end_with_the_diagnostics_of_the_final_text(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    await client.diagnostics_for(uri)
    line = TRAIN.count("\n", 0, TRAIN.index("val_losses.append(loss)"))
    column = len("    val_losses.append(loss")
    text = TRAIN
    for i in range(1_000):  # type `.item()` one character per change, delete it again, and so on
        k = (i + 1) % 14  # the last change (k == 6) completes `.item()`
        typed = ".item()"[: k + 1] if k < 7 else ".item()"[: 13 - k]
        lines = text.split("\n")
        end = len(lines[line])
        lines[line] = lines[line][:column] + typed + ")"
        text = "\n".join(lines)
        client.versions[uri] += 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=client.versions[uri]),
                [types.TextDocumentContentChangePartial(range=types.Range(types.Position(line, column), types.Position(line, end)), text=typed + ")")],
            )
        )
    final = await client.diagnostics_for(uri, 1_001)
    # The same text opened fresh in another document: the same findings.
    fresh = uri_for(tmp_path, "fresh.py")
    client.open(fresh, text)
    expected = await client.diagnostics_for(fresh)
    assert [(d.range, d.message, d.code) for d in final] == [(d.range, d.message, d.code) for d in expected]
    assert text.split("\n")[line] == "    val_losses.append(loss.item())"  # the last change typed six characters
    assert len(final) == 1


@pytest.mark.asyncio
async def test_a_hover_storm_while_a_10_000_line_file_is_analysed(client: Client, tmp_path):
    await initialize(client)
    small, big = uri_for(tmp_path, "small.py"), uri_for(tmp_path, "big.py")
    client.open(small, TRAIN)
    await client.diagnostics_for(small)
    text = training_code(10_000)
    client.open(big, text)  # its analysis takes seconds; the hovers arrive meanwhile
    on_small = at(TRAIN, "backward", 1)
    on_big = at(text, ".detach()", 1, occurrence=40)
    answers = await asyncio.gather(
        *[hover(client, small if i % 2 else big, on_small if i % 2 else on_big) for i in range(200)]
    )
    assert [a.contents.value.split(":", 1)[0] for a in answers[1::2]] == ["**`Tensor.backward()`**"] * 100
    assert [a.contents.value.split(":", 1)[0] for a in answers[0::2]] == ["**`Tensor.detach()`**"] * 100
    assert len(await client.diagnostics_for(big)) > 0  # and the long analysis still publishes
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]


@pytest.mark.asyncio
async def test_a_10_mb_document_is_skipped_with_a_message(client: Client, tmp_path):
    await initialize(client)
    huge = uri_for(tmp_path, "huge.py")
    client.open(huge, "import torch\nBLOB = '" + "x" * (10 * 1024 * 1024) + "'\n")
    await client.wait_until(
        lambda: [m for m in [*client.log_messages, *client.messages] if "huge.py" in m.message], "a message naming huge.py"
    )
    small = uri_for(tmp_path)
    client.open(small, TRAIN)
    assert len(await client.diagnostics_for(small)) == 2


DEEP_LOOP = (
    "import torch\nmodel = torch.nn.Linear(3, 1)\nx = torch.randn(4, 3)\nlosses = []\nfor step in range(3):\n"
    "    loss = model(x).sum()" + " + 0" * 2_500 + "\n    losses.append(loss)\n"
)


def test_code_as_deep_as_python_allows_gets_its_diagnostics(raw):
    # 2,500 terms: deeper than Python's default recursion limit lets the walk go
    uri = "file:///tmp/long_sum.py"
    raw.send({"method": "textDocument/didOpen", "params": open_params(uri, DEEP_LOOP)})
    published = raw.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
    assert [(d["code"], d["range"]) for d in published["params"]["diagnostics"]] == [
        ("GG101", {"start": {"line": 6, "character": 18}, "end": {"line": 6, "character": 22}})
    ]
    still_serving(raw, 2)


@pytest.mark.parametrize(
    "text",
    [
        "import torch\nx = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n",
        "import torch\ny = (x\n" + "    + x\n" * 10_000 + ")\n",  # killed the server (SIGSEGV in libcst) before
    ],
    ids=["brackets", "sum_over_lines"],
)
def test_nesting_deeper_than_python_allows_is_skipped_with_a_warning(raw, text):
    raw.send({"method": "textDocument/didOpen", "params": open_params("file:///tmp/deep.py", text)})
    logged = raw.wait_for(lambda m: m.get("method") == "window/logMessage" and "deep.py" in m["params"]["message"])
    assert logged["params"] == {"type": 2, "message": "GradGuard skipped deep.py: too deeply nested to parse"}
    still_serving(raw, 2)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "shape", [lambda t: t.replace("\n", "\r\n"), lambda t: t.replace("\n", "\r"), lambda t: "\ufeff" + t, lambda t: t.replace("    ", "\t")],
    ids=["crlf", "cr", "bom", "tabs"],
)
async def test_line_endings_a_bom_and_tabs_place_the_same_diagnostics(client: Client, tmp_path, shape):
    await initialize(client)
    plain, shaped = uri_for(tmp_path, "plain.py"), uri_for(tmp_path, "shaped.py")
    client.open(plain, TRAIN)
    client.open(shaped, shape(TRAIN))
    expected = [(d.range.start.line, d.range.end.line, d.message) for d in await client.diagnostics_for(plain)]
    got = [(d.range.start.line, d.range.end.line, d.message) for d in await client.diagnostics_for(shaped)]
    assert got == expected and len(got) == 2


@pytest.mark.asyncio
async def test_a_nul_byte_is_a_syntax_error_that_publishes_nothing(client: Client, tmp_path):
    await initialize(client)
    uri = uri_for(tmp_path, "nul.py")
    client.open(uri, TRAIN + "\x00\n")
    await client.wait_until(lambda: [m for m in client.log_messages if m.message.startswith("nul.py v1: syntax error")], "the log")
    assert client.publishes(uri) == []
    fixed = client.replace(uri, TRAIN)
    assert len(await client.diagnostics_for(uri, fixed)) == 2
