#!/usr/bin/env python
"""Recall and false positives on the bug corpus (tests/corpus), as an editor sees each program.

    .venv/bin/python bench/corpus.py              # default settings, then --types, then --strict
    .venv/bin/python bench/corpus.py --verbose    # also list every miss and false positive
    .venv/bin/python bench/corpus.py --json out.json
    .venv/bin/python bench/corpus.py --modes project --verbose   # the program and its caller, two modules

Each program is checked with its `observe()` stripped (oracle.stripped: the labelled code in
library shape, its callers gone). Mode `project` puts the caller back, in another module: each
program becomes a two-module package, `library.py` (the program, `observe()` stripped, lines
kept) and `caller.py` (`observe()` as written, the program's imports it reads, and the library's
names it reads, imported from `library`), checked as `gradguard check` checks a package
(project-wide analysis, default settings, in this process). A bug counts as found on its labelled
line of `library.py`; a look-alike counts a false positive for any error or warning in either
module (the caller is part of the package: what `gradguard check` would show its user). (It
replaces bench/corpus_callers.py, whose caller kept every import of the program.) A bug is found when an error or warning of one of its
label's codes sits on the labelled line; a look-alike counts a false positive for any error
or warning. Info findings are opt-in and never count. Recall is per class (the directory:
the rule a program is about) and overall; the labels themselves are proved by running every
program (tests/test_corpus.py), not here. Exit status 0.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from corpus import oracle  # noqa: E402

from gradguard.engine import analyze  # noqa: E402
from gradguard.settings import Settings  # noqa: E402

MODES = {"default": Settings(), "types": Settings(types=True), "strict": Settings(strict=True),
         "project": Settings()}
SEVERE = ("error", "warning")
LIBRARY, CALLER = "library", "caller"  # the two modules of mode `project`'s package


def caller_module(source: str) -> str:
    """`caller.py` of mode `project`: the program's `observe()` as written, after the imports of the
    program it reads and `from library import ...` of the library's top-level names it reads. ""
    when the program has no `observe()` (nothing calls its code)."""
    tree = ast.parse(source)
    observe = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "observe"), None)
    if observe is None:
        return ""
    read = {n.id for n in ast.walk(observe) if isinstance(n, ast.Name)}
    imports, names = [], []
    for node in tree.body:
        if node is observe:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            kept = [a for a in node.names if (a.asname or a.name).split(".")[0] in read]
            if kept:  # the program's own import statement, with only the names observe() reads
                imports.append(ast.unparse(ast.fix_missing_locations(type(node)(**{**vars(node), "names": kept}))))
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            bound = []
        names += [n for n in bound if n in read and n not in names]
    if names:
        imports.append(f"from {LIBRARY} import {', '.join(names)}")
    return "\n".join(imports) + "\n\n\n" + ast.get_source_segment(source, observe) + "\n"


def package_findings(program, settings) -> dict:
    """Mode `project`: {LIBRARY: findings, CALLER: findings} of the program's two-module package, as
    `gradguard check` gives them (cli.run_project: project-wide analysis; bench/variants.py's
    module transformations are checked the same way)."""
    from gradguard import cli
    from gradguard.config import Resolver

    modules = {LIBRARY: oracle.stripped(program.source), CALLER: caller_module(program.source)}
    with tempfile.TemporaryDirectory(prefix="gg-corpus-") as where:
        root = Path(where)
        (root / "pyproject.toml").write_text('[project]\nname = "corpus-program"\n')
        files = {}
        for name, text in modules.items():
            if text:
                files[name] = root / f"{name}.py"
                files[name].write_text(text, encoding="utf-8")
        resolver = Resolver(cwd=where)
        tasks = [(str(p), resolver.for_path(str(p)).settings_for(str(p)), None) for p in files.values()]
        results = {r.path: r.findings for r in cli.run_project(tasks, cli.Job(settings=settings), 1, resolver)}
    return {name: results[str(path)] for name, path in files.items()}


def findings_of(program, settings) -> list:
    source = oracle.stripped(program.source)
    if not settings.types:
        return analyze(source, settings).findings
    # as `gradguard check --types` sees the file: jedi reads it from where it lies (the interpreter
    # running this, so the project's torch, or GradGuard's stubs where there is none)
    from gradguard.cli import _analyse

    return _analyse(source, settings, str(program.path)).findings


def judge(program, settings, project: bool = False) -> tuple[bool, list]:
    """(found, the errors and warnings) of one program. `project`: mode `project` - the findings
    that count are the library module's for a bug, both modules' for a look-alike (the caller's
    named `caller.py:LINE`)."""
    if project:
        found = package_findings(program, settings)
        mine = [f for f in found[LIBRARY] if f.severity.value in SEVERE]
        hit = any(f.code in program.codes and f.range.start.line == program.line for f in mine)
        if program.lookalike:
            mine += [_InCaller(f) for f in found.get(CALLER, ()) if f.severity.value in SEVERE]
        return hit, mine
    findings = [f for f in findings_of(program, settings) if f.severity.value in SEVERE]
    found = any(f.code in program.codes and f.range.start.line == program.line for f in findings)
    return found, findings


class _InCaller:
    """A finding of mode `project`'s caller module, as the listings name it (`GG101:caller.py:12`)."""

    def __init__(self, finding):
        self.code = f"{finding.code}:{CALLER}.py"
        self.range = finding.range
        self.severity = finding.severity


def measure(programs, settings, project: bool = False) -> dict:
    classes: dict = collections.defaultdict(lambda: collections.Counter())
    misses, false_positives = [], []
    for p in programs:
        found, findings = judge(p, settings, project)
        c = classes[p.cls]
        if p.lookalike:
            c["lookalikes"] += 1
            if findings:
                c["false positives"] += 1
                false_positives.append((p.name, [f"{f.code}:{f.range.start.line}" for f in findings]))
        else:
            c["bugs"] += 1
            c["found"] += found
            if not found:
                misses.append((p.name, f"{'|'.join(p.codes)}:{p.line}", [f"{f.code}:{f.range.start.line}" for f in findings]))
    return {"classes": {k: dict(v) for k, v in sorted(classes.items())}, "misses": misses, "false_positives": false_positives}


def table(result: dict) -> list[str]:
    lines = [f"{'class':7} {'bugs':>5} {'found':>6} {'recall':>7} {'look-alikes':>12} {'false +':>8}"]
    total = collections.Counter()
    for cls, c in result["classes"].items():
        total.update(c)
        recall = f"{c.get('found', 0) / c['bugs']:.0%}" if c.get("bugs") else "-"
        lines.append(f"{cls:7} {c.get('bugs', 0):>5} {c.get('found', 0):>6} {recall:>7} {c.get('lookalikes', 0):>12} "
                     f"{c.get('false positives', 0):>8}")
    recall = f"{total['found'] / total['bugs']:.0%}" if total["bugs"] else "-"
    lines.append(f"{'all':7} {total['bugs']:>5} {total['found']:>6} {recall:>7} {total['lookalikes']:>12} "
                 f"{total['false positives']:>8}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=oracle.HERE, help="a corpus directory (GGnnn/*.py)")
    parser.add_argument("--verbose", action="store_true", help="list every miss and false positive")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--modes", default="default,types,strict",
                        help="which of default,types,strict,project (default: the first three)")
    args = parser.parse_args(argv)
    programs = oracle.programs(args.root)
    results = {}
    for mode in args.modes.split(","):
        settings = MODES[mode]
        result = results[mode] = measure(programs, settings, project=mode == "project")
        print(f"== {mode} ({len(programs)} programs)")
        print("\n".join(table(result)))
        if args.verbose:
            for name, label, got in result["misses"]:
                print(f"  missed {name} ({label}); reported: {', '.join(got) or 'nothing'}")
            for name, got in result["false_positives"]:
                print(f"  false positive {name}: {', '.join(got)}")
        print()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
