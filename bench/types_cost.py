#!/usr/bin/env python
"""What `--types` costs: `gradguard check` with and without the jedi type layer, CPU time of
the whole run (all worker processes), from a cold cache, on a directory of real code.

    .venv/bin/python bench/types_cost.py [DIR ...]               # default: /work/realscripts
    .venv/bin/python bench/types_cost.py DIR --python /path/to/venv/bin/python
    .venv/bin/python bench/types_cost.py DIR --jobs 1

Prints, per directory, the lines checked, the CPU seconds of each run, the ratio (issue 16's
target: at most 2x) and how many findings each run reported. Exit status 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def cpu_of(args: list[str]) -> tuple[float, float, list]:
    """(CPU seconds of the child processes, wall seconds, findings) of one `gradguard check` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    findings = json.loads(run.stdout) if run.stdout.strip().startswith("[") else []
    return cpu, wall, findings


def lines_in(directory: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in directory.rglob("*.py") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="*", type=Path, default=[Path("/work/realscripts")])
    parser.add_argument("--python", default=None, help="the interpreter jedi reads (--python of gradguard check)")
    parser.add_argument("--jobs", type=int, default=None)
    ns = parser.parse_args()
    base = [sys.executable, "-m", "gradguard", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
    if ns.jobs:
        base += ["--jobs", str(ns.jobs)]
    typed = base + ["--types"] + (["--python", ns.python] if ns.python else [])
    print(f"{'directory':44} {'lines':>8} {'default CPU-s':>14} {'--types CPU-s':>14} {'ratio':>6} {'findings':>9}")
    totals = [0.0, 0.0]
    for d in ns.dirs:
        plain = cpu_of(base + [str(d)])
        types = cpu_of(typed + [str(d)])
        totals[0] += plain[0]
        totals[1] += types[0]
        ratio = types[0] / plain[0] if plain[0] else float("nan")
        print(f"{d.name[:44]:44} {lines_in(d):>8,} {plain[0]:>14.1f} {types[0]:>14.1f} {ratio:>5.1f}x "
              f"{len(plain[2]):>4} -> {len(types[2])}")
    if len(ns.dirs) > 1 and totals[0]:
        print(f"{'all':44} {'':>8} {totals[0]:>14.1f} {totals[1]:>14.1f} {totals[1] / totals[0]:>5.1f}x")
    print("target (issue 16): --types at most 2x the default's CPU time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
