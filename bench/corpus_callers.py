#!/usr/bin/env python
"""The bug corpus with each program's callers in another file: what project-wide analysis adds.

    .venv/bin/python bench/corpus_callers.py [--verbose]

bench/corpus.py checks each program alone, `observe()` stripped: the labelled code in library
shape, as an editor sees it with its callers elsewhere. Here the callers are put elsewhere for real:
each program becomes a two-file project, `prog.py` (the program, `observe()` stripped, lines kept)
and `run.py` (the program's imports, everything `prog.py` defines imported from it, then `observe()` as
written), checked
with `gradguard check` (project-wide analysis, default settings, no cache). A bug counts as found
on its labelled line of `prog.py`, as in bench/corpus.py; findings in `run.py` (the harness) do
not count. Prints the same table per class, and, with --verbose, each program found only one way.
Exit status 0.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from corpus import oracle  # noqa: E402

from gradguard.engine import analyze  # noqa: E402

SEVERE = ("error", "warning")


def caller_file(source: str) -> str:
    """`run.py`: the program's imports, every name it defines imported from `prog`, its `observe()`."""
    tree = ast.parse(source)
    names, imports, observe = [], [], None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "observe":
            observe = ast.get_source_segment(source, node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.get_source_segment(source, node))  # the program's own imports, as written
    if names:
        imports.append(f"from prog import {', '.join(dict.fromkeys(names))}")
    return "\n".join(imports) + f"\n\n\n{observe or ''}\n"


def check(program) -> tuple[list, list]:
    """(findings in prog.py with callers in run.py, findings of prog.py alone), errors and warnings."""
    with tempfile.TemporaryDirectory() as root:
        Path(root, "pyproject.toml").write_text("", encoding="utf-8")
        Path(root, "prog.py").write_text(oracle.stripped(program.source), encoding="utf-8")
        Path(root, "run.py").write_text(caller_file(program.source), encoding="utf-8")
        command = [sys.executable, "-m", "gradguard", "check", "--no-cache", "--jobs", "1", "--output-format", "json", "."]
        out = subprocess.run(command, cwd=root, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
        data = json.loads(out.stdout or "[]")
    project = [f for f in data if os.path.basename(f["path"]) == "prog.py"
               and f["severity"] in SEVERE]
    alone = [f for f in analyze(oracle.stripped(program.source)).findings if f.severity.value in SEVERE]
    return project, alone


def _line(f) -> int:
    return f["line"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="list the programs found only one way")
    parser.add_argument("--only", default="", help="only the programs whose name (GGnnn/name) contains this")
    args = parser.parse_args()
    programs = [oracle.load(p) for p in sorted((HERE.parent / "tests" / "corpus").glob("GG*/*.py"))]
    programs = [p for p in programs if args.only in p.name]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(check, programs))
    classes: dict = collections.defaultdict(collections.Counter)
    notes = []
    for p, (project, alone) in zip(programs, results):
        c = classes[p.cls]
        if p.lookalike:
            c["looks"] += 1
            c["fp"] += bool(project)
            if project:
                notes.append(f"  false positive {p.name}: " + ", ".join(f"{f['code']}:{_line(f)}" for f in project))
            continue
        c["bugs"] += 1
        found = any(f["code"] in p.codes and _line(f) == p.line for f in project)
        before = any(f.code in p.codes and f.range.start.line == p.line for f in alone)
        c["found"] += found
        c["alone"] += before
        if found != before:
            notes.append(f"  {'found only with its callers' if found else 'lost with its callers'}: {p.name}")
    print("== the corpus with each program's callers in another file (project-wide, default settings)")
    print(f"{'class':<8} {'bugs':>5} {'alone':>6} {'callers':>8} {'look-alikes':>12} {'false +':>8}")
    total = collections.Counter()
    for cls in sorted(classes):
        c = classes[cls]
        total.update(c)
        print(f"{cls:<8} {c['bugs']:>5} {c['alone']:>6} {c['found']:>8} {c['looks']:>12} {c['fp']:>8}")
    print(f"{'all':<8} {total['bugs']:>5} {total['alone']:>6} {total['found']:>8} {total['looks']:>12} {total['fp']:>8}")
    if args.verbose:
        print("\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
