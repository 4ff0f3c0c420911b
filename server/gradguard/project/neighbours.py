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
from typing import Optional

from gradguard.project.index import ProjectIndex

MAX_CLASSES = 12  # a file that imports half a model library learns nothing more from the rest


class _Module:
    """One module's top-level classes and imports, as source segments."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.classes: dict = {}  # name -> (first line, last line), 1-based, decorators included
        self.imports: list = []  # (names bound, first line, last line)
        self.bound: set = set()  # every name the module binds at its top level
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return
        for node in tree.body:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = (first, node.end_lineno)
                self.bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    self.imports.append((frozenset(names), first, node.end_lineno))
                elif isinstance(node, ast.Import):
                    self.imports.append((frozenset(names), first, node.end_lineno))
                self.bound |= names
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.bound.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                self.bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        self.base_names = {name: {n.id for b in c.bases for n in ast.walk(b) if isinstance(n, ast.Name)}
                           for c in tree.body if isinstance(c, ast.ClassDef) for name in [c.name]}

    def segment(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first - 1:last])


def neighbours(index: ProjectIndex, path: str, texts: dict[str, str]) -> tuple:
    """((where, first line there, code), ...) for Settings.neighbours: the classes of other modules of
    the project that `path` imports by name, with the bases their module defines and the imports
    their code reads, then the classes of the modules that import `path`; none whose name the
    file binds itself (other than by importing that very class)."""
    path = os.path.abspath(path)
    parsed: dict = {}

    def module(p: str) -> Optional[_Module]:
        if p not in parsed:
            text = texts.get(p)
            parsed[p] = _Module(text) if text is not None and "class" in text else None
        return parsed[p]

    mine = module(path) or _Module(texts.get(path, ""))
    wanted: dict = {}  # path -> class names, in order
    for local, qualname in index.modules[path].imports.items():
        found = index.resolve(path, qualname)
        if found is not None and found[0] != path and "." not in found[1] and found[1] == local:
            other = module(found[0])
            if other is not None and found[1] in other.classes:
                wanted.setdefault(found[0], []).append(found[1])
    for other_path, other in index.modules.items():
        if other_path == path or other_path in wanted:
            continue
        if any((found := index.resolve(other_path, q)) is not None and found[0] == path for q in other.imports.values()):
            theirs = module(other_path)
            if theirs is not None:
                wanted[other_path] = [c for c in theirs.classes if c not in mine.bound]
    out = []
    taken = set(mine.bound)
    classes = 0
    for other_path, names in wanted.items():
        other = module(other_path)
        bases = [b for n in names for b in other.base_names.get(n, ()) if b in other.classes]
        names = [n for n in dict.fromkeys([*bases, *names])  # a base before the classes deriving from it
                 if n not in taken or n in index.modules[path].imports][:MAX_CLASSES - classes]
        if not names:
            continue
        where = os.path.relpath(other_path, index.root)
        for bound, first, last in other.imports:
            if bound.isdisjoint(taken):
                out.append((where, first, other.segment(first, last)))
                taken |= bound
        for name in names:
            first, last = other.classes[name]
            out.append((where, first, other.segment(first, last)))
            taken.add(name)
        classes += len(names)
    return tuple(out)
