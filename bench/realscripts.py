#!/usr/bin/env python
"""Precision of errors and warnings on real training *scripts* (research, tutorial, RL, GAN repos).

    .venv/bin/python bench/realscripts.py DIR              # DIR holds one checkout per repo
    .venv/bin/python bench/realscripts.py DIR --checkout   # first check out every pinned repo into DIR (git)
    .venv/bin/python bench/realscripts.py DIR --json out.json
    .venv/bin/python bench/realscripts.py DIR --fix-run SCRATCH   # --fix on copies, then check them
    .venv/bin/python bench/realscripts.py DIR --pins bench/fresh.toml --judged bench/fresh-judged.toml \
        --labels bench/fresh-labels.toml   # the fresh set, with recall against its hand labels

bench/realscripts.toml pins each repository and commit (`--pins` names another pins file,
`--judged` its verdicts); `--checkout` runs `git clone` + `git checkout <commit>` for the
ones missing from DIR (a directory named `owner+name`). `--mirror M` clones from local bare
copies instead (M/owner+name/repo, as the team's fetch tool leaves them) and writes only
the blobs the copy holds: a snapshot may lack large data files, and a script never needs them
to be analysed.
The real CLI runs once per checkout (`gradguard check --output-format json .`, default
settings) and every error and warning is looked up in bench/realscripts-judged.toml, where
each was read by hand against the source: verdict "TP" or "FP" and a one-line reason,
keyed by repository, path, line (notebooks: `cell:line`) and code. The report gives, per
repository, files, lines and findings by severity; then per rule the judged true and false
positives and the precision; then every finding not judged yet (after an engine change only
those need reading), and the `missed` entries of the judged file: real bugs found by hand
that GradGuard does not report (recall). Exit status 0; 2 if DIR holds none of the repos.

`--labels FILE` measures recall against bugs labelled by hand before a first run (the
`[[missed]]` entries of bench/fresh-labels.toml; its header gives the fields): a label is
found when an error or warning with its code (or one of its `also` codes) sits on its line,
on a line up to its `span`, or on one of its `also_at` places. The report gives recall per
rule and lists every label not found.

`--fix-run SCRATCH` instead copies each checkout to SCRATCH/owner+name, runs
`gradguard check --fix` there (safe fixes only, default settings) and reports every changed
file with the lines the fix changed; a changed `.py` must still parse and a changed notebook
must still be JSON with its code cells parsing (as written, or with IPython lines read as
`pass`); a file that did not parse before the fix is reported, not counted as broken. It then checks the
fixed copy again: a finding that was not there before (same path and code) means the fixes
added a finding. Files a pin lists under `run` (small scripts that need no dataset or GPU)
run before and after with `python FILE` in their directory (MPLBACKEND=Agg, a timeout); one
that ran before and fails after is a breakage. Exit status 1 if anything broke.
"""

from __future__ import annotations

import argparse
import collections
import json
import ast
import difflib
import os
import shutil
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


def checkout(pins: list[dict], root: Path, mirror: Path | None = None) -> None:
    for pin in pins:
        target = root / pin["name"]
        if target.exists():
            continue
        if mirror is None:
            subprocess.run(["git", "clone", "--quiet", pin["url"], str(target)], check=True)
            subprocess.run(["git", "-C", str(target), "checkout", "--quiet", pin["commit"]], check=True)
        else:
            checkout_present(mirror_git_dir(mirror / pin["name"]), pin["commit"], target)


def mirror_git_dir(copy: Path) -> Path:
    """The git directory of a local copy: `repo/.git` for a work tree, `repo` for a bare one."""
    repo = copy / "repo"
    return repo / ".git" if (repo / ".git").is_dir() else repo


def checkout_present(git_dir: Path, commit: str, target: Path) -> None:
    """Clone `git_dir` into `target` at `commit`, writing only the files whose blobs it holds."""
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(git_dir), str(target)], check=True)
    git = ["git", "--literal-pathspecs", "-C", str(target), "-c", "core.quotePath=false"]
    subprocess.run([*git, "update-ref", "--no-deref", "HEAD", commit], check=True)
    tree = subprocess.run([*git, "ls-tree", "-r", "-z", commit], check=True, capture_output=True, text=True)
    entries = [e.split("\t", 1) for e in tree.stdout.split("\0") if e]
    blobs = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == "blob"]
    have = subprocess.run([*git, "cat-file", "--batch-check"], check=True, capture_output=True, text=True,
                          input="".join(f"{sha}\n" for sha, _ in blobs)).stdout.splitlines()
    present = [path for (_, path), line in zip(blobs, have) if not line.endswith("missing")]
    subprocess.run([*git, "checkout", "--quiet", commit, "--pathspec-from-file=-", "--pathspec-file-nul"],
                   check=True, input="".join(f"{p}\0" for p in present), text=True)


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


def place(text: str) -> tuple[str, int | None, int]:
    """`path:line` or `path:cell:line` as (path, cell, line)."""
    if ".ipynb:" in text:
        path, cell, line = text.rsplit(":", 2)
        return path, int(cell), int(line)
    path, line = text.rsplit(":", 1)
    return path, None, int(line)


def recall(labels: list[dict], findings: dict[str, list[dict]], out) -> dict:
    """Which hand labels an error or warning of the run reports, overall and per rule."""
    per_rule: dict = collections.defaultdict(collections.Counter)
    missing = []
    for label in labels:
        if label["repo"] not in findings:
            continue
        path, cell, line = place(label["where"])
        places = {(path, cell, n) for n in range(line, label.get("span", line) + 1)}
        places.update(place(p) for p in label.get("also_at", []))
        codes = {label["code"], *label.get("also", [])}
        hit = any(f["severity"] in SEVERE and f["code"] in codes
                  and (f["path"], f.get("cell"), f["line"]) in places for f in findings[label["repo"]])
        per_rule[label["code"]]["found" if hit else "missed"] += 1
        if not hit:
            missing.append(label)
    total = collections.Counter()
    print(f"\n{'rule':6} {'labels':>6} {'found':>5}  recall", file=out)
    for code in sorted(per_rule):
        c = per_rule[code]
        total.update(c)
        print(f"{code:6} {c['found'] + c['missed']:>6} {c['found']:>5}  {c['found'] / (c['found'] + c['missed']):.1%}", file=out)
    n = total["found"] + total["missed"]
    if n:
        print(f"{'all':6} {n:>6} {total['found']:>5}  {total['found'] / n:.1%}", file=out)
    print(f"\nhand-labelled bugs not reported: {len(missing)}", file=out)
    for m in missing:
        print(f"  {m['repo']}/{m['where']}: {m['code']} {m['reason']}", file=out)
    return {"rules": {k: dict(v) for k, v in per_rule.items()}, "missed": missing}


def report(root: Path, pins: list[dict], judged: dict, out, labels: list[dict] | None = None) -> dict:
    verdicts = {(j["repo"], j["where"], j["code"]): j for j in judged.get("finding", [])}
    every: dict[str, list[dict]] = {}
    per_rule: dict = collections.defaultdict(collections.Counter)
    unjudged, result = [], {"repos": [], "rules": {}, "unjudged": [], "missed": judged.get("missed", [])}
    print(f"{'repository':45} {'files':>5} {'lines':>7}  error warning info", file=out)
    for pin in pins:
        repo = root / pin["name"]
        if not repo.is_dir():
            continue
        findings, files, lines = check(repo)
        every[pin["name"]] = findings
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
    if labels is not None:
        result["recall"] = recall(labels, every, out)
    return result


def parse_cell(src: str) -> None:
    """Parse a code cell as IPython would run it: as written, or with its IPython lines
    (`%magic`, `!shell`, `?help`) turned into `pass` at their indentation. Either is enough:
    a line starting with `%` may also be the continuation of a `"..." % args` expression."""
    try:
        ast.parse(src)
    except SyntaxError:
        ast.parse("\n".join(l[:len(l) - len(l.lstrip())] + "pass" if l.lstrip().startswith(("%", "!", "?")) else l
                            for l in src.splitlines()))


def parses(path: Path) -> str | None:
    """None if a file parses (a notebook: every code cell), else why not."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        if path.suffix == ".ipynb":
            for n, cell in enumerate(json.loads(text).get("cells", []), 1):
                if cell.get("cell_type") == "code":
                    src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
                    try:
                        parse_cell(src)
                    except SyntaxError as e:
                        raise SyntaxError(f"cell {n}: {e.msg} (line {e.lineno})") from None
        else:
            ast.parse(text)
    except (SyntaxError, ValueError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def run_script(repo: Path, rel: str, timeout: int) -> str | None:
    """None if `python rel` exits 0 in its directory, else the last line of its error."""
    script = repo / rel
    env = {**os.environ, "MPLBACKEND": "Agg"}
    try:
        r = subprocess.run([sys.executable, script.name], cwd=script.parent, env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout}s"
    if r.returncode == 0:
        return None
    tail = [l for l in r.stderr.splitlines() if l.strip()]
    return tail[-1] if tail else f"exit status {r.returncode}"


def sources(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes() for p in repo.rglob("*")
            if p.suffix in (".py", ".ipynb") and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(repo).parts)}


def fix_run(root: Path, scratch: Path, pins: list[dict], out, timeout: int = 120) -> dict:
    """--fix on a copy of every checkout; changed files, parse checks, added findings, scripts run."""
    result = {"repos": [], "changed": [], "broken": []}
    for pin in pins:
        repo = root / pin["name"]
        if not repo.is_dir():
            continue
        copy = scratch / pin["name"]
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(repo, copy, symlinks=True)
        before_findings, _, _ = check(copy)
        before = sources(copy)
        parsed_before = {rel: parses(copy / rel) for rel in before}
        ran_before = {rel: run_script(copy, rel, timeout) for rel in pin.get("run", [])}
        subprocess.run([sys.executable, "-m", "gradguard", "check", "--fix", "--no-cache", "."],
                       cwd=copy, capture_output=True, text=True)
        after = sources(copy)
        after_findings, _, _ = check(copy)
        changed = sorted(rel for rel in before if after.get(rel) != before[rel])
        print(f"{pin['name']}: {len(changed)} files changed by --fix", file=out)
        for rel in changed:
            old = before[rel].decode("utf-8", "replace").splitlines()
            new = after[rel].decode("utf-8", "replace").splitlines()
            edits = sum(1 for l in difflib.unified_diff(old, new, lineterm="", n=0)
                        if l[:1] in "+-" and not l.startswith(("+++", "---")))
            problem = parses(copy / rel)
            was = parsed_before[rel]
            state = ("parses" if problem is None
                     else f"did not parse before the fix either: {was}" if was is not None
                     else problem)
            print(f"  {rel}: {edits} lines changed, {state}", file=out)
            result["changed"].append({"repo": pin["name"], "path": rel, "lines": edits, "parse_error": problem,
                                      "parse_error_before": was})
            if problem is not None and was is None:
                result["broken"].append(f"{pin['name']}/{rel}: no longer parses: {problem}")
        seen = collections.Counter((f["path"], f["code"]) for f in before_findings)
        for f in after_findings:
            key = (f["path"], f["code"])
            if seen[key]:
                seen[key] -= 1
                continue
            line = f"{pin['name']}/{where(f)}: {f['code']} added by the fixes: {f['message']}"
            print(f"  {line}", file=out)
            result["broken"].append(line)
        for rel, was in ran_before.items():
            now = run_script(copy, rel, timeout)
            verdict = ("ran before and after" if was is None and now is None
                       else f"broke: {now}" if was is None
                       else f"fails before the fix too: {was}")
            print(f"  run {rel}: {verdict}", file=out)
            if was is None and now is not None:
                result["broken"].append(f"{pin['name']}/{rel}: ran before --fix, after: {now}")
        result["repos"].append({"name": pin["name"], "changed": len(changed)})
    print(f"\nfiles changed: {len(result['changed'])}; broken: {len(result['broken'])}", file=out)
    for line in result["broken"]:
        print(f"  {line}", file=out)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="a directory with one checkout per repository (owner+name)")
    parser.add_argument("--checkout", action="store_true", help="git clone the pinned repositories missing from ROOT")
    parser.add_argument("--pins", type=Path, default=PINS, help="the pinned repositories (default: %(default)s)")
    parser.add_argument("--judged", type=Path, default=JUDGED, help="their verdicts (default: %(default)s)")
    parser.add_argument("--mirror", type=Path, metavar="M",
                        help="with --checkout: clone from local bare copies M/owner+name/repo instead of the URL")
    parser.add_argument("--labels", type=Path, metavar="FILE",
                        help="bugs labelled by hand before the first run ([[missed]] entries): report recall")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--fix-run", type=Path, metavar="SCRATCH",
                        help="copy each checkout into SCRATCH, apply --fix there and report what changed or broke")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per script run by --fix-run")
    args = parser.parse_args(argv)
    pins = tomllib.loads(args.pins.read_text(encoding="utf-8"))["repo"]
    if args.checkout:
        checkout(pins, args.root, args.mirror)
    if args.fix_run:
        result = fix_run(args.root, args.fix_run, pins, sys.stdout, args.timeout)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2))
        return 2 if not result["repos"] else 1 if result["broken"] else 0
    judged = tomllib.loads(args.judged.read_text(encoding="utf-8")) if args.judged.exists() else {}
    labels = tomllib.loads(args.labels.read_text(encoding="utf-8"))["missed"] if args.labels else None
    result = report(args.root, pins, judged, sys.stdout, labels)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0 if result["repos"] else 2


if __name__ == "__main__":
    sys.exit(main())
