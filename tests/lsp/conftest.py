"""Fixtures for the language-server tests (helpers live in lsp_harness.py)."""

import pytest_lsp

from lsp_harness import Client, server_config


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: Client):
    yield
    await lsp_client.shutdown_session()
