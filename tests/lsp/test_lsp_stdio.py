"""The server reads its stdin whatever it is: a pipe or a socket of its own (read
on the event loop, `gradguard.lsp.stdio`; VS Code and Neovim give it sockets), one
socket for both directions or a regular file (pygls' thread reader). A session's
opening sent as one burst (every frame in one write, as from a client that fell
behind) is answered in full by each."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess

import pytest

from lsp_harness import SERVER, TIMEOUT_S
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


def _parse(stream: bytes) -> tuple[list[dict], bytes]:
    """The whole messages in `stream`, and what is left of a partial one."""
    messages = []
    while b"\r\n\r\n" in stream:
        head, _, rest = stream.partition(b"\r\n\r\n")
        fields = dict(line.split(b": ", 1) for line in head.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        if len(rest) < length:
            break
        messages.append(json.loads(rest[:length]))
        stream = rest[length:]
    return messages, stream


def _read_until(proc, predicate) -> list[dict]:
    """The server's messages up to the first that satisfies `predicate`."""
    messages, buffer = [], b""
    while not any(predicate(m) for m in messages):
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT_S)
        assert ready, f"no answer in {TIMEOUT_S} s; read so far: {messages}"
        chunk = os.read(proc.stdout.fileno(), 65536)
        assert chunk, f"the server closed its output; read so far: {messages}"
        more, buffer = _parse(buffer + chunk)
        messages += more
    return messages


def _is_hover_answer(message: dict) -> bool:
    return message.get("id") == 1 and "method" not in message


def _check_opening(messages: list[dict]) -> None:
    answers = {m["id"]: m for m in messages if "id" in m and "method" not in m}
    assert "capabilities" in answers[0]["result"]
    assert answers[1]["result"]["contents"]["value"].startswith("**`Tensor.backward()`**")


def _finish(proc, send) -> None:
    send(_frames(CLOSING))
    rest = _read_until(proc, lambda m: m.get("id") == 2)
    assert [m for m in rest if m.get("id") == 2] == [{"jsonrpc": "2.0", "id": 2, "result": None}]
    assert proc.wait(TIMEOUT_S) == 0


def _burst(proc, send) -> None:
    """The opening in one write, its answers, then shutdown and exit."""
    send(_frames(OPENING))
    _check_opening(_read_until(proc, _is_hover_answer))
    _finish(proc, send)


def test_a_burst_on_a_pipe():
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(_frames(OPENING))
        proc.stdin.flush()
        messages = _read_until(proc, _is_hover_answer)
        _check_opening(messages)
        messages += _read_until(proc, lambda m: m.get("method") == "textDocument/publishDiagnostics")
        published = next(m["params"] for m in messages if m.get("method") == "textDocument/publishDiagnostics")
        assert sorted(d["message"] for d in published["diagnostics"] if d["code"] == "GG101") == sorted(
            [NEVER_BACKWARDED, BACKWARDED]
        )
        _finish(proc, lambda data: (proc.stdin.write(data), proc.stdin.flush()))
    finally:
        proc.kill()


def test_a_burst_on_a_socket_of_its_own():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        proc = subprocess.Popen(SERVER, stdin=theirs.fileno(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            _burst(proc, ours.sendall)
        finally:
            proc.kill()


def test_a_burst_on_one_socket_for_both_directions():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        proc = subprocess.Popen(SERVER, stdin=theirs.fileno(), stdout=theirs.fileno(), stderr=subprocess.DEVNULL)
        proc.stdout = ours.makefile("rb")  # what _read_until reads
        try:
            _burst(proc, ours.sendall)
        finally:
            proc.kill()
            proc.stdout.close()


def test_a_whole_session_from_a_regular_file(tmp_path):
    path = tmp_path / "frames"
    path.write_bytes(_frames([*OPENING[:3], *CLOSING]))
    with path.open("rb") as stdin:
        proc = subprocess.run(SERVER, stdin=stdin, capture_output=True, timeout=TIMEOUT_S)
    messages, rest = _parse(proc.stdout)
    assert rest == b""
    assert "capabilities" in messages[0]["result"]
    assert {"jsonrpc": "2.0", "id": 2, "result": None} in messages
    assert proc.returncode == 0
