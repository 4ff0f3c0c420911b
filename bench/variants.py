#!/usr/bin/env python
"""Recall and false positives on semantics-preserving variants of the bug corpus (tests/corpus).

    .venv/bin/python bench/variants.py                    # every transformation
    .venv/bin/python bench/variants.py --only rename --verbose
    .venv/bin/python bench/variants.py --json out.json --write /tmp/variants

Every corpus program is transformed by each transformation of bench/transforms/ (rename the
file's identifiers, extract the labelled statement into a helper defined before or after its
caller, route its value through a container, move its function into a method, turn the producer
of its loop into a generator, insert a neutral tensor op after a model call, reverse the order of
the file's definitions). A variant is kept only when the corpus oracle, running it with real
PyTorch in a child process, still proves its label: a bug's effect still there, a look-alike's
still absent. Every other variant is counted as discarded, with its reason.

Kept variants are checked as bench/corpus.py checks the originals (default settings, `observe()`
stripped): a bug variant is found when an error or warning of its label's codes sits on the line
the labelled statement moved to (or on the call that now stands for it: an extracted helper's
call, the loop consuming a generator); a look-alike variant counts a false positive for any error
or warning. Recall on the variants is set beside the recall of the same original programs (each
original counted once per kept variant of it). For `reverse`, every program's findings are
compared with its original's, lines mapped back.

Oracle verdicts are cached by the sha256 of the variant's source (and of oracle.py and the torch
version) in bench/.variants-cache/: a re-run only analyses. Exit status 0.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import hashlib
import importlib.metadata
import importlib.util
import json
import multiprocessing
import multiprocessing.connection
import os
import re
import sys
import time
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests"), str(HERE)]

from corpus import oracle  # noqa: E402
from transforms import container, extract, generator, method, module, neutral, rename, reverse  # noqa: E402
from transforms.subject import NotApplicable, Outcome, Subject, finish, finish_package  # noqa: E402

from gradguard.settings import Settings  # noqa: E402

TRANSFORMS = {
    "rename": rename.variants,
    "extract-before": extract.before,
    "extract-after": extract.after,
    "container": container.variants,
    "method": method.variants,
    "generator": generator.variants,
    "neutral-op": neutral.variants,
    "reverse": reverse.variants,
    "module": module.variants,
}
CACHE = HERE / ".variants-cache"
WORKERS = 2
TIMEOUT = 60.0  # seconds for one variant's run (a corpus program takes well under one)
SEVERE = ("error", "warning")


def _bench_corpus():
    """bench/corpus.py, which judges the originals (its module name, `corpus`, is the corpus package's)."""
    spec = importlib.util.spec_from_file_location("bench_corpus", HERE / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclasses.dataclass
class Variant:
    program: oracle.Program  # the original
    transform: str
    kind: str = ""
    source: Optional[str] = None
    lines: frozenset = frozenset()  # where a finding counts for a bug's label
    origin: Optional[dict] = None  # variant line -> original line (reverse)
    discarded: Optional[str] = None  # why not kept: "not applicable", "observe() raised", ...
    detail: str = ""
    found: Optional[bool] = None
    findings: list = dataclasses.field(default_factory=list)
    modules: Optional[dict] = None  # other modules of its package (module: the program split): name -> source
    anchor_in: str = ""  # the module the labelled statement went to ("": the program itself)

    @property
    def name(self) -> str:
        return f"{self.transform}:{self.kind}" if self.kind else self.transform

    @property
    def as_program(self) -> oracle.Program:
        return dataclasses.replace(self.program, source=self.source)


# ---------------------------------------------------------------------- generation
def generate(programs, names) -> list[Variant]:
    out = []
    for p in programs:
        try:
            subject = Subject(p)
        except NotApplicable as e:
            out += [Variant(p, n, discarded="not applicable", detail=str(e)) for n in names]
            continue
        for name in names:
            try:
                outcomes = TRANSFORMS[name](subject)
            except NotApplicable as e:
                outcomes = [Outcome("", reason=str(e))]
            for o in outcomes:
                v = Variant(p, name, o.kind, origin=o.origin)
                if o.code is None:
                    v.discarded, v.detail = "not applicable", o.reason
                else:
                    try:
                        if o.modules:
                            v.source, v.modules, v.anchor_in, v.lines = finish_package(o.code, o.modules, p)
                            for module_name, text in v.modules.items():
                                compile(text, f"{module_name}.py", "exec")
                        else:
                            v.source, v.lines = finish(o.code, p)
                        compile(v.source, p.name, "exec")
                    except ValueError as e:
                        v.discarded, v.detail = "label lost", str(e)
                    except SyntaxError as e:
                        v.discarded, v.detail = "did not parse", str(e)
                out.append(v)
    return out


# ---------------------------------------------------------------------- the oracle, in child processes
def _cache_key(source: str, modules: Optional[dict] = None) -> str:
    salt = (HERE.parent / "tests" / "corpus" / "oracle.py").read_bytes() + importlib.metadata.version("torch").encode()
    for name, text in sorted((modules or {}).items()):
        source += f"\n# module {name}\n{text}"
    return hashlib.sha256(hashlib.sha256(salt).digest() + source.encode()).hexdigest()


def _child(program: oracle.Program, conn, modules: Optional[dict] = None) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    if modules:  # the program's package: its other modules importable beside it
        import tempfile

        where = tempfile.mkdtemp(prefix="gg-variant-")
        for name, text in modules.items():
            Path(where, f"{name}.py").write_text(text, encoding="utf-8")
        sys.path.insert(0, where)
    try:
        obs = oracle.run(program)
        try:
            effect = bool(oracle.present(program, obs))
        except Exception:  # noqa: BLE001 - observe() failed before making what the checker reads
            effect = None
        conn.send({"error": obs["error"], "effect": effect})
    except BaseException as e:  # noqa: BLE001 - the module itself raised at import
        conn.send({"error": f"{type(e).__name__}: {e}", "effect": None})


def run_all(variants: list[Variant], cache: Path = CACHE, workers: int = WORKERS, timeout: float = TIMEOUT,
            progress=None) -> int:
    """Run every generated variant's observe() (verdicts cached; a timeout is not) and discard those
    that no longer prove their label. The number of variants actually run."""
    todo = [v for v in variants if v.source is not None and v.discarded is None]
    results, pending = {}, []
    for v in todo:
        key = _cache_key(v.source, v.modules)
        path = cache / key[:2] / f"{key}.json"
        if path.exists():
            results[id(v)] = json.loads(path.read_text())
        else:
            pending.append((v, path))
    if pending:
        import torch

        threads = torch.get_num_threads()
        try:
            _warm_up()
            results.update(_run_children(pending, workers, timeout, progress))
        finally:
            torch.set_num_threads(threads)
    for v in todo:
        v.discarded, v.detail = verdict(v.program, results[id(v)])
    return len(pending)


def _run_children(pending: list, workers: int, timeout: float, progress) -> dict:
    """id(variant) -> its result, running each in a child forked from here, `workers` at a time."""
    ctx = multiprocessing.get_context("fork")
    results, running, queue = {}, {}, list(reversed(pending))
    while queue or running:
        while queue and len(running) < workers:
            v, path = queue.pop()
            reader, writer = ctx.Pipe(duplex=False)
            child = ctx.Process(target=_child, args=(v.as_program, writer, v.modules), daemon=True)
            child.start()
            writer.close()
            running[reader] = (child, v, path, time.monotonic())
        for reader in multiprocessing.connection.wait(list(running), timeout=1.0):
            child, v, path, _ = running.pop(reader)
            try:
                result = reader.recv()
            except EOFError:
                result = {"error": f"the child died (exit {child.exitcode})", "effect": None}
            child.join()
            reader.close()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(result))
            results[id(v)] = result
            if progress:
                progress(len(results), len(pending))
        for reader, (child, v, path, started) in list(running.items()):
            if time.monotonic() - started > timeout:
                child.kill()
                child.join()
                reader.close()
                del running[reader]
                results[id(v)] = {"error": None, "effect": None, "timeout": True}
    return results


def _warm_up() -> None:
    """Run a training step once here, single-threaded, before forking: every child inherits what
    PyTorch loads lazily on its first step (seconds per child otherwise), and no thread pool that a
    forked child could not use."""
    import numpy  # noqa: F401 - imported here once, for every child
    import torch

    torch.set_num_threads(1)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    for optimizer in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW):
        opt = optimizer(net.parameters(), lr=0.1)
        loss = torch.nn.functional.cross_entropy(net(torch.randn(3, 4)), torch.tensor([0, 1, 1]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    loss.detach().numpy()


def verdict(program: oracle.Program, result: dict) -> tuple[Optional[str], str]:
    """(why the variant is discarded, or None when it still proves its label; the detail)."""
    error, effect = result.get("error"), result.get("effect")
    if result.get("timeout"):
        return "timeout", ""
    if error and not (program.effect == "raises" and program.argument in error):
        return "observe() raised", error
    if effect is None:
        return "observe() raised", error or "the checker could not read the observations"
    if effect != (not program.lookalike):
        return ("effect lost" if effect is False else "effect gained"), ""
    return None, ""


# ---------------------------------------------------------------------- checking
def judge(variants: list[Variant], originals: dict) -> None:
    """Check every kept variant with GradGuard; `originals` maps a program's name to its Variant."""
    findings_of = _bench_corpus().findings_of
    settings = Settings()
    for v in [*originals.values(), *variants]:
        if v.discarded is not None or v.source is None or v.found is not None:
            continue
        if v.modules:
            v.findings = [f for f in _package_findings(v) if f.severity.value in SEVERE]
        else:
            v.findings = [f for f in findings_of(v.as_program, settings) if f.severity.value in SEVERE]
        if v.program.lookalike:
            v.found = bool(v.findings)  # for a look-alike: a false positive
        else:
            v.found = any(f.code in v.program.codes and f.range.start.line in v.lines for f in v.findings)


def _package_findings(v: Variant) -> list:
    """A split program's findings as `gradguard check` gives them on its package (project-wide
    analysis): those of the module holding the labelled statement, or, for a look-alike, of all."""
    import tempfile

    from gradguard import cli
    from gradguard.config import Resolver

    with tempfile.TemporaryDirectory(prefix="gg-variant-") as where:
        root = Path(where)
        (root / "pyproject.toml").write_text('[project]\nname = "variant"\n')
        files = {"": root / "program.py", **{name: root / f"{name}.py" for name in v.modules}}
        files[""].write_text(oracle.stripped(v.source), encoding="utf-8")
        for name, text in v.modules.items():
            files[name].write_text(text, encoding="utf-8")
        resolver = Resolver(cwd=where)
        tasks = [(str(p), resolver.for_path(str(p)).settings_for(str(p)), None) for p in files.values()]
        results = {r.path: r.findings for r in cli.run_project(tasks, cli.Job(), 1, resolver)}
    if v.program.lookalike:
        return [f for found in results.values() for f in found]
    return results[str(files[v.anchor_in])]


def original(program: oracle.Program) -> Variant:
    return Variant(program, "original", source=program.source,
                   lines=frozenset({program.line}) if program.line is not None else frozenset())


def same_findings(v: Variant, o: Variant) -> bool:
    """Whether a reversed variant reports what its original reports, lines mapped back."""
    def back(line):
        return v.origin.get(line, line)

    def keyed(findings, mapped):
        def message(text):  # "line 12", "lines 48, 51 and 60": each number mapped back
            return re.sub(r"lines? \d+(?:(?:, | and )\d+)*", lambda m: re.sub(
                r"\d+", lambda n: str(back(int(n.group())) if mapped else n.group()), m.group()), text)
        return sorted((f.code, back(f.range.start.line) if mapped else f.range.start.line, f.range.start.column,
                       message(f.message)) for f in findings)

    return keyed(v.findings, True) == keyed(o.findings, False)


# ---------------------------------------------------------------------- report
def figures(variants: list[Variant], originals: dict, names) -> dict:
    out = {}
    for name in names:
        mine = [v for v in variants if v.transform == name]
        kept = [v for v in mine if v.discarded is None]
        bugs = [v for v in kept if not v.program.lookalike]
        looks = [v for v in kept if v.program.lookalike]
        found = sum(v.found for v in bugs)
        base = sum(originals[v.program.name].found for v in bugs)
        row = {
            "variants": sum(v.source is not None for v in mine),
            "kept": len(kept),
            "discarded": dict(collections.Counter(v.discarded for v in mine
                                                  if v.discarded not in (None, "not applicable"))),
            "not applicable": dict(collections.Counter(v.detail for v in mine if v.discarded == "not applicable")),
            "bug variants": len(bugs),
            "found": found,
            "originals found": base,
            "lost": sum(originals[v.program.name].found and not v.found for v in bugs),
            "gained": sum(v.found and not originals[v.program.name].found for v in bugs),
            "look-alike variants": len(looks),
            "false positives": sum(v.found for v in looks),
            "kinds": {},
        }
        for kind in sorted({v.kind for v in mine if v.kind}):
            kb = [v for v in bugs if v.kind == kind]
            row["kinds"][kind] = {"kept": sum(v.kind == kind for v in kept), "bug variants": len(kb),
                                  "found": sum(v.found for v in kb),
                                  "originals found": sum(originals[v.program.name].found for v in kb),
                                  "look-alike variants": sum(v.kind == kind for v in looks),
                                  "false positives": sum(v.found for v in looks if v.kind == kind)}
        if name == "reverse":
            differ = [v.program.name for v in kept if not same_findings(v, originals[v.program.name])]
            row["reverse"] = {"compared": len(kept), "differ": differ}
        out[name] = row
    return out


def _pct(a, b):
    return f"{a / b:.0%}" if b else "-"


def _ratio(found, n, base):
    return f"{(found / n) / (base / n):.2f}" if n and base else "-"


def _rate(fp, n):
    return f"1/{n / fp:.0f}" if fp else ("0" if n else "-")


def table(rows: dict) -> list[str]:
    head = (f"{'transformation':22} {'made':>5} {'kept':>5} {'disc':>5} {'n/a':>5} | {'bugs':>5} {'found':>5} "
            f"{'recall':>6} {'orig':>6} {'ratio':>5} {'lost':>5} {'gain':>5} | {'looks':>5} {'FP':>4} {'FP rate':>7}")
    lines = [head]

    def line(label, r, made="", disc="", na=""):
        return (f"{label:22} {made:>5} {r['kept']:>5} {disc:>5} {na:>5} | {r['bug variants']:>5} {r['found']:>5} "
                f"{_pct(r['found'], r['bug variants']):>6} {_pct(r['originals found'], r['bug variants']):>6} "
                f"{_ratio(r['found'], r['bug variants'], r['originals found']):>5} {r.get('lost', ''):>5} "
                f"{r.get('gained', ''):>5} | {r['look-alike variants']:>5} {r['false positives']:>4} "
                f"{_rate(r['false positives'], r['look-alike variants']):>7}")

    for name, r in rows.items():
        lines.append(line(name, r, r["variants"], sum(r["discarded"].values()), sum(r["not applicable"].values())))
        for kind, k in r["kinds"].items():
            lines.append(line(f"  {kind}", k))
    return lines


def reasons(rows: dict) -> list[str]:
    out = []
    for name, r in rows.items():
        parts = [f"{why} {n}" for why, n in sorted(r["discarded"].items(), key=lambda x: -x[1])]
        out.append(f"  {name}: discarded: {', '.join(parts) or 'none'}")
        parts = [f"{why} {n}" for why, n in sorted(r["not applicable"].items(), key=lambda x: -x[1])]
        out.append(f"  {' ' * len(name)}  not applicable: {', '.join(parts) or 'none'}")
    return out


def _listed(findings, origin=None) -> str:
    """`GG101:12` for each finding; with `origin`, at the original's line (`GG101:12<-20`)."""
    def one(f):
        line = f.range.start.line
        return f"{f.code}:{origin.get(line, line)}<-{line}" if origin else f"{f.code}:{line}"
    return ", ".join(one(f) for f in findings) or "nothing"


def converging(variants: list[Variant]) -> str:
    """Fix convergence (every safe fix applied parses, adds no finding, and a second --fix changes
    nothing) on every kept variant's program, as `--fix` sees it (a split program's main file)."""
    sys.path.insert(0, str(HERE.parent / "tests" / "robustness"))
    from properties import check_convergence

    kept = [v for v in variants if v.discarded is None and v.source is not None]
    failed = []
    for v in kept:
        try:
            check_convergence(oracle.stripped(v.source), Settings())
        except AssertionError as e:
            failed.append(f"  {v.name} {v.program.name}: {str(e).splitlines()[0]}")
        except Exception as e:  # noqa: BLE001 - a fix that broke the file raises from the parse
            failed.append(f"  {v.name} {v.program.name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return "\n".join([f"fix convergence: {len(kept)} variants, {len(failed)} failed", *failed])


def write(variants: list[Variant], root: Path) -> None:
    for v in variants:
        if v.discarded is None:
            path = root / v.name.replace(":", "-") / v.program.cls / f"{v.program.path.stem}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(v.source, encoding="utf-8")
            for name, text in (v.modules or {}).items():
                (path.parent / f"{path.stem}.{name}.py").write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=oracle.HERE, help="a corpus directory (GGnnn/*.py)")
    parser.add_argument("--only", choices=list(TRANSFORMS), help="one transformation")
    parser.add_argument("--verbose", action="store_true", help="list every miss, false positive and discard")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--write", type=Path, help="write the kept variants under this directory")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where oracle verdicts are cached")
    parser.add_argument("--fixes", action="store_true",
                        help="also check fix convergence on every kept variant (tests/robustness/properties.py)")
    args = parser.parse_args(argv)
    names = [args.only] if args.only else list(TRANSFORMS)
    programs = oracle.programs(args.root)
    started = time.monotonic()
    variants = generate(programs, names)
    made = sum(v.source is not None for v in variants)
    print(f"generated {made} variants of {len(programs)} programs", file=sys.stderr)
    ran = run_all(variants, args.cache,
                  progress=lambda i, n: print(f"ran {i} of {n}", file=sys.stderr) if i % 100 == 0 else None)
    originals = {p.name: original(p) for p in programs}
    judge(variants, originals)
    rows = figures(variants, originals, names)
    bugs = [o for o in originals.values() if not o.program.lookalike]
    print(f"== variants of {len(programs)} programs ({len(bugs)} bugs, {len(programs) - len(bugs)} look-alikes), "
          f"default settings; originals: {sum(o.found for o in bugs)} of {len(bugs)} bugs found, "
          f"{sum(o.found for o in originals.values() if o.program.lookalike)} false positives")
    print("\n".join(table(rows)))
    print("reasons:")
    print("\n".join(reasons(rows)))
    if "reverse" in rows:
        r = rows["reverse"]["reverse"]
        print(f"reverse: findings identical to the original's on {r['compared'] - len(r['differ'])} of "
              f"{r['compared']} programs; differ on {len(r['differ'])}{':' if r['differ'] else ''}")
        for v in variants:
            if v.transform == "reverse" and v.program.name in r["differ"]:
                print(f"  {v.program.name}: original {_listed(originals[v.program.name].findings)}; "
                      f"reversed {_listed(v.findings, v.origin)}")
    if args.verbose:
        for v in variants:
            o = originals[v.program.name]
            got = ", ".join(f"{f.code}:{f.range.start.line}" for f in v.findings) or "nothing"
            if v.discarded not in (None, "not applicable"):
                print(f"  discarded {v.name} {v.program.name}: {v.discarded} {v.detail[:160]}")
            elif v.discarded is None and not v.program.lookalike and not v.found:
                was = "found" if o.found else "missed"
                print(f"  missed {v.name} {v.program.name} ({'|'.join(v.program.codes)}:"
                      f"{','.join(map(str, sorted(v.lines)))}; original {was}); reported: {got}")
            elif v.discarded is None and v.program.lookalike and v.found:
                print(f"  false positive {v.name} {v.program.name}: {got}")
    if args.fixes:
        print(converging(variants))
    print(f"({ran} variants run, the rest cached; {time.monotonic() - started:.0f} s)", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"originals": {"bugs": len(bugs), "found": sum(o.found for o in bugs)},
                                         "transformations": rows}, indent=2))
    if args.write:
        write(variants, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
