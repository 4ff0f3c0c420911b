#!/usr/bin/env bash
# Install everything the tests need (Python packages from constraints.txt, torch's
# CPU build, Neovim 0.11 from PyPI, the real editors' toolchain from scripts/test-client.sh:
# Node 24, code-server, Chromium, Emacs with eglot) and run every test. As a normal user the
# Debian packages cannot be installed: one line says which are missing and the root command
# that adds them, and the tests in those editors are skipped (pytest's report says why).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test]'
bash scripts/test-client.sh --install-only
exec .venv/bin/python -m pytest "$@"
