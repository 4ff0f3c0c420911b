"""Where the client's toolchain lives (installed by `bash scripts/test-client.sh --install-only`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_BIN = REPO / "node_modules" / ".bin"  # Node 24 (npm package `node`), tsc, vsce
E2E = REPO / "tests" / "client" / "e2e"  # code-server and playwright-core, a package of their own
CODE_SERVER = E2E / "node_modules" / ".bin" / "code-server"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = REPO / "tests" / "client" / "artifacts"

INSTALL_HINT = "run `bash scripts/test-client.sh --install-only` first"


def node_env() -> dict[str, str]:
    """The environment with Node 24 first on PATH (code-server and vsce need it)."""
    return {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.fixture(scope="session")
def node_toolchain() -> dict[str, str]:
    if not (NODE_BIN / "node").exists() or not (NODE_BIN / "tsc").exists():
        pytest.skip(f"the extension's npm packages are not installed: {INSTALL_HINT}")
    return node_env()
