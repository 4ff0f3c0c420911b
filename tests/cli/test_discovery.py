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
    assert run.stdout == "".join(f"{mine.line(p)}\n" for p in CHECKED) + "Found 4 findings (4 fixable with --fix).\n"
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
