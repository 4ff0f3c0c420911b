#!/usr/bin/env python
"""What project-wide analysis costs over checking each file alone, on real code.

    .venv/bin/python bench/project_cost.py DIR [DIR ...]      # each DIR a project (a checkout, an unpacked package)
    .venv/bin/python bench/project_cost.py --wheels CACHE    # the model-library corpus of bench/throughput.py

In one process, one worker (`-j1`), no result cache, for each project: CPU time
(time.process_time) of the CLI's run over its files alone (`check --no-project`)
and with the project (`check`: every file once for its calls, then again the files
the other files' calls change), interleaved, best of --repeat rounds; the files
re-analysed, the findings that differ, and the memory of the project index
(tracemalloc around building it from the files' text). See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gradguard import cli, project  # noqa: E402
from gradguard.config import Resolver  # noqa: E402
from gradguard.discovery import discover  # noqa: E402


def measure(root: Path, repeat: int) -> dict:
    here = os.getcwd()
    os.chdir(root)
    try:
        resolver = Resolver()
        files = discover(["."], resolver).files
        tasks = [(p, resolver.for_path(p).settings_for(p), None) for p in files]
        best = {"alone": float("inf"), "project": float("inf")}
        found = {}
        stats: dict = {}
        for _ in range(repeat):
            for mode in ("alone", "project"):
                start = time.process_time()
                if mode == "alone":
                    results = list(cli.run_tasks(tasks, cli.Job(), 1))
                else:
                    results = list(cli.run_project(tasks, cli.Job(), 1, resolver, stats))
                best[mode] = min(best[mode], time.process_time() - start)
                found[mode] = {(r.path, f.code, f.range.start.line, f.severity.value) for r in results for f in r.findings}
        lines = sum(project.read(p).count("\n") for p in files if p.endswith(".py"))
        tracemalloc.start()
        index = project.index(str(Path(".").resolve()), {p: project.read(p) for p in files})
        index_bytes = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del index
        return {"name": root.name, "files": len(files), "lines": lines, **best, **stats,
                "gained": len(found["project"] - found["alone"]), "lost": len(found["alone"] - found["project"]),
                "index_mb": index_bytes / 1e6}
    finally:
        os.chdir(here)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--wheels", type=Path, help="the unpacked wheels of bench/throughput.py's cache: each a project")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    dirs = list(args.dirs)
    if args.wheels:
        dirs += sorted(p for p in args.wheels.iterdir() if p.is_dir() and p.name != "wheels")
    if not dirs:
        parser.error("give project directories or --wheels")
    print(f"{'project':32} {'files':>6} {'lines':>9} {'alone s':>8} {'project s':>9} {'ratio':>6} "
          f"{'beyond':>6} {'again':>6} {'+find':>6} {'-find':>6} {'index MB':>8}")
    total = {"lines": 0, "alone": 0.0, "project": 0.0, "index_mb": 0.0}
    for d in dirs:
        m = measure(d.resolve(), args.repeat)
        for k in total:
            total[k] += m[k]
        print(f"{m['name'][:32]:32} {m['files']:>6} {m['lines']:>9,} {m['alone']:>8.1f} {m['project']:>9.1f} "
              f"{m['project'] / max(m['alone'], 1e-9):>6.2f} {m.get('beyond', 0):>6} {m.get('again', 0):>6} "
              f"{m['gained']:>6} {m['lost']:>6} {m['index_mb']:>8.1f}", flush=True)
    print(f"{'all':32} {'':>6} {total['lines']:>9,} {total['alone']:>8.1f} {total['project']:>9.1f} "
          f"{total['project'] / max(total['alone'], 1e-9):>6.2f} {'':>6} {'':>6} {'':>6} {'':>6} {total['index_mb']:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
