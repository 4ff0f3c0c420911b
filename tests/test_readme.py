"""The README as a new user reads it: short, in the order they need it, every command in it
runs (or, for the set-up commands, is the one CI runs), every figure it quotes is the one
docs/benchmarks.md gives, and every link works inside the VS Code package too. The install
lines and the pre-commit snippet are run by tests/test_packaging.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import gradguard

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BENCHMARKS = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)


def sections(text: str) -> dict[str, str]:
    """`## Title` -> its text (the part before the first heading under "")."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {"": parts[0], **dict(zip(parts[1::2], parts[2::2]))}


def blocks(text: str, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(text) if lang == language]


def commands(block: str) -> list[str]:
    """The block's command lines, comments kept (bash reads them as comments)."""
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


README_SECTIONS = sections(README)


def test_short_and_in_the_order_a_user_needs_it():
    assert README.count("\n") <= 150
    assert list(README_SECTIONS) == [
        "", "Install", "In your editor", "Command line", "Configuration", "Rules", "Contributing", "Figures",
    ]
    top = README_SECTIONS[""]
    assert top.count("![") == 1 and "```console\n$ gradguard check " in top  # one screenshot, one terminal sample


def test_every_shell_block_parses():
    for block in blocks(README, "sh"):
        proc = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr + block


def test_the_terminal_sample_is_what_gradguard_prints(tmp_path):
    (sample,) = blocks(README_SECTIONS[""], "console")
    command, *output = sample.splitlines()
    args = command.removeprefix("$ gradguard ").split()
    env = {**os.environ, "GRADGUARD_CACHE_DIR": str(tmp_path), "NO_COLOR": "1"}
    run = subprocess.run([sys.executable, "-m", "gradguard", *args], cwd=ROOT, capture_output=True, text=True, env=env)
    assert (run.stdout.splitlines(), run.returncode) == (output, 1)
    assert {line.split(": ")[1] for line in output[:-1]} == {"error", "warning", "info"}  # severities shown


@pytest.fixture
def project(tmp_path) -> Path:
    """A small project of a user's: a leaky training script, a package, the README's configuration."""
    shutil.copy(ROOT / "examples" / "train_leaky.py", tmp_path / "train.py")
    (tmp_path / "src").mkdir()
    shutil.copy(ROOT / "examples" / "rnn_leaky.py", tmp_path / "src" / "rnn.py")
    (tmp_path / "tools").write_text("#!/usr/bin/env python3\n" + (ROOT / "examples" / "rnn_leaky.py").read_text())
    (tmp_path / ".git").mkdir()  # the project root
    return tmp_path


def test_every_command_line_example_runs(project):
    (block,) = blocks(README_SECTIONS["Command line"], "sh")
    lines = commands(block)
    assert 5 <= len(lines) <= 10
    gradguard_bin = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{gradguard_bin}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    for line in lines:
        assert line.startswith("gradguard "), line
        run = subprocess.run(["bash", "-c", line], cwd=project, capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode in (0, 1), f"{line}\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
        assert "Usage:" not in run.stderr and "Error" not in run.stderr, line + run.stderr
    assert (project / ".gradguard_cache" / ".gitignore").exists()  # the cache went to the project root


def test_the_configuration_example_is_accepted_as_written(project):
    (block,) = blocks(README_SECTIONS["Configuration"], "toml")
    assert len(block.splitlines()) <= 10
    assert set(tomllib.loads(block)["tool"]["gradguard"]) <= {
        "select", "extend-select", "ignore", "per-file-ignores", "include", "extend-include", "exclude",
        "extend-exclude", "severity", "strict", "copy-order", "types", "python",
    }
    (project / "pyproject.toml").write_text(block)
    config = subprocess.run([sys.executable, "-m", "gradguard", "config", "train.py"], cwd=project,
                            capture_output=True, text=True)
    assert config.returncode == 0, config.stderr
    assert "#   GG501  info\n" in config.stdout  # extend-select names the opt-in rules
    check = subprocess.run([sys.executable, "-m", "gradguard", "check", "--output-format", "json", "."], cwd=project,
                           capture_output=True, text=True)
    assert check.returncode == 1, check.stderr


def test_the_set_up_commands_are_the_ones_ci_runs():
    (block,) = blocks(README_SECTIONS["Contributing"], "sh")
    readme = [line.split("#")[0].strip() for line in commands(block)]
    assert readme == ["bash scripts/check-examples.sh", "bash scripts/test.sh"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert [line.strip() for line in ci.splitlines() if line.strip().startswith("bash scripts/")] == readme


def test_the_pre_commit_snippet_parses_and_pins_the_current_version():
    (block,) = blocks(README_SECTIONS["Command line"], "yaml")
    (repo,) = yaml.safe_load(block)["repos"]
    assert repo["rev"] == f"v{gradguard.__version__}"
    assert [hook["id"] for hook in repo["hooks"]] == ["gradguard"]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert "gradguard" in {hook["id"] for hook in hooks}


def test_the_changelogs_newest_version_is_the_packages():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    newest = re.search(r"^## (\d+\.\d+\.\d+) - ", changelog, re.M)
    assert newest and newest.group(1) == gradguard.__version__


# ---------------------------------------------------------------- figures
def table_rows(text: str, start: str, end: str | None = None) -> list[str]:
    part = text[text.index(start):]
    if end:
        part = part[: part.index(end)]
    rows = [line for line in part.splitlines() if line.startswith("|")]
    return rows[2:]  # past the header and its rule


def test_every_figure_is_docs_benchmarks_own():
    quoted = table_rows(README, "<!-- figures:start", "<!-- figures:end")
    at_a_glance = table_rows(BENCHMARKS, "## At a glance", "\n## ")
    assert quoted and set(quoted) <= set(at_a_glance)


def test_no_other_number_in_the_readmes_prose():
    """Figures live in the figures table; prose that quotes one goes stale unseen."""
    prose = FENCE.sub("", README)
    prose = re.sub(r"<!--.*?-->", "", prose, flags=re.S)
    prose = "\n".join(line for line in prose.splitlines() if not line.startswith("|"))
    prose = re.sub(r"`[^`]*`|\]\([^)]*\)|\bGG\d+\b", "", prose)
    assert re.findall(r"\d[\d.,]*", prose) == ["3.10"]  # the Python it needs:
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"] == ">=3.10"


def test_each_benchmark_says_how_to_reproduce_it_in_one_table():
    benchmarks = sections(BENCHMARKS)
    glance = {row.split("|")[3].strip() for row in table_rows(BENCHMARKS, "## At a glance", "\n## ")}
    names = {title.split(":")[0] for title in benchmarks if title not in ("", "At a glance")}
    assert glance <= names
    for title, text in benchmarks.items():
        if title in ("", "At a glance"):
            continue
        script = title.split(":")[0].split()[0]
        (reproduce, *_) = blocks(text, "sh")
        assert f"bench/{script}.py" in reproduce and (ROOT / "bench" / f"{script}.py").exists(), title
        assert len(re.findall(r"^\|(?: -+:? \|)+$", text, re.M)) == 1, f"{title}: one table"


def test_the_corpus_figures_are_what_bench_corpus_prints(tmp_path):
    """The one benchmark cheap and deterministic enough to run here: its table in
    docs/benchmarks.md, and the README's figure from it, are today's output."""
    out = tmp_path / "corpus.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "corpus.py"), "--modes", "default", "--json", str(out)],
                   check=True, capture_output=True, timeout=600)
    classes = json.loads(out.read_text())["default"]["classes"]
    total = {key: sum(c.get(key, 0) for c in classes.values()) for key in ("bugs", "found", "lookalikes", "false positives")}

    def row(name, c):
        return (f"| {name} | {c['bugs']} | {c['found']} ({c['found'] / c['bugs']:.0%}) | {c['lookalikes']} "
                f"| {c.get('false positives', 0)} |")

    corpus = sections(BENCHMARKS)["corpus: recall on programs modelled on real bug reports"]
    assert table_rows(corpus, "| class |") == [row(name, c) for name, c in classes.items()] + [row("all", total)]
    false = total["false positives"]
    figure = (f"{total['found']} of {total['bugs']} ({total['found'] / total['bugs']:.0%}), "
              f"{'no false positive' if not false else f'{false} false positives'} on {total['lookalikes']} look-alikes")
    assert f"| bugs found in the bug corpus | {figure} | corpus |" in table_rows(README, "<!-- figures:start")


# ---------------------------------------------------------------- links
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def test_links_resolve_and_stay_inside_what_the_vscode_package_carries():
    """The .vsix carries the README with docs/**/*.md and docs/*.png (.vscodeignore): a link
    anywhere else would break inside VS Code."""
    for target in LINK.findall(README):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        path, _, anchor = target.partition("#")
        assert path.startswith("docs/") and (ROOT / path).is_file(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(encoding="utf-8"), re.M)
            assert anchor in {re.sub(r"[^\w -]", "", h).strip().lower().replace(" ", "-") for h in headings}, target
