"""Results kept between runs: per file, keyed by its content, its settings and GradGuard itself.

One JSON file per run's cache directory (`<gradguard key>.json`, beside a
`.gitignore` of `*`), mapping each file's absolute path to the SHA-256 of its
bytes, the hash of the settings it was checked with, and the result. The
directory is `.gradguard_cache` in the project root above the first path
checked (the nearest directory holding a pyproject.toml or a .git, not one
that only configures its files with a gradguard.toml; else the current
directory), wherever the command runs; `--cache-dir` or GRADGUARD_CACHE_DIR
moves it. The GradGuard key hashes the version and every module of the
installed package (path, size, mtime), so an edited rule never serves old
results.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from gradguard import __version__
from gradguard.findings import Edit, Finding, Fix, Position, Range, Related, Safety, Severity
from gradguard.settings import Settings

DIRECTORY = ".gradguard_cache"
PROJECT_MARKERS = ("pyproject.toml", ".git")


def directory(paths, chosen: Optional[str] = None) -> str:
    """The cache directory of a run over `paths`: the one chosen, else the project root's."""
    if chosen:
        return os.path.abspath(chosen)
    return os.path.join(project_root(paths[0] if paths else "."), DIRECTORY)


def project_root(path: str) -> str:
    """The nearest directory at or above `path` that holds a project marker, else the current directory."""
    here = os.path.abspath(path)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    while True:
        if any(os.path.exists(os.path.join(here, marker)) for marker in PROJECT_MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return os.getcwd()
        here = parent


@lru_cache(maxsize=1)
def gradguard_key() -> str:
    package = Path(__file__).resolve().parent
    h = hashlib.sha256(__version__.encode())
    for path in sorted(package.rglob("*.py")):
        st = path.stat()
        h.update(f"{path.relative_to(package)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return f"{__version__}-{h.hexdigest()[:16]}"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def settings_hash(settings: Settings) -> str:
    fields = dataclasses.asdict(settings)
    text = json.dumps(fields, sort_keys=True, default=lambda v: v.value if hasattr(v, "value") else repr(v))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---------------------------------------------------------------- findings as plain data
def _range(r: Range) -> list[int]:
    return [r.start.line, r.start.column, r.end.line, r.end.column]


def _unrange(d: list[int]) -> Range:
    return Range(Position(d[0], d[1]), Position(d[2], d[3]))


def finding_data(f: Finding) -> list:
    return [
        f.code,
        f.name,
        f.severity.value,
        f.message,
        _range(f.range),
        [[_range(r.range), r.message, r.path] for r in f.related],
        [[x.title, x.safety.value, [[_range(e.range), e.new_text] for e in x.edits]] for x in f.fixes],
        list(f.tags),
    ]


def finding_from(d: list) -> Finding:
    code, name, severity, message, rng, related, fixes, tags = d
    return Finding(
        code,
        name,
        Severity(severity),
        message,
        _unrange(rng),
        tuple(Related(_unrange(r[0]), r[1], r[2]) for r in related),
        tuple(Fix(t, Safety(s), tuple(Edit(_unrange(r), text) for r, text in edits)) for t, s, edits in fixes),
        tuple(tags),
    )


# ---------------------------------------------------------------- the store
KEPT = 3  # results kept per file, each for other settings (the newest first): a project run puts three


class Cache:
    """One cache directory; `get` and `put` in memory, `save` writes it back if it changed. Each
    file's entry is a list of [content digest, settings key, payload], the newest first."""

    def __init__(self, directory: str):
        self.dir = directory
        self.file = os.path.join(self.dir, gradguard_key() + ".json")
        self.entries: dict[str, list] = {}
        self.changed = False
        with contextlib.suppress(OSError, ValueError):
            with open(self.file, encoding="utf-8") as f:
                loaded = json.load(f)
            if isinstance(loaded, dict):
                self.entries = loaded

    def get(self, path: str, digest: str, settings_key: str) -> Optional[Any]:
        for found, key, payload in self.entries.get(os.path.abspath(path), ()):
            if found == digest and key == settings_key:
                return payload
        return None

    def put(self, path: str, digest: str, settings_key: str, payload: Any) -> None:
        """Keep the result, and the last ones of the file's other settings: a project run analyses a
        file told nothing, then told what the other files say, and keeps the classes of other
        modules it works with (each run wants all three)."""
        path = os.path.abspath(path)
        others = [e for e in self.entries.get(path, ()) if e[1] != settings_key and e[0] == digest]
        self.entries[path] = [[digest, settings_key, payload], *others[: KEPT - 1]]
        self.changed = True

    def save(self) -> None:
        """Write atomically (a concurrent run's file is replaced whole, never mixed), dropping
        entries of deleted files and other GradGuard versions' files."""
        if not self.changed:
            return
        try:
            os.makedirs(self.dir, exist_ok=True)
            ignore = os.path.join(self.dir, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as f:
                    f.write("# Created by gradguard: the cache is not for version control.\n*\n")
            entries = {p: e for p, e in self.entries.items() if os.path.exists(p)}
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(entries, f, separators=(",", ":"))
                os.replace(tmp, self.file)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            for name in os.listdir(self.dir):
                if name.endswith(".json") and os.path.join(self.dir, name) != self.file:
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(self.dir, name))
        except OSError:
            pass  # a read-only tree: the run still works, just uncached
