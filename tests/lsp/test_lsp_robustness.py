"""The server never dies: a crashing rule, a crashing engine and stray prints to
stdout are provoked inside the server process by a test-only sitecustomize shim
(placed on PYTHONPATH from the test's tmp dir; production code stays clean)."""

from __future__ import annotations

import textwrap
from contextlib import asynccontextmanager

import pytest
from lsprotocol import types

from lsp_harness import Client, initialize, server_config, uri_for
from test_lsp_diagnostics import BACKWARDED, TRAIN
from test_lsp_hover import at, hover

pytestmark = pytest.mark.asyncio

RULE_CRASH = """
from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations

def finish(self):
    raise RuntimeError("provoked by the test")

GraphKeptAcrossIterations.finish = finish
"""

ENGINE_CRASH = """
import gradguard.engine as engine

original = engine.analyze

def analyze(source, *args, **kwargs):
    if "CRASH_ENGINE" in source:
        raise MemoryError("provoked by the test")
    return original(source, *args, **kwargs)

engine.analyze = analyze
"""

STDOUT_NOISE = r"""
import pathlib
import gradguard.engine as engine

original = engine.analyze

def analyze(source, *args, **kwargs):
    # Framing-shaped noise: on the real stdout the client would read it as a broken message.
    print("Content-Length: 9\r\n\r\n{noise!!}", end="", flush=True)
    pathlib.Path(__file__).with_name("printed").touch()  # proof that the shim ran
    return original(source, *args, **kwargs)

engine.analyze = analyze
"""


@asynccontextmanager
async def server_with(tmp_path, shim: str):
    (tmp_path / "shim").mkdir()
    (tmp_path / "shim" / "sitecustomize.py").write_text(textwrap.dedent(shim))
    client: Client = await server_config({"PYTHONPATH": str(tmp_path / "shim")}).start()
    try:
        await initialize(client)
        yield client
        await client.shutdown_session()
    finally:
        await client.stop()


def errors(client: Client) -> list[str]:
    return [m.message for m in client.log_messages if m.type == types.MessageType.Error]


async def test_a_crashing_rule_is_logged_and_the_server_keeps_serving(tmp_path):
    async with server_with(tmp_path, RULE_CRASH) as client:
        uri = uri_for(tmp_path)
        client.open(uri, TRAIN)
        assert await client.diagnostics_for(uri) == []  # the other rules' findings (none selected) still publish
        assert errors(client) == [
            "GradGuard internal error on train.py: GG101 crashed: RuntimeError: provoked by the test"
        ]
        version = client.replace(uri, TRAIN + "\n")
        assert await client.diagnostics_for(uri, version) == []
        result = await hover(client, uri, at(TRAIN, "backward", 1))
        assert result.contents.value.startswith("**`Tensor.backward()`**")


async def test_a_crashing_engine_is_logged_and_the_server_keeps_serving(tmp_path):
    async with server_with(tmp_path, ENGINE_CRASH) as client:
        uri = uri_for(tmp_path)
        client.open(uri, TRAIN)
        assert len(await client.diagnostics_for(uri)) == 2
        client.replace(uri, TRAIN + "# CRASH_ENGINE\n")
        (error,) = await client.wait_until(lambda: errors(client), "the error log")
        assert error.startswith("GradGuard failed on train.py:\nTraceback")
        assert error.rstrip().endswith("MemoryError: provoked by the test")
        fixed = client.replace(uri, TRAIN.replace("val_losses.append(loss)", "val_losses.append(loss.item())"))
        (only,) = await client.diagnostics_for(uri, fixed)
        assert only.message == BACKWARDED
        assert [p.version for p in client.publishes(uri)] == [1, fixed]


async def test_prints_to_stdout_do_not_corrupt_the_protocol(tmp_path):
    async with server_with(tmp_path, STDOUT_NOISE) as client:
        uri = uri_for(tmp_path)
        client.open(uri, TRAIN)
        assert len(await client.diagnostics_for(uri)) == 2
        version = client.replace(uri, TRAIN + "\n")
        assert len(await client.diagnostics_for(uri, version)) == 2
        assert (tmp_path / "shim" / "printed").exists()
        assert client.error is None
