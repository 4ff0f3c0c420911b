"""The results cache through the real CLI: where it lives, when it is used, when it
is not (changed content, other settings, --no-cache), and that --fix never writes
from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard import __version__
from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations as GG101

BAD = GG101.INVALID[1]
IGNORE = "# Created by gradguard: the cache is not for version control.\n*\n"


def cache_file(root: Path, directory: str = ".gradguard_cache") -> Path:
    (found,) = [p for p in (root / directory).iterdir() if p.suffix == ".json"]
    return found


def poison(root: Path, edit, directory: str = ".gradguard_cache") -> None:
    """Change what the cache holds for every file (to see whether a run reads it)."""
    path = cache_file(root, directory)
    entries = json.loads(path.read_text())
    for entry in entries.values():
        for _, key, payload in entry:
            if not key.startswith("neighbours:"):  # (a project run's classes of other modules)
                edit(payload)
    path.write_text(json.dumps(entries))


def reword(payload) -> None:
    for finding in payload[0]:
        finding[3] = "from the cache"


def test_first_run_writes_the_cache_and_the_second_prints_the_same(gradguard, write, tmp_path, mine):
    write("a.py", mine.source)
    first = gradguard("check", "a.py")
    assert (tmp_path / ".gradguard_cache" / ".gitignore").read_text() == IGNORE
    assert cache_file(tmp_path).name.startswith(f"{__version__}-")
    second = gradguard("check", "a.py")
    assert (second.stdout, second.returncode) == (first.stdout, first.returncode) == (
        f"{mine.line('a.py')}\nFound 1 finding (1 fixable with --fix). 1 file checked.\n",
        1,
    )


def test_an_unchanged_file_comes_from_the_cache(gradguard, write, tmp_path, mine):
    write("a.py", mine.source)
    gradguard("check", "a.py")
    poison(tmp_path, reword)
    assert gradguard("check", "a.py").stdout.splitlines()[0] == "a.py:7:17: error: GG101 from the cache"
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
    assert gradguard("check", "a.py").stdout == "All checks passed! 1 file checked.\n"


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
    assert (run.stdout, run.returncode) == ("Fixed 1 finding. 1 file checked.\n", 0)
    assert path.read_text() == mine.fixed
    assert gradguard("check", "a.py").stdout == "All checks passed! 1 file checked.\n"  # the fixed file, cached


def test_no_cache_neither_reads_nor_writes(gradguard, write, tmp_path, mine):
    write("a.py", mine.source)
    gradguard("check", "--no-cache", "a.py")
    assert not (tmp_path / ".gradguard_cache").exists()


@pytest.mark.parametrize("marker", ["pyproject.toml", ".git/HEAD"])
def test_the_cache_lives_in_the_project_root_wherever_the_command_runs(gradguard, write, tmp_path, mine, marker):
    """The nearest directory above the first path holding a pyproject.toml (with or without
    [tool.gradguard]) or a .git; not the current directory, nor a directory below the root
    that only holds a gradguard.toml."""
    write(f"proj/{marker}", "[project]\nname = 'p'\n" if marker == "pyproject.toml" else "")
    write("proj/src/deep/a.py", mine.source)
    write("proj/src/gradguard.toml", "strict = false\n")
    write("elsewhere/.keep", "")
    gradguard("check", "proj/src/deep/a.py")
    assert (tmp_path / "proj" / ".gradguard_cache" / ".gitignore").read_text() == IGNORE
    assert cache_file(tmp_path / "proj").name.startswith(f"{__version__}-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "proj"]  # nothing in the current directory
    poison(tmp_path / "proj", reword)  # the same cache, from another directory and path
    run = subprocess.run([sys.executable, "-m", "gradguard", "check", "../proj/src"], cwd=tmp_path / "elsewhere",
                         capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines()[0] == "../proj/src/deep/a.py:7:17: error: GG101 from the cache"
    assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == [".keep"]


def test_without_a_project_the_cache_is_in_the_current_directory(gradguard, write, tmp_path, mine):
    write("loose/a.py", mine.source)
    gradguard("check", "loose/a.py")
    assert (tmp_path / ".gradguard_cache" / ".gitignore").read_text() == IGNORE
    assert not (tmp_path / "loose" / ".gradguard_cache").exists()


def test_cache_dir_and_its_environment_variable_move_it(gradguard, write, tmp_path, mine):
    write("pyproject.toml", "")
    write("a.py", mine.source)
    gradguard("check", "--cache-dir", "build/gg", "a.py")
    assert (tmp_path / "build" / "gg" / ".gitignore").read_text() == IGNORE
    assert cache_file(tmp_path / "build" / "gg", directory=".").name.startswith(f"{__version__}-")
    gradguard("check", "a.py", env={"GRADGUARD_CACHE_DIR": str(tmp_path / "shared")})
    assert (tmp_path / "shared" / ".gitignore").read_text() == IGNORE
    assert not (tmp_path / ".gradguard_cache").exists()
    poison(tmp_path / "shared", reword, directory=".")
    assert gradguard("check", "a.py", env={"GRADGUARD_CACHE_DIR": "shared"}).stdout.splitlines()[0] == (
        "a.py:7:17: error: GG101 from the cache"
    )
    gradguard("check", "--no-cache", "--cache-dir", "other", "a.py")
    assert not (tmp_path / "other").exists()


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
    assert second.stdout.startswith("nb.ipynb:cell 2:5:17: error: GG101 ")
