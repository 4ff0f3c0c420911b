"""Project-wide analysis: a file is analysed knowing how the rest of its project calls it.

- index.py    which files make up a project, what each defines, where an import leads (text only)
- callers.py  the grad mode every other file calls a function in, where they agree
- neighbours.py  the classes of other modules a file works with, whose code it is analysed with

The front end analyses every file once, collecting the calls each makes of the others
(`analyze(export_calls=True)`), then analyses again, with `Settings.outside`, the files whose
findings the other files' calls may change.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Callable, Optional

from gradguard.project.index import ProjectIndex, scan
from gradguard.settings import Settings

# What marks the top of a project (the cache's markers, and the packaging files)
MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_WORD = re.compile(r"\w+")
_CALLED = re.compile(r"(\w+)\s*\(")


def told_settings(settings: Settings, outside: Optional[dict], imported: Optional[dict],
                  neighbours: Optional[tuple]) -> Settings:
    """`settings` with what the project says of a file (`gradguard check`'s and the server's): how
    the others call it (symbol -> engine.outside.Outside), what its callees in other files do
    (target -> Keeps | Builds), the classes of other modules it works with (Settings.neighbours)."""
    return replace(settings, outside=tuple(sorted(outside.items())) if outside else (),
                   imported=tuple(sorted(imported.items())) if imported else (), neighbours=neighbours or ())


def root_of(path: str) -> Optional[str]:
    """The nearest directory at or above `path` holding a project marker, else None."""
    here = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.exists(os.path.join(here, m)) for m in MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def group(paths: list[str]) -> dict[str, list[str]]:
    """Root -> the given files under it. Files under no project marker make one project whose root
    is the directory they share (what was pointed at: an unpacked package, a folder of scripts)."""
    groups: dict = {}
    loose = []
    for path in paths:
        root = root_of(path)
        if root is None:
            loose.append(path)
        else:
            groups.setdefault(root, []).append(path)
    if loose:
        shared = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in loose])
        groups.setdefault(shared, []).extend(loose)
    return groups


def read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def callers_beyond(root: str, given: list[str], members: list[str], texts: dict[str, str]) -> list[str]:
    """The files of the project not given that may call what the given files define: they are
    analysed for their calls, not reported (`gradguard check models/` still hears train.py).
    Such a file names a module-level function or class of a given file, and the module or a
    package above it (an import needs both). `texts`: absolute path -> text, every file's."""
    names: set = set()
    modules: set = set()
    for path in given:
        if path.endswith(".py"):
            names.update(s for s in scan(path, texts[os.path.abspath(path)]).defines if "." not in s)
            rel = os.path.relpath(os.path.abspath(path), root)
            modules.update(os.path.splitext(rel)[0].split(os.sep))
    if not names:
        return []
    taken = {os.path.abspath(p) for p in given}
    out = []
    for p in members:
        if os.path.abspath(p) not in taken:
            words = set(_WORD.findall(texts[os.path.abspath(p)]))
            if not names.isdisjoint(words) and not modules.isdisjoint(words):
                out.append(p)
    return out


def torch_code_users(index: ProjectIndex, torch: Callable[[str], bool], called: Callable[[str], set]) -> set[str]:
    """The files of the project (absolute paths) that never mention torch but call a name they import
    from one of its modules that does: a script that builds the project's model and hands it to the
    project's training function (`from models import Net; fit(Net(), data)`). What they pass is
    analysed as in a file that imports torch (Settings.torch_code); the classes of other modules are
    not joined to them (project/neighbours.py: a package's `__init__.py` re-exports hundreds).
    `torch(path)`: does the file mention torch; `called(path)`: the names it calls (`called_names`)."""
    out = set()
    for path, module in index.modules.items():
        if not module.imports or torch(path):
            continue
        calls = called(path)
        for local, qualname in module.imports.items():
            if local not in calls:
                continue  # (a re-export: `from .net import Net` in models/__init__.py)
            found = index.resolve(path, qualname)
            if found is not None and found[0] != path and torch(found[0]):
                out.add(path)
                break
    return out


def calls_imported(text: str) -> bool:
    """Does a text call a name it imports with `from ... import` (what `torch_code_users` asks of a
    file without torch, before the index says where the name leads)?"""
    imported = scan("", text).imports
    return bool(imported) and not called_names(text).isdisjoint(imported)


def called_names(text: str) -> set:
    """Every `name(` and `.name(` of a text: what a file the engine does not analyse may call."""
    return set(_CALLED.findall(text))


def index(root: str, texts: dict[str, str]) -> ProjectIndex:
    """The index of the project's Python modules among `texts` (path -> text; notebooks call,
    nobody imports them)."""
    return ProjectIndex.from_texts(root, {p: t for p, t in texts.items() if p.endswith(".py")})
