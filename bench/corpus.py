#!/usr/bin/env python
"""Recall and false positives on the bug corpus (tests/corpus), as an editor sees each program.

    .venv/bin/python bench/corpus.py              # default settings, then --types, then --strict
    .venv/bin/python bench/corpus.py --verbose    # also list every miss and false positive
    .venv/bin/python bench/corpus.py --json out.json

Each program is checked with its `observe()` stripped (oracle.stripped: the labelled code in
library shape, its callers gone). A bug is found when an error or warning of one of its
label's codes sits on the labelled line; a look-alike counts a false positive for any error
or warning. Info findings are opt-in and never count. Recall is per class (the directory:
the rule a program is about) and overall; the labels themselves are proved by running every
program (tests/test_corpus.py), not here. Exit status 0.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from corpus import oracle  # noqa: E402

from gradguard.engine import analyze  # noqa: E402
from gradguard.settings import Settings  # noqa: E402

MODES = {"default": Settings(), "types": Settings(types=True), "strict": Settings(strict=True)}
SEVERE = ("error", "warning")


def findings_of(program, settings) -> list:
    source = oracle.stripped(program.source)
    if not settings.types:
        return analyze(source, settings).findings
    # as `gradguard check --types` sees the file: jedi reads it from where it lies (the interpreter
    # running this, so the project's torch, or GradGuard's stubs where there is none)
    from gradguard.cli import _analyse

    return _analyse(source, settings, str(program.path)).findings


def judge(program, settings) -> tuple[bool, list]:
    """(found, the errors and warnings) of one program."""
    findings = [f for f in findings_of(program, settings) if f.severity.value in SEVERE]
    found = any(f.code in program.codes and f.range.start.line == program.line for f in findings)
    return found, findings


def measure(programs, settings) -> dict:
    classes: dict = collections.defaultdict(lambda: collections.Counter())
    misses, false_positives = [], []
    for p in programs:
        found, findings = judge(p, settings)
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
    parser.add_argument("--modes", default=",".join(MODES), help="which of default,types,strict (default: all)")
    args = parser.parse_args(argv)
    programs = oracle.programs(args.root)
    results = {}
    for mode in args.modes.split(","):
        settings = MODES[mode]
        result = results[mode] = measure(programs, settings)
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
