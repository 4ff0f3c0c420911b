"""The classes a file works with that another module of its project defines: the ones it imports
by name (`from models import Net`), and those of the modules that import it (train.py's `Net`,
for the `evaluate(model, ...)` of an engine.py it imports). A file is analysed with their code
after its own (Settings.neighbours), so that what the engine knows of a class of the file - an
nn.Module with weights, what its forward and methods return, the members that tell an instance
of it - it knows of these too; findings inside them belong to their own file and are dropped.

Read with `ast` from the text, never imported or run.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Callable, Optional

from gradguard.project.index import ProjectIndex

MAX_CLASSES = 12  # a file that imports half a model library learns nothing more from the rest


@dataclass(frozen=True)
class Shape:
    """One module's top-level classes and imports, as source segments (first line 1-based)."""

    classes: tuple = ()  # (name, first line, code, names of its bases), decorators included
    imports: tuple = ()  # (names bound, first line, code): absolute imports only
    bound: frozenset = frozenset()  # every name the module binds at its top level


def shape(text: str) -> Shape:
    if "class" not in text:
        return Shape()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return Shape()
    lines = text.splitlines()
    classes, imports, bound = [], [], set()
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        code = "\n".join(lines[first - 1:node.end_lineno])
        if isinstance(node, ast.ClassDef):
            bases = tuple(n.id for b in node.bases for n in ast.walk(b) if isinstance(n, ast.Name))
            classes.append((node.name, first, code, bases))
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = frozenset((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            if isinstance(node, ast.Import) or node.level == 0:
                imports.append((names, first, code))
            bound |= names
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return Shape(tuple(classes), tuple(imports), frozenset(bound))


def neighbours(index: ProjectIndex, path: str, shape_of: Callable[[str], Optional[Shape]]) -> tuple:
    """((where, first line there, code), ...) for Settings.neighbours: the classes of other modules of
    the project that `path` imports by name, with the bases their module defines and the imports
    their code reads, then the classes of the modules that import `path`; none whose name the
    file binds itself (other than by importing that very class). `shape_of(path)`: a module's Shape."""
    path = os.path.abspath(path)
    imports = index.modules[path].imports
    wanted: dict = {}  # path -> class names, in order
    for local, qualname in imports.items():
        found = index.resolve(path, qualname)
        if found is not None and found[0] != path and found[1] == local:
            wanted.setdefault(found[0], []).append(local)
    for other_path, other in index.modules.items():
        if other_path != path and other_path not in wanted and any(
                (found := index.resolve(other_path, q)) is not None and found[0] == path for q in other.imports.values()):
            wanted[other_path] = None  # all its classes
    mine = shape_of(path) or Shape()
    taken = set(mine.bound)
    out = []
    classes = 0
    for other_path, names in wanted.items():
        other = shape_of(other_path)
        if other is None or not other.classes or classes >= MAX_CLASSES:
            continue
        defined = {c[0]: c for c in other.classes}
        if names is None:
            names = [n for n in defined if n not in taken]
        names = [n for n in names if n in defined]
        bases = [b for n in names for b in defined[n][3] if b in defined]
        names = [n for n in dict.fromkeys([*bases, *names])  # a base before the classes deriving from it
                 if n not in taken or n in imports][:MAX_CLASSES - classes]
        if not names:
            continue
        where = os.path.relpath(other_path, index.root)
        for bound, first, code in other.imports:
            if bound.isdisjoint(taken):
                out.append((where, first, code))
                taken |= bound
        for name in names:
            out.append((where, defined[name][1], defined[name][2]))
            taken.add(name)
        classes += len(names)
    return tuple(out)
