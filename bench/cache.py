#!/usr/bin/env python
"""Cold and warm runs of `gradguard check` over a real tree: what the cache saves.

    .venv/bin/python bench/cache.py                          # timm and torchvision from the pinned corpus
    .venv/bin/python bench/cache.py --packages timm --repeat 5
    .venv/bin/python bench/cache.py --corpus path/to/tree

The tree is copied into a temporary directory (the cache lives in the project
root, here the copy). Each round: remove `.gradguard_cache/`, run `gradguard
check` (cold: every file analysed, the cache written), run it again (warm:
every file read and hashed, results from the cache), then change one file and
run it once more (one file analysed). Wall-clock seconds of the whole process,
start-up included, as a user waits for it; the best of --repeat rounds is
kept. The warm run must print exactly what the cold run printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import wheels as corpus_mod

HERE = Path(__file__).resolve().parent


def run(tree: Path, jobs: int | None) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "gradguard", "check", "--output-format", "concise", "."]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"gradguard failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", nargs="*", default=["timm", "torchvision"], help="corpus packages to copy")
    parser.add_argument("--corpus", type=Path, help="a tree of your own instead of the pinned corpus")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, help="passed to gradguard check (default: all cores)")
    args = parser.parse_args()

    sources = [args.corpus] if args.corpus else [p.directory for p in corpus_mod.ensure(args.packages)]
    with tempfile.TemporaryDirectory(prefix="gradguard-cache-bench-") as tmp:
        tree = Path(tmp) / "tree"
        for source in sources:
            shutil.copytree(source, tree / source.name)
        files = [p for p in tree.rglob("*.py")]
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        changed = max(files, key=lambda p: p.stat().st_size)
        original = changed.read_bytes()
        best = {"cold": float("inf"), "warm": float("inf"), "one file changed": float("inf")}
        for _ in range(args.repeat):
            shutil.rmtree(tree / ".gradguard_cache", ignore_errors=True)
            changed.write_bytes(original)
            cold, cold_out = run(tree, args.jobs)
            warm, warm_out = run(tree, args.jobs)
            if warm_out != cold_out:
                raise SystemExit("the warm run printed something else than the cold run")
            changed.write_bytes(original + b"\n# edited\n")
            one, _ = run(tree, args.jobs)
            for key, value in (("cold", cold), ("warm", warm), ("one file changed", one)):
                best[key] = min(best[key], value)
        findings = cold_out.count("\n") - 1
        cache_size = sum(f.stat().st_size for f in (tree / ".gradguard_cache").iterdir())

    print(f"tree: {', '.join(s.name for s in sources)}: {len(files):,} files, {lines:,} lines, {findings:,} findings")
    print(f"machine: {os.cpu_count()} cores; best of {args.repeat} rounds, wall-clock seconds per `gradguard check`")
    for key, value in best.items():
        print(f"  {key:<17} {value:7.2f} s")
    print(f"warm speed-up: {best['cold'] / best['warm']:.1f}x (cache files: {cache_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
