#!/usr/bin/env python
"""Checker throughput against the floor of merely parsing, on real PyTorch code.

    .venv/bin/python bench/throughput.py                       # full pinned corpus
    .venv/bin/python bench/throughput.py --packages timm --limit-files 200
    .venv/bin/python bench/throughput.py --corpus path/to/tree --json out.json --findings out.txt

In one process, over the same set of files:
  parse floor  time.process_time() around libcst.parse_module(source), per file
  checker      time.process_time() around gradguard.engine.analyze(source), per file
Lines are the newline count of the measured files. Files that libcst cannot
parse are left out of both (and counted). Each measurement runs --repeat times
(default 2), every round in a freshly shuffled file order, parse and checker
rounds interleaved; the round with the lowest total CPU time is kept for each.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import collections
import gc
import importlib.metadata
import json
import platform
import random
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import libcst

import wheels as corpus_mod
import gradguard
from gradguard.engine import analyze, mentions_torch
from gradguard.engine.suppress import skips_file

TARGET = 0.5


@dataclass
class File:
    rel: str  # relative to the corpus root, '/'-separated
    group: str  # the package directory it came from
    source: str
    lines: int
    torch: bool
    parse_times: list[float] = field(default_factory=list)  # per round, CPU seconds
    check_times: list[float] = field(default_factory=list)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- corpus -------------------------------------------------------------------------------------


def load(root: Path, groups: list[Path], limit: int | None, seed: int) -> tuple[list[File], list[str]]:
    paths = [p for g in groups for p in corpus_mod.python_files(g)]
    if limit is not None and limit < len(paths):
        paths = sorted(random.Random(seed).sample(paths, limit))
    files, undecodable = [], []
    for p in paths:
        rel = p.relative_to(root).as_posix()
        try:
            source = p.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError:
            undecodable.append(rel)
            continue
        group = rel.split("/", 1)[0] if "/" in rel else "."
        files.append(File(rel, group, source, source.count("\n"), mentions_torch(source)))
    return files, undecodable


# --- measurement --------------------------------------------------------------------------------


def parse_round(files: list[File], order: list[int], failures: dict[str, str] | None, label: str) -> None:
    clock = time.process_time
    start = time.monotonic()
    for n, i in enumerate(order, 1):
        f = files[i]
        t0 = clock()
        try:
            libcst.parse_module(f.source)
        except Exception as e:  # noqa: BLE001 - ParserSyntaxError, RecursionError, odd input
            if failures is not None:
                failures[f.rel] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            f.parse_times.append(float("nan"))
            continue
        f.parse_times.append(clock() - t0)
        if n % 500 == 0:
            log(f"  {label}: {n}/{len(order)} files, {time.monotonic() - start:.0f}s wall")


@dataclass
class Outcome:
    findings: list = field(default_factory=list)
    skipped: bool = False
    error: str | None = None  # analyze() reported a parse error on a file the floor parsed
    internal: list[str] = field(default_factory=list)  # a rule crashed (analyze caught it)
    exception: str | None = None  # analyze() itself raised


def check_round(files: list[File], order: list[int], outcomes: dict[int, Outcome] | None, label: str) -> None:
    clock = time.process_time
    start = time.monotonic()
    for n, i in enumerate(order, 1):
        f = files[i]
        t0 = clock()
        try:
            a = analyze(f.source)
        except Exception as e:  # noqa: BLE001 - an engine bug; count it, show it at the end
            dt = clock() - t0
            f.check_times.append(dt)
            if outcomes is not None:
                tb = traceback.extract_tb(e.__traceback__)
                frames = " <- ".join(f"{Path(fr.filename).name}:{fr.lineno} {fr.name}" for fr in reversed(tb[-4:]))
                outcomes[i] = Outcome(exception=f"{type(e).__name__}: {e}\n      innermost first: {frames}")
            continue
        f.check_times.append(clock() - t0)
        if outcomes is not None:
            outcomes[i] = Outcome(
                findings=list(a.findings),
                skipped=a.skipped,
                error=f"{a.error.message} (line {a.error.line})" if a.error else None,
                internal=list(a.internal_errors),
            )
        del a
        if n % 500 == 0:
            log(f"  {label}: {n}/{len(order)} files, {time.monotonic() - start:.0f}s wall")


def best_round(files: list[File], attr: str, rounds: int) -> tuple[int, list[float]]:
    totals = [sum(getattr(f, attr)[r] for f in files) for r in range(rounds)]
    best = min(range(rounds), key=totals.__getitem__)
    return best, totals


# --- report -------------------------------------------------------------------------------------


def rate(lines: int, seconds: float) -> float | None:
    return lines / seconds if seconds > 0 else None  # None: an empty subset


def row(name: str, subset: list[File], pr: int, cr: int) -> dict:
    lines = sum(f.lines for f in subset)
    p = sum(f.parse_times[pr] for f in subset)
    c = sum(f.check_times[cr] for f in subset)
    return {
        "name": name,
        "files": len(subset),
        "lines": lines,
        "parse_cpu_s": p,
        "check_cpu_s": c,
        "parse_lines_per_cpu_s": rate(lines, p),
        "check_lines_per_cpu_s": rate(lines, c),
        "ratio": (p / c) if c > 0 and p > 0 else None,
    }


def fmt_row(r: dict) -> str:
    def num(x, spec: str, width: int) -> str:
        return f"{'-':>{width}}" if x is None else f"{x:>{width}{spec}}"

    return (
        f"{r['name']:<34}{r['files']:>7}{r['lines']:>11,}"
        f"{r['parse_cpu_s']:>9.1f}{r['check_cpu_s']:>9.1f}"
        f"{num(r['parse_lines_per_cpu_s'], ',.0f', 12)}{num(r['check_lines_per_cpu_s'], ',.0f', 12)}"
        f"{num(r['ratio'], '.2f', 9)}"
    )


HEADER = (
    f"{'':<34}{'files':>7}{'lines':>11}{'parse':>9}{'checker':>9}{'parse floor':>12}{'checker':>12}{'checker/':>9}\n"
    f"{'':<34}{'':>7}{'':>11}{'CPU-s':>9}{'CPU-s':>9}{'lines/CPU-s':>12}{'lines/CPU-s':>12}{'floor':>9}"
)


def engine_revision() -> str:
    where = Path(gradguard.__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=where, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "."], cwd=where, capture_output=True, text=True)
    except OSError:
        return "unknown"
    if rev.returncode != 0:
        return "unknown"
    return rev.stdout.strip() + (" (+ uncommitted changes)" if dirty.stdout.strip() else "")


def sample_findings(flat: list[tuple[str, object]], n: int, seed: int) -> list[tuple[str, object]]:
    """Up to n findings, round-robin over rule codes, each code's picks random but reproducible."""
    by_code: dict[str, list] = collections.defaultdict(list)
    for item in flat:
        by_code[item[1].code].append(item)
    rng = random.Random(seed)
    pools = {c: rng.sample(v, len(v)) for c, v in sorted(by_code.items())}
    out = []
    while len(out) < n and any(pools.values()):
        for c in list(pools):
            if pools[c] and len(out) < n:
                out.append(pools[c].pop())
    return sorted(out, key=lambda x: (x[0], x[1].range.start))


def finding_line(rel: str, f) -> str:
    msg = " ".join(f.message.split())
    return f"{rel}:{f.range.start.line}:{f.range.start.column + 1}: {f.code} {msg}"


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packages", help=f"comma-separated subset of: {','.join(corpus_mod.PACKAGES)}")
    ap.add_argument("--limit-files", type=int, metavar="N", help="measure a reproducible random sample of N files")
    ap.add_argument("--corpus", type=Path, metavar="DIR", help="measure every .py file under DIR instead of the wheels")
    ap.add_argument("--cache", type=Path, default=corpus_mod.DEFAULT_ROOT, metavar="DIR",
                    help="where wheels are downloaded and unpacked (default bench/.corpus)")
    ap.add_argument("--repeat", type=int, default=2, metavar="R", help="rounds per measurement, best kept (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="seed for sampling and shuffling (default 0)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write the figures as JSON")
    ap.add_argument("--findings", type=Path, metavar="OUT.txt", help="write every finding as path:line:col: CODE message")
    ap.add_argument("--slowest", type=int, default=5, metavar="K", help="how many slowest files to list (default 5)")
    ap.add_argument("--sample", type=int, default=10, metavar="K", help="how many sample findings to print (default 10)")
    args = ap.parse_args(argv)
    revision = engine_revision()  # now, when the engine was imported: it may be edited during the run
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")

    if args.corpus:
        root = args.corpus.resolve()
        if not root.is_dir():
            ap.error(f"--corpus {root}: not a directory")
        groups, packages = [root], {}
        if args.packages:
            log("note: --packages is ignored with --corpus")
    else:
        root = args.cache.resolve()
        names = [n.strip() for n in args.packages.split(",") if n.strip()] if args.packages else None
        got = corpus_mod.ensure(names, root)
        if not got:
            log("no package could be fetched; nothing to measure")
            return 2
        groups = [p.directory for p in got]
        packages = {p.name: p.version for p in got}

    files, undecodable = load(root, groups, args.limit_files, args.seed)
    if not files:
        log("no .py files found")
        return 2
    log(f"{len(files)} files, {sum(f.lines for f in files):,} lines under {root}")

    # Rounds: parse, check, parse, check, ... each in a fresh shuffled order.
    failures: dict[str, str] = {}
    outcomes: dict[int, Outcome] = {}
    measured: list[int] = []
    wall0 = time.monotonic()
    for r in range(args.repeat):
        rng = random.Random(args.seed * 1000 + r + 1)
        if r == 0:
            order = list(range(len(files)))
            rng.shuffle(order)
            gc.collect()
            parse_round(files, order, failures, f"parse round {r + 1}")
            measured = [i for i in range(len(files)) if files[i].rel not in failures]
        else:
            order = measured[:]
            rng.shuffle(order)
            gc.collect()
            parse_round(files, order, None, f"parse round {r + 1}")
        order = measured[:]
        rng.shuffle(order)
        gc.collect()
        check_round(files, order, outcomes if r == 0 else None, f"checker round {r + 1}")
    wall = time.monotonic() - wall0

    ok = [files[i] for i in measured]
    pr, ptotals = best_round(ok, "parse_times", args.repeat)
    cr, ctotals = best_round(ok, "check_times", args.repeat)

    torch_files = [f for f in ok if f.torch]
    rows = [row("all measured files", ok, pr, cr)]
    rows.append(row('  mentioning "torch"', torch_files, pr, cr))
    rows.append(row('  not mentioning "torch"', [f for f in ok if not f.torch], pr, cr))
    group_rows = [row(f"  {g}", [f for f in ok if f.group == g], pr, cr) for g in sorted({f.group for f in ok})]

    # Outcomes (from the first checker round).
    prefilter_skipped = [files[i] for i in measured if not files[i].torch]
    skip_file = [files[i] for i in measured if files[i].torch and outcomes.get(i) and outcomes[i].skipped]
    exceptions = [(files[i].rel, o.exception) for i, o in outcomes.items() if o.exception]
    internal = [(files[i].rel, msg) for i, o in outcomes.items() for msg in o.internal]
    engine_parse_errors = [(files[i].rel, o.error) for i, o in outcomes.items() if o.error]
    flat = sorted(
        ((files[i].rel, f) for i, o in outcomes.items() for f in o.findings),
        key=lambda x: (x[0], x[1].sort_key),
    )
    per_rule = collections.Counter(f.code for _, f in flat)
    files_per_rule = {c: len({rel for rel, f in flat if f.code == c}) for c in per_rule}
    files_with_findings = len({rel for rel, _ in flat})
    slowest = sorted(ok, key=lambda f: f.check_times[cr], reverse=True)[: args.slowest]

    # --- print
    total = rows[0]
    sys.stderr.flush()
    print()
    print(f"GradGuard throughput on {root}")
    print(f"  engine: gradguard {gradguard.__version__} at {revision}; libcst {importlib.metadata.version('libcst')}; "
          f"Python {platform.python_version()}")
    if packages:
        print("  packages: " + ", ".join(f"{n}=={v}" for n, v in packages.items()))
    print(f"  CPU time by time.process_time() per file; best of {args.repeat} round(s) by total CPU time, "
          f"each round in a fresh shuffled order, parse and checker rounds interleaved")
    print(f"  rounds kept: parse {pr + 1} ({', '.join(f'{t:.1f}' for t in ptotals)} CPU-s), "
          f"checker {cr + 1} ({', '.join(f'{t:.1f}' for t in ctotals)} CPU-s); wall {wall:.0f}s")
    print()
    print(HEADER)
    for r_ in rows:
        print(fmt_row(r_))
    print("  by package:")
    for r_ in group_rows:
        print(fmt_row(r_))
    print()
    def ratio(x) -> str:
        return "-" if x is None else f"{x:.2f}"

    verdict = "meets" if total["ratio"] is not None and total["ratio"] >= TARGET else "BELOW"
    print(f"checker/floor ratio, all files:        {ratio(total['ratio'])}  ({verdict} target >= {TARGET})")
    print(f"checker/floor ratio, torch files only: {ratio(rows[1]['ratio'])}  (what the torch prefilter does not help)")
    print()
    print(f"files found {len(files) + len(undecodable)}; measured {len(ok)}; "
          f"not UTF-8 {len(undecodable)}; libcst parse failures {len(failures)} (left out of both)")
    print(f"skipped by the torch prefilter: {len(prefilter_skipped)} files, {sum(f.lines for f in prefilter_skipped):,} lines; "
          f"by '# gradguard: skip-file': {len(skip_file)}")
    print(f"files with findings: {files_with_findings}; findings: {len(flat)}")
    for code in sorted(per_rule):
        print(f"  {code}: {per_rule[code]} findings in {files_per_rule[code]} files")
    print()
    print(f"slowest {len(slowest)} files for the checker (round kept):")
    for f in slowest:
        p, c = f.parse_times[pr], f.check_times[cr]
        print(f"  {c * 1000:9.1f} ms checker {p * 1000:8.1f} ms parse  ratio {p / c if c else float('inf'):5.2f}  "
              f"{f.lines:>6} lines  {f.rel}")
    if flat and args.sample:
        print()
        print(f"sample findings ({min(args.sample, len(flat))} of {len(flat)}):")
        for rel, f in sample_findings(flat, args.sample, args.seed):
            print("  " + finding_line(rel, f))
    if failures:
        print()
        print(f"libcst parse failures ({len(failures)}):")
        for rel, msg in sorted(failures.items())[:20]:
            print(f"  {rel}: {msg}")
        if len(failures) > 20:
            print(f"  ... and {len(failures) - 20} more")
    if engine_parse_errors:
        print()
        print(f"analyze() reported an error on files libcst parsed ({len(engine_parse_errors)}):")
        for rel, msg in engine_parse_errors:
            print(f"  {rel}: {msg}")
    if internal:
        print()
        print(f"ENGINE BUGS: rules crashed inside analyze() ({len(internal)}):")
        for rel, msg in internal:
            print(f"  {rel}: {msg}")
    print()
    if exceptions:
        print(f"ENGINE BUGS: analyze() raised on {len(exceptions)} file(s):")
        for rel, tb in exceptions:
            print(f"  {rel}: {tb}")
    else:
        print("analyze() raised on no file.")

    if args.findings:
        args.findings.parent.mkdir(parents=True, exist_ok=True)
        args.findings.write_text("".join(finding_line(rel, f) + "\n" for rel, f in flat))
        log(f"wrote {len(flat)} findings to {args.findings}")
    if args.json:
        data = {
            "corpus": str(root),
            "packages": packages,
            "engine": {"version": gradguard.__version__, "revision": revision},
            "python": platform.python_version(),
            "method": {
                "clock": "time.process_time per file",
                "repeat": args.repeat,
                "kept": "round with the lowest total CPU time, per measurement",
                "order": "fresh shuffled order per round; parse and checker rounds interleaved",
                "seed": args.seed,
                "limit_files": args.limit_files,
            },
            "rounds": {"parse_cpu_s": ptotals, "check_cpu_s": ctotals, "parse_kept": pr, "check_kept": cr},
            "wall_s": wall,
            "target_ratio": TARGET,
            "all": rows[0],
            "torch_only": rows[1],
            "no_torch": rows[2],
            "by_package": group_rows,
            "counts": {
                "files_found": len(files) + len(undecodable),
                "measured": len(ok),
                "not_utf8": len(undecodable),
                "parse_failures": len(failures),
                "prefilter_skipped": len(prefilter_skipped),
                "skip_file": len(skip_file),
                "files_with_findings": files_with_findings,
                "findings": len(flat),
                "exceptions": len(exceptions),
                "rule_crashes": len(internal),
            },
            "findings_per_rule": {c: {"findings": per_rule[c], "files": files_per_rule[c]} for c in sorted(per_rule)},
            "slowest": [
                {"path": f.rel, "lines": f.lines, "check_cpu_s": f.check_times[cr], "parse_cpu_s": f.parse_times[pr]}
                for f in slowest
            ],
            "parse_failures": failures,
            "not_utf8": undecodable,
            "exceptions": [{"path": rel, "error": tb} for rel, tb in exceptions],
            "rule_crashes": [{"path": rel, "error": msg} for rel, msg in internal],
            "engine_parse_errors": [{"path": rel, "error": msg} for rel, msg in engine_parse_errors],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")
        log(f"wrote figures to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
