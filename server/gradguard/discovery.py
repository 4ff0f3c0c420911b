"""Finding the files to check: named files as given, directories walked for `*.py`."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

# Directories never worth walking into (hidden ones, such as .git and .tox, are skipped too).
SKIPPED_DIRS = frozenset(
    {".venv", "venv", "node_modules", "__pycache__", "__pypackages__", "site-packages", "build", "dist"}
)


@dataclass
class Discovered:
    files: list[str] = field(default_factory=list)  # display paths, sorted
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def discover(paths: Iterable[str]) -> Discovered:
    """Files under `paths`, sorted and without duplicates; a named file is always included."""
    found = Discovered()
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            found.files.append(path)

    for arg in paths:
        arg = os.path.normpath(arg)
        if os.path.isdir(arg):
            for path in _walk(arg, found.errors):
                add(path)
        elif os.path.exists(arg):
            add(arg)
        else:
            found.errors.append((arg, "No such file or directory"))
    found.files.sort(key=lambda p: Path(p).parts)
    return found


def _walk(root: str, errors: list[tuple[str, str]]) -> Iterable[str]:
    def on_error(e: OSError) -> None:
        errors.append((os.path.normpath(e.filename or root), e.strerror or str(e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
        dirnames[:] = [d for d in dirnames if not is_skipped_dir(os.path.join(dirpath, d))]
        for name in filenames:
            if name.endswith(".py"):
                yield os.path.normpath(os.path.join(dirpath, name))


def is_skipped_dir(path: str) -> bool:
    name = os.path.basename(path)
    if name.startswith(".") or name in SKIPPED_DIRS:
        return True
    return is_environment(path)


def is_environment(path: str) -> bool:
    """A virtual environment under any name (`env/` is also a common package name, so look inside)."""
    return os.path.exists(os.path.join(path, "pyvenv.cfg")) or os.path.isdir(os.path.join(path, "conda-meta"))
