"""The results cache through the real CLI: where it lives, when it is used, when it
is not (changed content, other settings, --no-cache), and that --fix never writes
from it."""

from __future__ import annotations

import json
from pathlib import Path

from gradguard import __version__
from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations as GG101

BAD = GG101.INVALID[1]


def cache_file(root: Path) -> Path:
    (found,) = [p for p in (root / ".gradguard_cache").iterdir() if p.suffix == ".json"]
    return found


def poison(root: Path, edit) -> None:
    """Change what the cache holds for every file (to see whether a run reads it)."""
    path = cache_file(root)
    entries = json.loads(path.read_text())
    for entry in entries.values():
        edit(entry[2])
    path.write_text(json.dumps(entries))


def reword(payload) -> None:
    for finding in payload[0]:
        finding[3] = "from the cache"


def test_first_run_writes_the_cache_and_the_second_prints_the_same(gradguard, write, tmp_path, mine):
    write("a.py", mine.source)
    first = gradguard("check", "a.py")
    ignore = tmp_path / ".gradguard_cache" / ".gitignore"
    assert ignore.read_text() == "# Created by gradguard: the cache is not for version control.\n*\n"
    assert cache_file(tmp_path).name.startswith(f"{__version__}-")
    second = gradguard("check", "a.py")
    assert (second.stdout, second.returncode) == (first.stdout, first.returncode) == (
        f"{mine.line('a.py')}\nFound 1 finding (1 fixable with --fix).\n",
        1,
    )


def test_an_unchanged_file_comes_from_the_cache(gradguard, write, tmp_path, mine):
    write("a.py", mine.source)
    gradguard("check", "a.py")
    poison(tmp_path, reword)
    assert gradguard("check", "a.py").stdout.splitlines()[0] == "a.py:7:17: GG101 from the cache"
    assert gradguard("check", "--no-cache", "a.py").stdout.splitlines()[0] == mine.line("a.py")


def test_changed_content_or_settings_are_analysed_again(gradguard, write, tmp_path, mine):
    path = write("a.py", mine.source)
    gradguard("check", "a.py")
    poison(tmp_path, reword)
    assert gradguard("check", "--copy-order", "detach-clone", "a.py").stdout.splitlines()[0] == mine.line("a.py")
    gradguard("check", "a.py")
    poison(tmp_path, reword)
    path.write_text(mine.source + "# edited\n")
    assert gradguard("check", "a.py").stdout.splitlines()[0] == mine.line("a.py")


def test_a_config_change_is_a_settings_change(gradguard, write, tmp_path, mine):
    write("a.py", mine.source)
    gradguard("check", "a.py")
    write("gradguard.toml", 'select = ["GG4"]\n')
    assert gradguard("check", "a.py").stdout == "All checks passed!\n"


def test_fix_works_from_the_file_never_from_the_cache(gradguard, write, tmp_path, mine):
    path = write("a.py", mine.source)
    gradguard("check", "a.py")

    def bogus_fix(payload) -> None:
        for finding in payload[0]:
            for fix in finding[6]:
                for edit in fix[2]:
                    edit[1] = "POISON"

    poison(tmp_path, bogus_fix)
    run = gradguard("check", "--fix", "a.py")
    assert (run.stdout, run.returncode) == ("Fixed 1 finding.\n", 0)
    assert path.read_text() == mine.fixed
    assert gradguard("check", "a.py").stdout == "All checks passed!\n"  # the fixed file, cached


def test_no_cache_neither_reads_nor_writes(gradguard, write, tmp_path, mine):
    write("a.py", mine.source)
    gradguard("check", "--no-cache", "a.py")
    assert not (tmp_path / ".gradguard_cache").exists()


def test_the_cache_lives_where_the_configuration_is(gradguard, write, tmp_path, mine):
    write("proj/pyproject.toml", "[tool.gradguard]\n")
    write("proj/src/a.py", mine.source)
    gradguard("check", "proj")
    assert (tmp_path / "proj" / ".gradguard_cache" / ".gitignore").exists()
    assert not (tmp_path / ".gradguard_cache").exists()


def test_syntax_errors_are_cached_too(gradguard, write, tmp_path):
    write("broken.py", "import torch\ndef oops(:\n")
    first = gradguard("check", "broken.py")
    second = gradguard("check", "broken.py")
    assert (second.stderr, second.returncode) == (first.stderr, first.returncode)
    assert second.stderr == "broken.py:2:10: error: SyntaxError: invalid syntax\n"
    assert len(json.loads(cache_file(tmp_path).read_text())) == 1


def test_notebooks_are_cached_with_their_cells(gradguard, write, tmp_path):
    cell = "import torch\nnet = torch.nn.Linear(2, 1)\nkept = []\nfor x in [torch.randn(3, 2)]:\n    kept.append(net(x))\n"
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# hi"},
            {"cell_type": "code", "id": "c", "metadata": {}, "execution_count": None, "outputs": [], "source": cell},
        ],
    }
    write("nb.ipynb", json.dumps(notebook))
    first = gradguard("check", "--output-format", "concise", "nb.ipynb")
    second = gradguard("check", "--output-format", "concise", "nb.ipynb")
    assert second.stdout == first.stdout
    assert second.stdout.startswith("nb.ipynb:cell 2:5:17: GG101 ")
