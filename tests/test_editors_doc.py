"""docs/editors.md: every configuration parses in its own language and starts the same
command (`gradguard lsp --stdio`) - the Neovim and Emacs ones are also run, by tests/nvim/
and tests/emacs/."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", PAGE, re.S | re.M)


def test_helix_and_zed_toml_parse_and_start_gradguard_lsp():
    helix, zed_extension, cargo = [tomllib.loads(b) for b in blocks("toml")]
    assert helix["language-server"]["gradguard"] == {"command": "gradguard", "args": ["lsp", "--stdio"]}
    assert "gradguard" in helix["language"][0]["language-servers"]
    assert zed_extension["language_servers"]["gradguard"]["languages"] == ["Python"]
    assert cargo["lib"]["crate-type"] == ["cdylib"]
    (rust,) = blocks("rust")
    assert 'worktree\n            .which("gradguard")' in rust and 'args: vec!["lsp".into(), "--stdio".into()]' in rust


def test_sublime_and_zed_settings_are_json():
    zed_settings, sublime = [json.loads(b) for b in blocks("json")]
    assert "gradguard" in zed_settings["languages"]["Python"]["language_servers"]
    assert sublime["clients"]["gradguard"]["command"] == ["gradguard", "lsp", "--stdio"]


def test_emacs_eglot_form_names_the_command():
    (elisp,) = blocks("elisp")
    assert elisp.count("(") == elisp.count(")")
    assert '. ("gradguard" "lsp" "--stdio")' in elisp
    assert '"source.fixAll.gradguard"' in elisp


def test_every_lua_configuration_starts_gradguard_lsp():
    lua = blocks("lua")
    assert len(lua) == 3
    assert all('cmd = { "gradguard", "lsp", "--stdio" }' in b for b in lua)


def test_the_documented_command_is_the_language_server():
    # what every block runs: `gradguard lsp --stdio` (--stdio is the default) answers --help as the server
    for args in (["lsp", "--help"], ["lsp", "--stdio", "--help"]):
        run = subprocess.run([sys.executable, "-m", "gradguard", *args], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0 and "language server" in run.stdout.lower(), run.stdout + run.stderr
