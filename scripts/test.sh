#!/usr/bin/env bash
# Install everything the tests need (Python packages from constraints.txt, torch's
# CPU build, Debian's neovim for the second real LSP client, the VS Code extension's
# toolchain: Node 24, code-server, Chromium) and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test]'
if ! command -v nvim >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null) \
      || echo "warning: could not install neovim; its test will be skipped" >&2
  else
    echo "warning: neovim is not installed and this is not root; its test will be skipped" >&2
  fi
fi
bash scripts/test-client.sh --install-only
exec .venv/bin/python -m pytest "$@"
