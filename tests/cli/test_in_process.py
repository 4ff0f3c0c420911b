"""CLI paths no shipped rule reaches yet, driven in-process with a stand-in engine.

A crashed rule, a rule whose only fix is unsafe, a write that fails: the CLI
must report each without losing the other results.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

import gradguard.cli
import gradguard.engine
from gradguard.engine import Analysis
from gradguard.findings import Edit, Finding, Fix, Position, Range, Safety, Severity
from gradguard.settings import Settings

CRASH = "GG999 crashed: ValueError: boom"


def fake_analyze(source: str, settings=None, **_):
    """Reports every `KEEP` (with an unsafe fix to `DROP`) and `HOLD` (no fix); `CRASH` crashes a rule."""
    internal = [CRASH] if "CRASH" in source else []
    findings = []
    for number, line in enumerate(source.splitlines(), 1):
        col = line.find("KEEP")
        if col >= 0:
            rng = Range(Position(number, col), Position(number, col + 4))
            fix = Fix("Use DROP", Safety.UNSAFE, (Edit(rng, "DROP"),))
            findings.append(Finding("GG101", "keep", Severity.WARNING, "KEEP found", rng, fixes=(fix,)))
        col = line.find("HOLD")
        if col >= 0:
            rng = Range(Position(number, col), Position(number, col + 4))
            findings.append(Finding("GG101", "hold", Severity.WARNING, "HOLD found", rng))
    return Analysis(findings=findings, internal_errors=internal)


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setattr(gradguard.cli, "analyze", fake_analyze)
    monkeypatch.setattr(gradguard.engine, "analyze", fake_analyze)  # what fix_source calls
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str):
        return CliRunner().invoke(gradguard.cli.main, ["check", "--jobs", "1", *args])

    return invoke


def test_only_unsafe_fixes_are_hinted(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = KEEP\n")
    result = cli("a.py")
    assert result.stdout == "a.py:1:5: warning: GG101 KEEP found\nFound 1 finding (1 fixable with --unsafe-fixes). 1 file checked.\n"
    assert result.exit_code == 1


def test_fix_leaves_unsafe_fixes_alone(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = KEEP\n")
    result = cli("--fix", "a.py")
    assert (tmp_path / "a.py").read_text() == "x = KEEP\n"
    assert result.stdout == "a.py:1:5: warning: GG101 KEEP found\nFound 1 finding (1 fixable with --unsafe-fixes). 1 file checked.\n"
    assert result.exit_code == 1


def test_unsafe_fixes_applies_them(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = KEEP\n")
    result = cli("--fix", "--unsafe-fixes", "a.py")
    assert (tmp_path / "a.py").read_text() == "x = DROP\n"
    assert (result.stdout, result.exit_code) == ("Fixed 1 finding. 1 file checked.\n", 0)


def test_fixed_and_remaining_are_both_reported(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = KEEP\ny = HOLD\n")
    result = cli("--fix", "--unsafe-fixes", "a.py")
    assert (tmp_path / "a.py").read_text() == "x = DROP\ny = HOLD\n"
    assert result.stdout == "a.py:2:5: warning: GG101 HOLD found\nFixed 1 finding.\nFound 1 finding. 1 file checked.\n"
    assert result.exit_code == 1


def test_diff_with_unsafe_fixes(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = KEEP\n")
    assert cli("--diff", "a.py").stdout == ""
    result = cli("--diff", "--unsafe-fixes", "a.py")
    assert result.stdout == "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-x = KEEP\n+x = DROP\n"
    assert result.exit_code == 1


def test_crashed_rule_is_a_warning(cli, tmp_path):
    (tmp_path / "a.py").write_text("# CRASH\n")
    result = cli("a.py")
    assert result.stderr == f"a.py: warning: internal error: {CRASH}\n"
    assert (result.stdout, result.exit_code) == ("All checks passed! 1 file checked.\n", 0)


def test_engine_exception_does_not_stop_the_run(cli, tmp_path, monkeypatch):
    def explode(source, settings=None, **_):
        if "BOOM" in source:
            raise RuntimeError("engine bug")
        return fake_analyze(source, settings)

    monkeypatch.setattr(gradguard.cli, "analyze", explode)
    (tmp_path / "a.py").write_text("BOOM\n")
    (tmp_path / "b.py").write_text("x = KEEP\n")
    result = cli(".")
    assert result.stderr == "a.py: error: internal error: RuntimeError: engine bug\n"
    assert result.stdout.startswith("b.py:1:5: warning: GG101 KEEP found\n")
    assert result.exit_code == 2


def test_failed_write_keeps_the_file_and_cleans_up(cli, tmp_path, monkeypatch):
    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    (tmp_path / "a.py").write_text("x = KEEP\n")
    result = cli("--fix", "--unsafe-fixes", "a.py")
    assert (tmp_path / "a.py").read_text() == "x = KEEP\n"
    # no temporary file left beside it, nor in the cache (whose own write failed too)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gradguard_cache", "a.py"]
    assert sorted(p.name for p in (tmp_path / ".gradguard_cache").iterdir()) == [".gitignore"]
    assert result.stderr == "a.py: error: cannot write fixes: No space left on device\n"
    assert result.exit_code == 2


def test_flags_become_settings(cli, tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(
        gradguard.cli, "analyze", lambda source, settings=None, **_: seen.append(settings) or Analysis()
    )
    (tmp_path / "a.py").write_text("x = 1\n")
    cli(
        "--copy-order",
        "detach-clone",
        "--select",
        "gg1,GG2",
        "--ignore",
        "GG20",
        "--ignore",
        "GG101",
        "a.py",
    )
    cli("a.py")
    flagged, default = seen
    assert (flagged.copy_order, flagged.select, flagged.ignore) == (
        "detach-clone",
        ("GG1", "GG2"),
        ("GG20", "GG101"),
    )
    assert default == Settings()
