"""The server reads its stdin whatever it is: a pipe or a socket of its own (read
on the event loop, `gradguard.lsp.stdio`; VS Code and Neovim give it sockets), one
socket for both directions or a regular file (pygls' thread reader). A session's
opening sent as one burst (every frame in one write, as from a client that fell
behind) is answered in full by each."""

from __future__ import annotations

import json
import socket
import subprocess

from lsp_harness import SERVER, TIMEOUT_S
from test_lsp_abuse import RawServer
from test_lsp_diagnostics import BACKWARDED, NEVER_BACKWARDED, TRAIN

URI = "file:///tmp/stdio-train.py"
HOVER_LINE = TRAIN.count("\n", 0, TRAIN.index("backward"))
OPENING = [
    {"id": 0, "method": "initialize", "params": {"capabilities": {}, "initializationOptions": {"debounceMs": 0}}},
    {"method": "initialized", "params": {}},
    {"method": "textDocument/didOpen", "params": {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": TRAIN}}},
    {"id": 1, "method": "textDocument/hover", "params": {"textDocument": {"uri": URI}, "position": {"line": HOVER_LINE, "character": 9}}},
]
CLOSING = [{"id": 2, "method": "shutdown", "params": None}, {"method": "exit", "params": None}]


def _frames(messages: list[dict]) -> bytes:
    out = b""
    for message in messages:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def _open(raw: RawServer, send) -> None:
    """The opening in one write, and its answers."""
    send(_frames(OPENING))
    assert "capabilities" in raw.answer(0)["result"]
    assert raw.answer(1)["result"]["contents"]["value"].startswith("**`Tensor.backward()`**")


def _close(raw: RawServer, send) -> None:
    send(_frames(CLOSING))
    assert raw.answer(2) == {"jsonrpc": "2.0", "id": 2, "result": None}
    assert raw.proc.wait(TIMEOUT_S) == 0


def _burst(raw: RawServer, send) -> None:
    _open(raw, send)
    _close(raw, send)


def _published(raw: RawServer) -> dict:
    is_publish = lambda m: m.get("method") == "textDocument/publishDiagnostics"  # noqa: E731
    return next((m for m in raw.other if is_publish(m)), None) or raw.wait_for(is_publish)


def test_a_burst_on_a_pipe():
    raw = RawServer()
    try:
        send = lambda data: (raw.proc.stdin.write(data), raw.proc.stdin.flush())  # noqa: E731
        _open(raw, send)
        published = _published(raw)["params"]
        assert sorted(d["message"] for d in published["diagnostics"] if d["code"] == "GG101") == sorted(
            [NEVER_BACKWARDED, BACKWARDED]
        )
        _close(raw, send)
    finally:
        raw.proc.kill()


def test_a_burst_on_a_socket_of_its_own():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        raw = RawServer(subprocess.Popen(SERVER, stdin=theirs.fileno(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        try:
            _burst(raw, ours.sendall)
        finally:
            raw.proc.kill()


def test_a_burst_on_one_socket_for_both_directions():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        raw = RawServer(subprocess.Popen(SERVER, stdin=theirs.fileno(), stdout=theirs.fileno(), stderr=subprocess.DEVNULL))
        raw.proc.stdout = ours.makefile("rb")  # what RawServer reads
        try:
            _burst(raw, ours.sendall)
        finally:
            raw.proc.kill()
            raw.proc.stdout.close()


def test_a_whole_session_from_a_regular_file(tmp_path):
    path = tmp_path / "frames"
    path.write_bytes(_frames([*OPENING[:3], *CLOSING]))
    with path.open("rb") as stdin:
        raw = RawServer(subprocess.Popen(SERVER, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        try:
            assert "capabilities" in raw.answer(0)["result"]
            assert raw.answer(2) == {"jsonrpc": "2.0", "id": 2, "result": None}
            assert raw.proc.wait(TIMEOUT_S) == 0
        finally:
            raw.proc.kill()
