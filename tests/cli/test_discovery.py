"""Which files `gradguard check DIR` looks at."""

from __future__ import annotations

import os

from gradguard.discovery import discover

SKIPPED = [
    ".venv/lib/e.py",
    "venv/f.py",
    "myenv/g.py",  # has pyvenv.cfg
    "condaenv/g.py",  # has conda-meta/
    "node_modules/pkg/h.py",
    ".hidden/i.py",
    ".git/hooks/j.py",
    "__pycache__/k.py",
    "build/lib/l.py",
    "dist/m.py",
    "notes.txt",
    "script",
]
CHECKED = ["a.py", "env/d.py", "pkg/b.py", "pkg/sub/c.py"]  # `env/` without pyvenv.cfg is a package


def make_tree(write, source: str) -> None:
    for rel in SKIPPED + CHECKED:
        write(rel, source)
    write("myenv/pyvenv.cfg", "home = /usr/bin\n")
    write("condaenv/conda-meta/history", "")


def test_walk_skips_environments_and_hidden_dirs(gradguard, write, mine):
    make_tree(write, mine.source)
    run = gradguard("check", ".")
    assert run.stdout == "".join(f"{mine.line(p)}\n" for p in CHECKED) + "Found 4 findings (4 fixable with --fix). 4 files checked.\n"
    assert run.returncode == 1


def test_named_files_are_always_checked(gradguard, write, mine):
    make_tree(write, mine.source)
    run = gradguard("check", ".venv/lib/e.py", "notes.txt")
    assert run.stdout.splitlines()[:2] == [mine.line(".venv/lib/e.py"), mine.line("notes.txt")]


def test_a_named_skipped_directory_is_walked(gradguard, write, mine):
    make_tree(write, mine.source)
    assert gradguard("check", "build").stdout.splitlines()[0] == mine.line("build/lib/l.py")


def test_discover_sorts_and_deduplicates(tmp_path, monkeypatch):
    for rel in ["b.py", "a/z.py", "a.py", "a/b/c.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    monkeypatch.chdir(tmp_path)
    found = discover(["b.py", ".", "./a.py", "a"])
    assert found.files == [os.path.normpath(p) for p in ["a/b/c.py", "a/z.py", "a.py", "b.py"]]
    assert found.errors == []


def test_discover_reports_missing_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = discover(["nope", "nope.py"])
    assert found.files == []
    assert found.errors == [("nope", "No such file or directory"), ("nope.py", "No such file or directory")]


SCRIPT = "#!/usr/bin/env python3\n"  # an entry point without an extension, as `train` and `test` often are


def test_an_extensionless_python_script_is_found_and_checked(gradguard, write, mine):
    write("train", SCRIPT + mine.source)  # the finding moves one line down
    write("bin/evaluate", "#!/usr/bin/python3.11 -u\n" + mine.source)
    write("run.sh", SCRIPT + mine.source)  # an extension that is not Python's: not a script
    write("launch", "#!/bin/sh\nexec python3 train \"$@\"\n")
    write("notes", mine.source)  # Python, but no shebang: nothing says so
    run = gradguard("check", ".")
    shifted = mine.line("X").replace(":7:17:", ":8:17:").replace("on line 6", "on line 7")
    assert run.stdout == (
        shifted.replace("X", os.path.join("bin", "evaluate")) + "\n"
        + shifted.replace("X", "train") + "\n"
        + "Found 2 findings (2 fixable with --fix). 2 files checked.\n"
    )
    assert (run.stderr, run.returncode) == ("", 1)


def test_verbose_says_what_the_walk_passed_over_and_why(gradguard, write, mine):
    make_tree(write, mine.source)
    write("launch", "#!/bin/sh\n")
    write("gradguard.toml", 'extend-exclude = ["pkg/sub"]\n')
    run = gradguard("check", "-v", ".")
    assert run.stderr == (
        '.git/: skipped: matches ".*" in exclude (the default)\n'
        '.hidden/: skipped: matches ".*" in exclude (the default)\n'
        '.venv/: skipped: matches ".*" in exclude (the default)\n'
        '__pycache__/: skipped: matches "__pycache__" in exclude (the default)\n'
        'build/: skipped: matches "build" in exclude (the default)\n'
        "condaenv/: skipped: a virtual environment\n"
        'dist/: skipped: matches "dist" in exclude (the default)\n'
        "myenv/: skipped: a virtual environment\n"
        'node_modules/: skipped: matches "node_modules" in exclude (the default)\n'
        'venv/: skipped: matches "venv" in exclude (the default)\n'
        "launch: skipped: no extension and no Python shebang\n"
        "script: skipped: no extension and no Python shebang\n"
        'pkg/sub/: skipped: matches "pkg/sub" in extend-exclude (gradguard.toml)\n'
    )
    assert run.stdout.endswith("Found 3 findings (3 fixable with --fix). 3 files checked.\n")
    assert gradguard("check", ".").stderr == ""  # without -v, nothing


def test_include_and_extend_include(gradguard, write, mine):
    write("a.py", mine.source)
    write("jobs/step.pyw", mine.source)
    write("jobs/run.txt", mine.source)
    assert gradguard("check", ".").stdout.endswith(" 1 file checked.\n")
    assert gradguard("check", "--extend-include", "*.pyw,jobs/*.txt", ".").stdout.endswith(
        "Found 3 findings (3 fixable with --fix). 3 files checked.\n"
    )
    write("pyproject.toml", '[tool.gradguard]\nextend-include = ["*.pyw"]\n')
    assert gradguard("check", ".").stdout.endswith(" 2 files checked.\n")
    write("pyproject.toml", '[tool.gradguard]\ninclude = ["jobs/*"]\n')  # replaces *.py and *.ipynb
    run = gradguard("check", "-v", ".")
    assert run.stdout.endswith(" 2 files checked.\n")
    assert run.stderr == (
        '.gradguard_cache/: skipped: matches ".*" in exclude (the default)\n'  # the earlier runs' cache
        "a.py: skipped: not matched by include\n"
    )


def test_force_exclude_keeps_the_directory_named(gradguard, write, mine):
    write("a.py", mine.source)
    write("build/b.py", mine.source)
    run = gradguard("check", "--no-cache", "--force-exclude", "-v", ".", "build/b.py")
    assert run.stdout.endswith(" 1 file checked.\n")  # `.` is not a hidden directory
    assert run.stderr == (
        'build/: skipped: matches "build" in exclude (the default)\n'
        'build/b.py: skipped: matches "build" in exclude (the default), --force-exclude\n'
    )
