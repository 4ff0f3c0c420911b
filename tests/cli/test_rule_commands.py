"""`gradguard rule CODE`, `gradguard rules` and `gradguard lsp`."""

from __future__ import annotations

import sys
import types
from pathlib import Path

from click.testing import CliRunner

from gradguard.cli import main
from gradguard.rules import all_rules
from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations as GG101


def test_rule_prints_its_docs(gradguard):
    run = gradguard("rule", "GG101")
    assert run.returncode == 0
    head = f"# GG101 {GG101.name}\n\nSeverity: **error / warning**. {GG101.summary}.\n\n"
    assert run.stdout == head + GG101.docs() + "\n"


def test_rule_by_name_or_lower_case(gradguard):
    expected = gradguard("rule", "GG101").stdout
    assert gradguard("rule", "gg101").stdout == expected
    assert gradguard("rule", GG101.name).stdout == expected


def test_unknown_rule(gradguard):
    run = gradguard("rule", "GG999")
    assert (run.stdout, run.returncode) == ("", 2)
    assert run.stderr == "error: no rule 'GG999' (see `gradguard rules`)\n"


def test_rules_lists_every_rule_aligned(gradguard):
    rules = all_rules()
    widths = [
        max(len(r.code) for r in rules),
        max(len(r.name) for r in rules),
        max(len(r.severity_text()) for r in rules),
    ]
    expected = "".join(
        f"{r.code.ljust(widths[0])}  {r.name.ljust(widths[1])}  {r.severity_text().ljust(widths[2])}  {r.summary}\n"
        for r in rules
    )
    run = gradguard("rules")
    assert (run.stdout, run.returncode) == (expected, 0)
    assert run.stdout.startswith(f"GG101  {GG101.name}")


def test_lsp_runs_the_server_main(monkeypatch):
    calls = []
    fake = types.ModuleType("gradguard.lsp.server")
    fake.main = lambda: calls.append("main")
    monkeypatch.setitem(sys.modules, "gradguard.lsp.server", fake)
    result = CliRunner().invoke(main, ["lsp"])
    assert (result.exit_code, calls, result.stdout) == (0, ["main"], "")


def test_lsp_without_the_server_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "gradguard.lsp.server", None)  # makes the import fail
    result = CliRunner().invoke(main, ["lsp"])
    assert result.exit_code == 2
    assert "language server is not installed" in result.stderr


def test_rule_prints_exactly_its_generated_page(gradguard):
    # One source: `gradguard rule` and docs/rules/CODE.md (kept fresh by tests/test_docs.py) are the same text.
    pages = Path(__file__).resolve().parents[2] / "docs" / "rules"
    for r in all_rules():
        assert gradguard("rule", r.code).stdout == (pages / f"{r.code}.md").read_text(encoding="utf-8")
