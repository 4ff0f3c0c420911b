#!/usr/bin/env bash
# Install everything the tests need (Python packages from constraints.txt, torch's
# CPU build, Neovim 0.11 from PyPI for the second real LSP client, the VS Code extension's
# toolchain: Node 24, code-server, Chromium) and run every test. As a normal user the
# Debian packages cannot be installed: the real-editor tests are skipped, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test]'
bash scripts/test-client.sh --install-only
exec .venv/bin/python -m pytest "$@"
