"""Finding the files to check: named files as given, directories walked for `*.py` and `*.ipynb`.

While walking, each directory and file is held against the `exclude` and
`extend-exclude` of its own configuration (the nearest one above it). A file
named on the command line is always checked, unless `force_exclude` (what the
pre-commit hooks pass, since pre-commit names every staged file) says that
excluded means excluded there too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gradguard.config import DEFAULT_EXCLUDE, Config, Resolver

SUFFIXES = (".py", ".ipynb")
# Kept for callers that only know names: the defaults of `exclude` that are plain names.
SKIPPED_DIRS = frozenset(p for p in DEFAULT_EXCLUDE if "*" not in p)


@dataclass
class Discovered:
    files: list[str] = field(default_factory=list)  # display paths, sorted
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def discover(paths: Iterable[str], resolver: Optional[Resolver] = None, *, force_exclude: bool = False) -> Discovered:
    """Files under `paths`, sorted and without duplicates; a named file is included unless
    `force_exclude` and its configuration excludes it (or a directory above it)."""
    resolver = resolver or Resolver()
    found = Discovered()
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            found.files.append(path)

    for arg in paths:
        arg = os.path.normpath(arg)
        if force_exclude and os.path.exists(arg) and resolver.for_path(arg).is_excluded(arg, check_parents=True):
            continue
        if os.path.isdir(arg):
            for path in _walk(arg, resolver, found.errors):
                add(path)
        elif os.path.exists(arg):
            add(arg)
        else:
            found.errors.append((arg, "No such file or directory"))
    found.files.sort(key=lambda p: Path(p).parts)
    return found


def _walk(root: str, resolver: Resolver, errors: list[tuple[str, str]]) -> Iterable[str]:
    def on_error(e: OSError) -> None:
        errors.append((os.path.normpath(e.filename or root), e.strerror or str(e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
        config = resolver.for_dir(os.path.abspath(dirpath))
        dirnames[:] = [d for d in dirnames if not is_skipped_dir(os.path.join(dirpath, d), config)]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if name.endswith(SUFFIXES) and not config.is_excluded(path):
                yield os.path.normpath(path)


def is_skipped_dir(path: str, config: Optional[Config] = None) -> bool:
    if (config or Config(root=os.getcwd())).is_excluded(path):
        return True
    return is_environment(path)


def is_environment(path: str) -> bool:
    """A virtual environment under any name (`env/` is also a common package name, so look inside)."""
    return os.path.exists(os.path.join(path, "pyvenv.cfg")) or os.path.isdir(os.path.join(path, "conda-meta"))
