"""The engine fuzz properties of tests/robustness, run longer and with fresh randomness.

    .venv/bin/python bench/fuzz.py [--examples 2000] [--every-cut]

Generated training loops and mutated examples / rule examples go through the same
checks as the test suite (no crash, bounded CPU time per line, ranges inside the
document, every fix sound); `--every-cut` also analyses every prefix of every
corpus program (half-typed code at each character). Prints examples per second
and each failure with its shrunk program; exit 1 if anything failed.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "tests" / "robustness")]

from hypothesis import HealthCheck, given, settings  # noqa: E402

from programs import SEEDS, mutated_seed, training_program  # noqa: E402
from properties import check_analysis, check_fixes  # noqa: E402


def run_strategy(name: str, strategy, examples: int, unpack) -> tuple[int, float, str | None]:
    count = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def prop(case):
        nonlocal count
        count += 1
        source = unpack(case)
        check_fixes(source, check_analysis(source))

    start = time.perf_counter()
    failure = None
    try:
        prop()
    except Exception:  # noqa: BLE001 - report it and go on with the next strategy
        failure = traceback.format_exc(limit=-3)
    return count, time.perf_counter() - start, failure


def every_cut() -> tuple[int, float, list[str]]:
    count, failures = 0, []
    start = time.perf_counter()
    for name, source in SEEDS:
        for cut in range(len(source) + 1):
            count += 1
            try:
                check_analysis(source[:cut])
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name} cut at {cut}: {type(e).__name__}: {e}")
    return count, time.perf_counter() - start, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=2_000, help="examples per strategy")
    parser.add_argument("--every-cut", action="store_true", help="also analyse every prefix of every corpus program")
    args = parser.parse_args()

    failed = False
    print(f"{'strategy':<22} {'examples':>8} {'seconds':>8} {'per s':>7}  result")
    for name, strategy, unpack in (
        ("training loops", training_program(), lambda s: s),
        ("mutated examples", mutated_seed(), lambda case: case[1]),
    ):
        count, seconds, failure = run_strategy(name, strategy, args.examples, unpack)
        print(f"{name:<22} {count:>8} {seconds:>8.1f} {count / seconds:>7.1f}  {'FAILED' if failure else 'ok'}")
        if failure:
            failed = True
            print(failure)
    if args.every_cut:
        count, seconds, failures = every_cut()
        print(f"{'every cut':<22} {count:>8} {seconds:>8.1f} {count / seconds:>7.1f}  {'FAILED' if failures else 'ok'}")
        for line in failures[:20]:
            print("  " + line)
        failed = failed or bool(failures)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
