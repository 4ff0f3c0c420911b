#!/usr/bin/env python
"""What the engine's check of fixes' names (engine/insertions.py) costs inside analyze().

    .venv/bin/python bench/insertion_check.py

Every rule example, corpus program and example program, analysed one by one with every
rule selected, then all of them as one file; prints the analysis CPU time and the part
spent judging fixes (time.process_time() around insertions.judged).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "robustness")]

from corpus import oracle  # noqa: E402
from gradguard.engine import analyze, insertions  # noqa: E402
from gradguard.rules import all_rules  # noqa: E402
from gradguard.settings import Settings  # noqa: E402
from programs import SEEDS  # noqa: E402


def main() -> None:
    sources = [s for _, s in SEEDS] + [oracle.stripped(p.source) for p in oracle.programs()]
    every = Settings(select=tuple(r.code for r in all_rules()))
    judged, spent = insertions.judged, []

    def timed(*args):
        start = time.process_time()
        try:
            return judged(*args)
        finally:
            spent.append(time.process_time() - start)

    insertions.judged = timed
    for label, batch in ((f"{len(sources)} programs, one by one", sources), ("all of them as one file", ["\n\n".join(sources)])):
        spent.clear()
        start = time.process_time()
        for source in batch:
            analyze(source, every)
        total = time.process_time() - start
        lines = sum(s.count("\n") + 1 for s in batch)
        print(f"{label} ({lines} lines): analysis {total:.2f} CPU s, judging fixes {sum(spent):.3f} s "
              f"({100 * sum(spent) / total:.1f}%)")


if __name__ == "__main__":
    main()
