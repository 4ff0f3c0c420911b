"""Finding the files to check: named files as given, directories walked for what `include` matches.

While walking, each directory and file is held against the `include`, `exclude`
and `extend-exclude` of its own configuration (the nearest one above it); a
file without an extension whose first line is a Python shebang
(`#!/usr/bin/env python3`) is a script and is checked too, as pyright does. A
file named on the command line is always checked, unless `force_exclude` (what
the pre-commit hooks pass, since pre-commit names every staged file) says that
excluded means excluded there too. What a walk passes over, and why, is kept
for `check -v`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gradguard.config import Config, Resolver

# `#!/usr/bin/env python3`, `#!/usr/bin/python3.11 -u`, `#! /usr/bin/env -S python -X dev`
SHEBANG = re.compile(rb"#![^\n]*\bpython[0-9.]*(?:\s|$)")
# Python by their name: -v says why a walk skips one (other files with an extension are not mentioned).
CANDIDATE_SUFFIXES = (".py", ".ipynb", ".pyw")


@dataclass
class Discovered:
    files: list[str] = field(default_factory=list)  # display paths, sorted
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why), in walk order: for -v


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
        if force_exclude and os.path.exists(arg):
            why = resolver.for_path(arg).excluded_by(arg, check_parents=True)
            if why is not None:
                found.skipped.append((arg, f"matches {why}, --force-exclude"))
                continue
        if os.path.isdir(arg):
            for path in _walk(arg, resolver, found):
                add(path)
        elif os.path.exists(arg):
            add(arg)
        else:
            found.errors.append((arg, "No such file or directory"))
    found.files.sort(key=lambda p: Path(p).parts)
    return found


def _walk(root: str, resolver: Resolver, found: Discovered) -> Iterable[str]:
    def on_error(e: OSError) -> None:
        found.errors.append((os.path.normpath(e.filename or root), e.strerror or str(e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
        config = resolver.for_dir(os.path.abspath(dirpath))
        kept = []
        for name in sorted(dirnames):
            path = os.path.join(dirpath, name)
            why = skipped_dir(path, config)
            if why is None:
                kept.append(name)
            else:
                found.skipped.append((os.path.normpath(path) + os.sep, why))
        dirnames[:] = kept
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            why = skipped_file(path, config)
            if why is None:
                yield os.path.normpath(path)
            elif why:
                found.skipped.append((os.path.normpath(path), why))


def skipped_dir(path: str, config: Optional[Config] = None) -> Optional[str]:
    """Why a walk does not enter the directory, or None."""
    why = (config or Config(root=os.getcwd())).excluded_by(path)
    if why is not None:
        return f"matches {why}"
    return "a virtual environment" if is_environment(path) else None


def skipped_file(path: str, config: Config, *, check_parents: bool = False) -> Optional[str]:
    """None for a file a walk checks; else why not ("" for a file that is plainly not Python).
    With `check_parents`, also whether a directory above it (up to the configuration's) is excluded."""
    suffix = os.path.splitext(path)[1]
    if config.includes(path) or (not suffix and is_script(path)):
        why = config.excluded_by(path, check_parents=check_parents)
        return None if why is None else f"matches {why}"
    if suffix in CANDIDATE_SUFFIXES:
        return "not matched by include"
    return "no extension and no Python shebang" if not suffix else ""


def is_script(path: str) -> bool:
    """An extensionless file whose first line names Python (`#!/usr/bin/env python3`)."""
    try:
        with open(path, "rb") as f:
            head = f.readline(256)
    except OSError:
        return False
    return SHEBANG.match(head.lstrip(b"\xef\xbb\xbf")) is not None


def is_environment(path: str) -> bool:
    """A virtual environment under any name (`env/` is also a common package name, so look inside)."""
    return os.path.exists(os.path.join(path, "pyvenv.cfg")) or os.path.isdir(os.path.join(path, "conda-meta"))
