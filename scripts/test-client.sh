#!/usr/bin/env bash
# The real editors' toolchain, installed from the project's own files (idempotent, quiet):
#   Debian: chromium, and the headers code-server's native modules compile against;
#           Emacs and eglot (tests/emacs: the eglot configuration of docs/editors.md);
#   npm (package-lock.json): Node 24 (npm package `node`), TypeScript, vsce, vscode-languageclient;
#   npm (tests/client/e2e/package-lock.json, under Node 24): code-server, playwright-core.
# (Neovim comes from PyPI, with the Python test packages.) Then runs the VS Code client tests
# (tests/client); `--install-only` stops after installing. Without root nothing is installed
# from Debian: one line says what is missing and the command that adds it, and the tests that
# need it are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

install_only=false
if [ "${1:-}" = "--install-only" ]; then install_only=true; shift; fi

# fonts-liberation: Chromium's only font (a recommend of it; recommends are not installed)
vscode_packages="chromium fonts-liberation libkrb5-dev pkg-config libsecret-1-dev libxkbfile-dev libx11-dev build-essential python3"
command -v npm >/dev/null 2>&1 || vscode_packages="$vscode_packages nodejs npm"
missing_from() {
  local p out=""
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || out="$out $p"; done
  echo "$out"
}
find_missing() {
  # eglot is built into Emacs 29+; Debian 12's Emacs 28 has it as a package (known once apt's lists are)
  local emacs_packages="emacs-nox"
  if apt-cache show elpa-eglot >/dev/null 2>&1; then emacs_packages="$emacs_packages elpa-eglot"; fi
  # shellcheck disable=SC2086  # word splitting of the package lists is intended
  vscode_missing=$(missing_from $vscode_packages)
  # shellcheck disable=SC2086
  emacs_missing=$(missing_from $emacs_packages)
  missing="$vscode_missing$emacs_missing"
}
find_missing
code_server=true
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    # Without root every other test still runs; these skip, each saying why in pytest's report.
    editors=""
    [ -n "$vscode_missing" ] && editors="VS Code in code-server + Chromium" && code_server=false
    [ -n "$emacs_missing" ] && editors="${editors:+$editors, }Emacs"
    echo "skipping the tests in real editors ($editors): Debian packages missing:$missing;" \
      "to run them, as root: apt-get update && apt-get install -y --no-install-recommends$missing" >&2
    command -v npm >/dev/null 2>&1 || exit 0  # nothing below can be installed without npm
  else
    apt-get update -qq
    find_missing
    # shellcheck disable=SC2086
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
# code-server compiles native modules against the Debian headers above: without them it is not
# installed, and the code-server tests skip.
if [ "$code_server" = true ]; then npm_ci tests/client/e2e; fi

if [ "$install_only" = true ]; then exit 0; fi
[ -x .venv/bin/python ] || { echo "error: .venv is missing: run bash scripts/test.sh" >&2; exit 1; }
exec .venv/bin/python -m pytest tests/client "$@"
