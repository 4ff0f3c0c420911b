#!/usr/bin/env python
"""Precision of errors and warnings on real training *scripts* (research, tutorial, RL, GAN repos).

    .venv/bin/python bench/realscripts.py DIR              # DIR holds one checkout per repo
    .venv/bin/python bench/realscripts.py DIR --checkout   # first check out every pinned repo into DIR (git)
    .venv/bin/python bench/realscripts.py DIR --json out.json

bench/realscripts.toml pins each repository and commit; `--checkout` runs `git clone` +
`git checkout <commit>` for the ones missing from DIR (a directory named `owner+name`).
The real CLI runs once per checkout (`gradguard check --output-format json .`, default
settings) and every error and warning is looked up in bench/realscripts-judged.toml, where
each was read by hand against the source: verdict "TP" or "FP" and a one-line reason,
keyed by repository, path, line (notebooks: `cell:line`) and code. The report gives, per
repository, files, lines and findings by severity; then per rule the judged true and false
positives and the precision; then every finding not judged yet (after an engine change only
those need reading), and the `missed` entries of the judged file: real bugs found by hand
that GradGuard does not report (recall). Exit status 0; 2 if DIR holds none of the repos.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
PINS = HERE / "realscripts.toml"
JUDGED = HERE / "realscripts-judged.toml"
SEVERE = ("error", "warning")


def where(f: dict) -> str:
    """`path:line`, or `path:cell:line` in a notebook."""
    return f"{f['path']}:{f['cell']}:{f['line']}" if f.get("cell") else f"{f['path']}:{f['line']}"


def checkout(pins: list[dict], root: Path) -> None:
    for pin in pins:
        target = root / pin["name"]
        if target.exists():
            continue
        subprocess.run(["git", "clone", "--quiet", pin["url"], str(target)], check=True)
        subprocess.run(["git", "-C", str(target), "checkout", "--quiet", pin["commit"]], check=True)


def check(repo: Path) -> tuple[list[dict], int, int]:
    """(findings, files, lines) of one checkout, through the real CLI."""
    run = subprocess.run(
        [sys.executable, "-m", "gradguard", "check", "--output-format", "json", "--no-cache", "."],
        cwd=repo, capture_output=True, text=True,
    )
    findings = json.loads(run.stdout or "[]")
    files = [p for p in repo.rglob("*") if p.suffix in (".py", ".ipynb") and not any(
        part.startswith(".") for part in p.relative_to(repo).parts)]
    lines = sum(p.read_bytes().count(b"\n") for p in files if p.suffix == ".py")
    return findings, len(files), lines


def report(root: Path, pins: list[dict], judged: dict, out) -> dict:
    verdicts = {(j["repo"], j["where"], j["code"]): j for j in judged.get("finding", [])}
    per_rule: dict = collections.defaultdict(collections.Counter)
    unjudged, result = [], {"repos": [], "rules": {}, "unjudged": [], "missed": judged.get("missed", [])}
    print(f"{'repository':45} {'files':>5} {'lines':>7}  error warning info", file=out)
    for pin in pins:
        repo = root / pin["name"]
        if not repo.is_dir():
            continue
        findings, files, lines = check(repo)
        sev = collections.Counter(f["severity"] for f in findings)
        print(f"{pin['name']:45} {files:>5} {lines:>7}  {sev['error']:>5} {sev['warning']:>7} {sev['info']:>4}", file=out)
        result["repos"].append({"name": pin["name"], "files": files, "lines": lines, **sev})
        for f in findings:
            if f["severity"] not in SEVERE:
                continue
            j = verdicts.get((pin["name"], where(f), f["code"]))
            if j is None:
                unjudged.append(f"{pin['name']}/{where(f)}: {f['code']} {f['message']}")
            else:
                per_rule[f["code"]][j["verdict"]] += 1
    if not result["repos"]:
        return result
    print(f"\n{'rule':6} {'TP':>4} {'FP':>4}  precision", file=out)
    total = collections.Counter()
    for code in sorted(per_rule):
        c = per_rule[code]
        total.update(c)
        print(f"{code:6} {c['TP']:>4} {c['FP']:>4}  {c['TP'] / (c['TP'] + c['FP']):.1%}", file=out)
        result["rules"][code] = dict(c)
    if total:
        print(f"{'all':6} {total['TP']:>4} {total['FP']:>4}  {total['TP'] / (total['TP'] + total['FP']):.1%}", file=out)
    print(f"\nunjudged errors and warnings: {len(unjudged)}", file=out)
    for line in unjudged:
        print(f"  {line}", file=out)
    result["unjudged"] = unjudged
    missed = result["missed"]
    print(f"\nreal bugs found by hand and not reported: {len(missed)}", file=out)
    for m in missed:
        print(f"  {m['repo']}/{m['where']}: {m['code']} {m['reason']}", file=out)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="a directory with one checkout per repository (owner+name)")
    parser.add_argument("--checkout", action="store_true", help="git clone the pinned repositories missing from ROOT")
    parser.add_argument("--pins", type=Path, default=PINS)
    parser.add_argument("--judged", type=Path, default=JUDGED)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    pins = tomllib.loads(args.pins.read_text())["repo"]
    if args.checkout:
        checkout(pins, args.root)
    judged = tomllib.loads(args.judged.read_text()) if args.judged.exists() else {}
    result = report(args.root, pins, judged, sys.stdout)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0 if result["repos"] else 2


if __name__ == "__main__":
    sys.exit(main())
