#!/usr/bin/env python
"""`gradguard check` over real training code: pinned PyPI wheels of projects whose product is training loops.

    .venv/bin/python bench/realcode.py                          # every project below
    .venv/bin/python bench/realcode.py --projects torchtune,trl --context
    .venv/bin/python bench/realcode.py --findings out.txt --context 8 --json out.json

Each project's wheel is fetched once (with bench/wheels.py's helpers, `pip download
--no-deps --only-binary=:all:`) into bench/.corpus/realcode/wheels/ and only its .py
members are unpacked into bench/.corpus/realcode/<name>-<version>/; both are reused.
Then the real CLI runs once per project, from the corpus directory,

    python -m gradguard check --output-format json --jobs 2 <name>-<version>[/<subdir> ...]

and the report gives, per project, the files and lines checked (the files the CLI's own
discovery picks, lines = newline count) and findings per rule code, then totals per rule.
Every finding goes to --findings as `path:line:col: CODE message` (path relative to the
corpus directory, line and column 1-based), with --context each followed by the source
lines around it. Files the CLI could not check (its stderr) are counted and listed.
The exit status is 0 whether or not there are findings; 2 only if nothing could be checked.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import wheels as corpus_mod
from throughput import engine_revision

import gradguard
from gradguard.discovery import discover

HERE = corpus_mod.HERE
REPO = HERE.parent
DEFAULT_ROOT = corpus_mod.DEFAULT_ROOT / "realcode"

# name -> (version, the unpacked subdirectories to check; None: all of it).
# Pinned so that runs compare. All are wheels that exist on PyPI (checked with pip download);
# none needs building. unsloth's wheel also carries a web app (studio/, ~900 files): only
# the library and its CLI are checked. axolotl is at 0.19.0, the newest this index serves.
PROJECTS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "torchtune": ("0.6.1", None),  # recipes/ (the training scripts) is in the wheel
    "litgpt": ("0.5.13", None),  # litgpt/finetune, litgpt/pretrain
    "trl": ("1.16.0", None),  # trl/trainer
    "torchtitan": ("0.3.0", None),  # torchtitan/train.py, torchtitan_recipes/
    "torchrl": ("0.14.1", None),  # sota-implementations/ is in the wheel
    "pytorch-ignite": ("0.5.5", None),
    "torchtnt": ("0.2.4", None),
    "composer": ("0.32.1", None),
    "skorch": ("1.4.0", None),
    "poutyne": ("1.19.0", None),
    "axolotl": ("0.19.0", None),
    "nanotron": ("0.4", None),
    "openrlhf": ("0.11.2", None),
    "verl": ("0.9.1", None),
    "unsloth": ("2026.10.9", ("unsloth", "unsloth_cli")),
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def default_python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


# --- corpus -------------------------------------------------------------------------------------


@dataclass
class Project:
    name: str
    version: str
    targets: list[str]  # what the CLI is given, relative to the corpus root
    files: list[str] = field(default_factory=list)  # what the CLI's discovery finds, relative to the root
    lines: int = 0
    findings: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # stderr lines: files that could not be checked
    returncode: int | None = None

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"


def ensure(name: str, version: str, root: Path) -> Path | None:
    """The unpacked .py tree of name==version under root, fetched and unpacked with wheels.py's helpers."""
    dest = root / f"{name}-{version}"
    if (dest / corpus_mod._DONE).exists():
        return dest
    wheels = root / "wheels"
    whl = corpus_mod._find_wheel(wheels, name, version) or corpus_mod._download(wheels, name, version)
    if whl is None:
        return None
    try:
        n = corpus_mod._unpack(whl, dest)
    except (zipfile.BadZipFile, OSError) as e:
        log(f"SKIP {name}=={version}: cannot unpack {whl.name}: {e}")
        return None
    log(f"unpacked {n} .py files of {whl.name} into {dest}")
    return dest


# --- checking -----------------------------------------------------------------------------------

_ERROR_LINE = re.compile(r"^(?P<path>.+?)(?::\d+:\d+)?: (?P<level>error|warning): ")


def run_cli(project: Project, root: Path, python: str, jobs: int) -> None:
    cmd = [python, "-m", "gradguard", "check", "--output-format", "json", "--jobs", str(jobs), *project.targets]
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    project.returncode = proc.returncode
    project.errors = [ln for ln in proc.stderr.splitlines() if _ERROR_LINE.match(ln)]
    other = [ln for ln in proc.stderr.splitlines() if ln.strip() and not _ERROR_LINE.match(ln)]
    try:
        project.findings = json.loads(proc.stdout) if proc.stdout.strip() else []
    except json.JSONDecodeError as e:
        project.errors.append(f"{project.label}: error: the CLI's JSON did not parse: {e}")
        other = other or proc.stdout.splitlines()[-5:]
    if proc.returncode not in (0, 1, 2) or other:
        # Not a plain run: show what the CLI said (a traceback, a usage error ...).
        log(f"{project.label}: the CLI exited {proc.returncode}; stderr:")
        for ln in other[-20:]:
            log("  " + ln)
        if proc.returncode not in (0, 1, 2):
            project.errors.append(f"{project.label}: error: the CLI exited {proc.returncode}")


def finding_line(f: dict) -> str:
    msg = " ".join(f["message"].split())
    return f"{f['path']}:{f['line']}:{f['column']}: {f['code']} {msg}"


class Sources:
    """Lines of the corpus files, read once each."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, list[str]] = {}

    def lines(self, rel: str) -> list[str]:
        if rel not in self._cache:
            try:
                text = (self.root / rel).read_bytes().decode("utf-8-sig", "replace")
            except OSError:
                text = ""
            self._cache[rel] = text.splitlines()
        return self._cache[rel]


def context_block(f: dict, sources: Sources, n: int) -> list[str]:
    """n source lines around the finding's line (more before it than after), the line marked with '>'."""
    lines = sources.lines(f["path"])
    line = f["line"]
    before = n // 2
    start = max(1, line - before)
    end = min(len(lines), start + n - 1)
    start = max(1, min(start, end - n + 1))
    width = len(str(end))
    out = []
    for i in range(start, end + 1):
        mark = ">" if i == line else " "
        out.append(f"  {mark} {i:>{width}} | {lines[i - 1].rstrip()}")
    return out


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--projects", help=f"comma-separated subset of: {','.join(PROJECTS)}")
    ap.add_argument("--cache", type=Path, default=DEFAULT_ROOT, metavar="DIR",
                    help="where wheels are downloaded and unpacked; the corpus directory (default bench/.corpus/realcode)")
    ap.add_argument("--findings", type=Path, metavar="OUT.txt",
                    help="where every finding is written (default <cache>/findings.txt)")
    ap.add_argument("--context", type=int, nargs="?", const=6, default=0, metavar="N",
                    help="follow each finding in --findings with N source lines around it (N default 6)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the per-project figures and raw findings as JSON")
    ap.add_argument("--jobs", type=int, default=2, metavar="J", help="the CLI's --jobs (default 2)")
    ap.add_argument("--python", default=default_python(), metavar="EXE",
                    help="the interpreter that runs `-m gradguard` (default .venv/bin/python)")
    args = ap.parse_args(argv)
    revision = engine_revision()

    names = [n.strip() for n in args.projects.split(",") if n.strip()] if args.projects else list(PROJECTS)
    unknown = [n for n in names if n not in PROJECTS]
    if unknown:
        ap.error(f"unknown project(s) {', '.join(unknown)}; known: {', '.join(PROJECTS)}")
    root = args.cache.resolve()
    findings_out = args.findings or root / "findings.txt"

    projects: list[Project] = []
    for name in names:
        version, subdirs = PROJECTS[name]
        dest = ensure(name, version, root)
        if dest is None:
            continue
        targets = [f"{dest.name}/{s}" for s in subdirs] if subdirs else [dest.name]
        missing = [t for t in targets if not (root / t).is_dir()]
        if missing:
            log(f"SKIP {name}=={version}: not in the wheel: {', '.join(missing)}")
            continue
        p = Project(name, version, targets)
        cwd = os.getcwd()
        try:
            os.chdir(root)  # discovery's paths then read as the CLI's do
            p.files = discover(targets).files
        finally:
            os.chdir(cwd)
        for rel in p.files:
            try:
                p.lines += (root / rel).read_bytes().count(b"\n")
            except OSError:
                pass
        projects.append(p)
    if not projects:
        log("no project could be fetched; nothing to check")
        return 2

    for p in projects:
        log(f"checking {p.label}: {len(p.files)} files ...")
        run_cli(p, root, args.python, args.jobs)
        log(f"  {len(p.findings)} findings, {len(p.errors)} files not checked (exit {p.returncode})")

    # --- the table
    codes = sorted({f["code"] for p in projects for f in p.findings})
    per_project = {p.label: collections.Counter(f["code"] for f in p.findings) for p in projects}
    totals = collections.Counter(f["code"] for p in projects for f in p.findings)
    files_per_code = {c: len({f["path"] for p in projects for f in p.findings if f["code"] == c}) for c in codes}
    name_w = max(len("project"), max(len(p.label) for p in projects), len("total")) + 2
    code_w = 7

    def table_row(label: str, files: int, lines: int, unchecked: int, counter: collections.Counter) -> str:
        cells = "".join(f"{counter.get(c, 0) or '.':>{code_w}}" for c in codes)
        return f"{label:<{name_w}}{files:>7}{lines:>11,}{unchecked:>7}{sum(counter.values()):>10}{cells}"

    print()
    print(f"gradguard check over real training code in {root}")
    print(f"  engine: gradguard {gradguard.__version__} at {revision}")
    print(f"  command, per project, from that directory: {args.python} -m gradguard check "
          f"--output-format json --jobs {args.jobs} <name>-<version>[/<subdir> ...]")
    print()
    head = "".join(f"{c:>{code_w}}" for c in codes)
    print(f"{'project':<{name_w}}{'files':>7}{'lines':>11}{'unchk':>7}{'findings':>10}{head}")
    for p in projects:
        print(table_row(p.label, len(p.files), p.lines, len(p.errors), per_project[p.label]))
    print(table_row("total", sum(len(p.files) for p in projects), sum(p.lines for p in projects),
                    sum(len(p.errors) for p in projects), totals))
    print("  (unchk: files the CLI reported it could not check, e.g. a syntax error; '.' is zero)")
    partial = [p for p in projects if PROJECTS[p.name][1]]
    for p in partial:
        print(f"  {p.label}: only {', '.join(t.split('/', 1)[1] + '/' for t in p.targets)} checked")
    print()
    print(f"findings per rule: {sum(totals.values())} in "
          f"{len({f['path'] for p in projects for f in p.findings})} files")
    for c in codes:
        print(f"  {c}: {totals[c]} finding{'s' if totals[c] != 1 else ''} in "
              f"{files_per_code[c]} file{'s' if files_per_code[c] != 1 else ''}")
    problems = [e for p in projects for e in p.errors]
    if problems:
        print()
        print(f"reported by the CLI on stderr ({len(problems)}):")
        for e in problems:
            print("  " + e)

    # --- the findings file
    flat = sorted((f for p in projects for f in p.findings), key=lambda f: (f["path"], f["line"], f["column"], f["code"]))
    sources = Sources(root)
    out_lines: list[str] = []
    for f in flat:
        out_lines.append(finding_line(f))
        if args.context > 0:
            out_lines.extend(context_block(f, sources, args.context))
            out_lines.append("")
    findings_out.parent.mkdir(parents=True, exist_ok=True)
    findings_out.write_text("".join(ln + "\n" for ln in out_lines))
    print()
    print(f"wrote {len(flat)} findings to {findings_out}" + (f" (each with {args.context} lines of context)" if args.context else ""))

    if args.json:
        data = {
            "corpus": str(root),
            "engine": {"version": gradguard.__version__, "revision": revision},
            "projects": [
                {
                    "name": p.name, "version": p.version, "targets": p.targets, "files": len(p.files),
                    "lines": p.lines, "cli_exit": p.returncode, "not_checked": p.errors,
                    "findings_per_rule": dict(sorted(per_project[p.label].items())),
                }
                for p in projects
            ],
            "findings_per_rule": {c: {"findings": totals[c], "files": files_per_code[c]} for c in codes},
            "findings": flat,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")
        log(f"wrote figures to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
