#!/usr/bin/env python
"""GradGuard beside its peers, in one run, on the same files: CPU time and lines per CPU-second.

    .venv/bin/python bench/peers.py                        # timm's wheel (bench/wheels.py)
    .venv/bin/python bench/peers.py --packages timm,diffusers --repeat 3
    .venv/bin/python bench/peers.py --corpus path/to/tree

Each tool runs as its own process over the same explicit list of files, one thread:
  libcst parse    libcst.parse_module on every file (the floor issue 30 measures against)
  ast parse       CPython's ast.parse on every file (what a C parser costs)
  gradguard       `gradguard check -j1 --no-cache` (project-wide analysis on, as users run it)
  gradguard alone the same with `--no-project`: each file alone, as bench/throughput.py measures
  torch-preflight `torch-preflight check` (0.5.0, the closest peer: also libcst, also PyTorch)
  ruff            `ruff check --select ALL --no-cache --isolated`, RAYON_NUM_THREADS=1
CPU time is the children's user + system time (resource.getrusage) around each process, so
interpreter start-up is included for every Python tool alike. Each round runs every tool once
in a fresh order; the round with the least CPU time is kept per tool. The peers are installed
with pip into bench/.corpus/peers/<name>-<version>/ (pinned below; reused when present).
Findings counts are printed for context only: the tools look for different things.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import wheels

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEERS = {"torch-preflight": "0.5.0", "ruff": "0.17.6"}

_PARSE = """
import sys, {module}
for path in sys.argv[1:]:
    source = open(path, encoding="utf-8").read()
    try:
        {call}
    except Exception:
        pass
"""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def install(name: str, version: str, root: Path) -> Path:
    """A pinned peer in its own directory (each brings the libcst it wants)."""
    target = root / "peers" / f"{name}-{version}"
    if not (target / ".installed").exists():
        log(f"installing {name}=={version} into {target}")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--target", str(target), f"{name}=={version}"], check=True)
        (target / ".installed").write_text(version)
    return target


def commands(files: list, root: Path) -> dict:
    """tool -> (argv, extra environment), each given the same files."""
    py = sys.executable
    preflight, ruff = (install(n, v, root) for n, v in PEERS.items())
    return {
        "libcst parse": ([py, "-c", _PARSE.format(module="libcst", call="libcst.parse_module(source)"), *files], {}),
        "ast parse": ([py, "-c", _PARSE.format(module="ast", call="ast.parse(source)"), *files], {}),
        "gradguard": ([py, "-m", "gradguard", "check", "-j1", "--no-cache", "--exit-zero",
                       "--output-format", "github", *files], {"PYTHONPATH": str(REPO / "server")}),
        "gradguard alone": ([py, "-m", "gradguard", "check", "-j1", "--no-cache", "--exit-zero", "--no-project",
                             "--output-format", "github", *files], {"PYTHONPATH": str(REPO / "server")}),
        "torch-preflight": ([py, "-m", "torch_preflight", "check", "-j", "1", "-f", "github", *files],
                            {"PYTHONPATH": str(preflight)}),
        "ruff": ([str(ruff / "bin" / "ruff"), "check", "--select", "ALL", "--no-cache", "--isolated",
                  "--exit-zero", "--output-format", "github", *files],
                 {"RAYON_NUM_THREADS": "1", "PYTHONPATH": str(ruff)}),
    }


def run(argv: list, extra: dict) -> tuple[float, float, str]:
    """(children's CPU seconds, wall seconds, stdout) of one run."""
    env = {**os.environ, **extra}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        log(f"  {argv[0]} {argv[1] if len(argv) > 1 else ''} exited {done.returncode}: {done.stderr[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.stdout


def findings(tool: str, out: str) -> int | None:
    """How many findings a tool printed (GitHub Actions annotations: one `::warning file=...` each)."""
    if tool.endswith("parse"):
        return None
    return sum(1 for line in out.splitlines() if line.startswith("::"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", default="timm", help="pinned wheels of bench/wheels.py (comma-separated)")
    ap.add_argument("--corpus", type=Path, help="a tree of .py files instead of wheels")
    ap.add_argument("--root", type=Path, default=wheels.DEFAULT_ROOT, help="where wheels and peers are kept")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()

    if args.corpus:
        files = sorted(args.corpus.rglob("*.py"))
        label = str(args.corpus)
    else:
        packages = wheels.ensure(args.packages.split(","), args.root)
        files = [f for p in packages for f in wheels.python_files(p.directory)]
        label = ", ".join(f"{p.name}-{p.version}" for p in packages)
    files = [f for f in files if _utf8(f)]
    lines = sum(f.read_text(encoding="utf-8").count("\n") for f in files)
    tools = commands([str(f) for f in files], args.root)
    best: dict = {}
    rng = random.Random(args.seed)
    for r in range(args.repeat):
        order = list(tools)
        rng.shuffle(order)
        for tool in order:
            cpu, wall, out = run(*tools[tool])
            log(f"round {r + 1}: {tool:16} {cpu:7.2f} s CPU {wall:7.2f} s wall")
            if tool not in best or cpu < best[tool][0]:
                best[tool] = (cpu, wall, findings(tool, out))

    floor = best["libcst parse"][0]
    print(f"corpus: {label}: {len(files)} files, {lines:,} lines; best of {args.repeat} rounds; one thread each")
    print(f"{'tool':18}{'version':>10}{'CPU s':>9}{'wall s':>9}{'lines/CPU-s':>13}{'vs libcst parse':>17}{'findings':>10}")
    rows = []
    for tool in tools:
        cpu, wall, found = best[tool]
        version = PEERS.get(tool) or ("" if tool.endswith("parse") else _gradguard_version())
        speed = lines / cpu if cpu else float("inf")
        print(f"{tool:18}{version:>10}{cpu:9.2f}{wall:9.2f}{speed:13,.0f}{floor / cpu:16.2f}x"
              f"{'' if found is None else found:>10}")
        rows.append({"tool": tool, "version": version, "cpu": cpu, "wall": wall, "lines_per_cpu_s": speed,
                     "vs_libcst_parse": floor / cpu, "findings": found})
    print("(vs libcst parse: the floor's CPU time over the tool's; 1.00x = as fast as parsing with libcst)")
    if args.json:
        args.json.write_text(json.dumps({"corpus": label, "files": len(files), "lines": lines, "rows": rows}, indent=1))
    return 0


def _utf8(path: Path) -> bool:
    try:
        path.read_text(encoding="utf-8")
        return True
    except (UnicodeDecodeError, OSError):
        return False


def _gradguard_version() -> str:
    sys.path.insert(0, str(REPO / "server"))
    import gradguard
    return gradguard.__version__


if __name__ == "__main__":
    sys.exit(main())
