#!/usr/bin/env bash
# The VS Code extension's toolchain, installed from the project's own files (idempotent, quiet):
#   Debian: chromium, and the headers code-server's native modules compile against;
#   npm (package-lock.json): Node 24 (npm package `node`), TypeScript, vsce, vscode-languageclient;
#   npm (tests/client/e2e/package-lock.json, under Node 24): code-server, playwright-core.
# Then runs the client tests (tests/client); `--install-only` stops after installing.
set -euo pipefail
cd "$(dirname "$0")/.."

install_only=false
if [ "${1:-}" = "--install-only" ]; then install_only=true; shift; fi

# fonts-liberation: Chromium's only font (a recommend of it; recommends are not installed)
apt_packages="chromium fonts-liberation libkrb5-dev pkg-config libsecret-1-dev libxkbfile-dev libx11-dev build-essential python3"
command -v npm >/dev/null 2>&1 || apt_packages="$apt_packages nodejs npm"
missing=""
for p in $apt_packages; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    # Without root: every other test still runs; the editor tests skip, saying so in pytest's report.
    echo "skipping the VS Code tests in a real editor (code-server + Chromium): Debian packages missing:$missing;" \
      "to run them, as root: apt-get install -y --no-install-recommends$missing" >&2
    command -v npm >/dev/null 2>&1 || exit 0  # nothing below can be installed without npm
  else
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
fi

# `npm ci` from a lockfile, skipped when node_modules was installed from this very lockfile.
npm_ci() {
  local dir=$1 sum
  sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$dir/node_modules/.lock-sha256" 2>/dev/null)" != "$sum" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$sum" >"$dir/node_modules/.lock-sha256"
  fi
}
npm_ci .
export PATH="$PWD/node_modules/.bin:$PATH"  # Node 24 from here on: code-server builds and runs on it
npm_ci tests/client/e2e

if [ "$install_only" = true ]; then exit 0; fi
[ -x .venv/bin/python ] || { echo "error: .venv is missing: run bash scripts/test.sh" >&2; exit 1; }
exec .venv/bin/python -m pytest tests/client "$@"
