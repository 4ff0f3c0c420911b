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
import re
from dataclasses import dataclass
from typing import Callable, Optional

from gradguard.engine import evidence
from gradguard.engine import knowledge as K
from gradguard.engine import parsing
from gradguard.project.index import ProjectIndex

MAX_CLASSES = 12  # a file that imports half a model library learns nothing more from the rest


@dataclass(frozen=True)
class Shape:
    """One module's top-level classes and imports, as source segments (first line 1-based)."""

    classes: tuple = ()  # (name, first line, code, names of its bases, `_told` of it), decorators included
    imports: tuple = ()  # (names bound, first line, code): absolute imports only
    bound: frozenset = frozenset()  # every name the module binds at its top level
    modules: tuple = ()  # (first line, last line) of each top-level class deriving from a `...Module`


def shape(text: str) -> Shape:
    """What a module offers the files that work with its classes; nothing where Python cannot read
    it (a syntax error, a file nested deeper than the parser or a walk allows)."""
    try:
        return _shape(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return Shape()


def _shape(text: str) -> Shape:
    tree = ast.parse(text)
    parsing.KNOWN_STARTS.put(text, parsing.statement_starts(tree.body))  # the file's own analysis needs them
    lines = text.splitlines()
    classes, imports, bound, modules = [], [], set(), []
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        code = "\n".join(lines[first - 1:node.end_lineno])
        if isinstance(node, ast.ClassDef):
            bases = tuple(n.id for b in node.bases for n in ast.walk(b) if isinstance(n, ast.Name))
            classes.append((node.name, first, code, bases, _told(node, code)))
            if any("Module" in ast.unparse(b) for b in node.bases):
                modules.append((first, node.end_lineno))
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
    return Shape(tuple(classes), tuple(imports), frozenset(bound), tuple(modules))


def neighbours(index: ProjectIndex, path: str, text: Optional[str], shape_of: Callable[[str], Optional[Shape]]) -> tuple:
    """((where, first line there, code), ...) for Settings.neighbours: the classes of other modules of
    the project that `path` imports by name, with the bases their module defines and the imports
    their code reads, then the classes of the modules that import `path`; none whose name the
    file binds itself (other than by importing that very class), and only those its text can tell
    anything by (`relevant`; text None: every one). `shape_of(path)`: a module's Shape."""
    path = os.path.abspath(path)
    imports = index.modules[path].imports
    wanted = offered_by(index, path)
    if not wanted:
        return ()
    mine = shape_of(path) or Shape()
    scanned = _scanned(text, mine) if text is not None else None
    taken = set(mine.bound)
    offered = {}  # path -> (its Shape, the names of its classes on offer)
    for other_path, names in wanted.items():
        other = shape_of(other_path)
        if other is not None and other.classes:
            defined = [c[0] for c in other.classes]
            offered[other_path] = (other, [n for n in defined if n not in taken] if names is None
                                   else [n for n in names if n in defined])
    # a method two of the classes on offer (or one of them and one of the file's) define tells neither
    shared = _shared_methods([*mine.classes, *(c for other, names in offered.values()
                                                for c in other.classes if c[0] in names)])
    out = []
    classes = 0
    for other_path, (other, names) in offered.items():
        if classes >= MAX_CLASSES:
            continue
        defined = {c[0]: c for c in other.classes}
        if scanned is not None:
            names = relevant(scanned, [_without(defined[n], shared) for n in names])
        for _ in range(3):  # the classes of their module they derive from or build (`self.encoder = Encoder()`), and theirs
            names += [b for b in defined if b not in names and any(
                b in defined[n][3] or re.search(r"\b%s\s*\(" % b, defined[n][2]) for n in names)]
        names = [n for n in sorted(dict.fromkeys(names), key=lambda n: defined[n][1])  # a base before its subclasses
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


def offered_by(index: ProjectIndex, path: str) -> dict:
    """The modules whose classes `path` may work with: path -> the class names it imports from it, in
    order, or None for a module that imports `path` (all its classes). What `neighbours` reads
    besides the texts of these modules and of `path`."""
    path = os.path.abspath(path)
    wanted: dict = {}
    for local, qualname in index.modules[path].imports.items():
        found = index.resolve(path, qualname)
        if found is not None and found[0] != path and found[1] == local:
            wanted.setdefault(found[0], []).append(local)
    for other_path in index.importers(path):
        wanted.setdefault(other_path, None)
    return wanted


def _shared_methods(classes: list) -> frozenset:
    """The methods (Shape.classes' `_told` ones) more than one of `classes` defines."""
    seen, shared = set(), set()
    for c in classes:
        shared |= seen & c[4][0]
        seen |= c[4][0]
    return frozenset(shared)


def _without(cls: tuple, methods: frozenset) -> tuple:
    """A Shape.classes entry whose `_told` methods leave out `methods`."""
    name, first, code, bases, told = cls
    return name, first, code, bases, (told[0] - methods, *told[1:])


def _scanned(text: str, mine: Shape) -> tuple:
    """The file's text as `relevant` reads it, and the names its imports bind. The code of the
    file's own nn.Modules is left out: what their attributes are, their `__init__` says (a model
    library's modules, built of the layers they import, are not analysed again for them)."""
    if mine.modules:
        lines = text.splitlines()
        for first, last in mine.modules:
            lines[first - 1:last] = [""] * (last - first + 1)
        text = "\n".join(lines)
    return text, frozenset().union(*(bound for bound, _, _ in mine.imports))


def relevant(scanned: tuple, classes: list) -> list:
    """The names of the `classes` (Shape.classes entries) the file's text can tell anything by: the
    scans that name the receivers with evidence in a file (engine/evidence.py), run with each
    class's members - a method only it defines called on something (`user.test()`), two of its
    submodules called on one name (`model.module.encoder(x)`), an attribute it sets to a parameter
    or a layer with weights read (`ffn.dense.weight`), a call or an unpacking shaped like its forward
    (`attention(last_alignment)`)."""
    if not classes:
        return []
    together = tuple(frozenset().union(*(c[4][k] for c in classes)) for k in range(4)) + \
        (tuple(s for c in classes for s in c[4][4]),)
    if not _speaks_to(scanned, together, pairs=False):
        return []  # (one scan for all: most files say nothing to any)
    return [c[0] for c in classes if _speaks_to(scanned, c[4])]


# `self.fc = nn.Linear(...)`: what a class sets on itself to a call's result, and the callee
_SELF_SET = re.compile(r"\bself\s*\.\s*(\w+)\s*(?::[^=\n]*)?=\s*([\w.]+)\s*\(")


def _told(cls: ast.ClassDef, code: str) -> tuple:
    """(methods, submodules, parameters, layers with weights, forward signatures) of a class."""
    methods, subs, params, layers, signatures = set(), set(), set(), set(), []
    for fn in cls.body:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.add(fn.name)
            if fn.name == "forward":
                args = fn.args
                positional = tuple(a.arg for a in (*args.posonlyargs, *args.args) if a.arg != "self")
                names = frozenset(positional) | {a.arg for a in args.kwonlyargs}
                signatures.append((cls.name, positional, names, _returned_shape(fn)))
    for attr, made in _SELF_SET.findall(code):
        subs.add(attr)
        made = made.rsplit(".", 1)[-1]
        if made.endswith("Parameter"):
            params.add(attr)
        elif made in evidence.WEIGHTED_LAYERS:
            layers.add(attr)
    methods = frozenset(m for m in methods if not m.startswith("_") and m not in evidence.COMMON_METHODS
                        and m not in K.TORCH_METHOD_NAMES)
    return methods, frozenset(subs), frozenset(params), frozenset(layers), tuple(signatures)


def _speaks_to(scanned: tuple, told: tuple, pairs: bool = True) -> bool:
    """(`imported`: the file's imported names, whose members are no instance's: `re.compile(...)`;
    `pairs`: two submodules of one class on one name - else one of any class, a coarser first pass)"""
    text, imported = scanned
    methods, subs, params, layers, signatures = told

    def named(found) -> bool:
        return any(r.split(".", 1)[0] not in imported for r in found)

    if named(evidence.member_receivers(text, methods)) or named(evidence.call_shape_receivers(text, signatures)):
        return True
    if params and re.search(r"(?<![\w.])(?!self\b)\w+\s*\.\s*(?:%s)\b" % "|".join(sorted(params)), text):
        return True  # `model.W` (evidence.parameter_attributes)
    if layers and re.search(r"\.\s*(?:%s)\s*\.\s*(?:weight|bias)\b" % "|".join(sorted(layers)), text):
        return True  # `model.layers[i].dense.weight` (evidence.layer_attributes)
    if not pairs:
        return any(r.split(".", 1)[0] not in imported for r in evidence.submodule_receivers(text, subs))
    receivers = [evidence.submodule_receivers(text, frozenset({sub})) for sub in subs]
    return any(sum(r in found for found in receivers) >= 2 for r in set().union(*receivers) if r.split(".", 1)[0] not in imported)


def _returned_shape(fn: ast.FunctionDef) -> tuple:
    """evidence.returned_shape, read with `ast`: (the number of items of its first `return a, b`, the
    constant keys of the dict literals it returns when every `return` gives one)."""
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    count = next((len(r.value.elts) for r in returns if isinstance(r.value, ast.Tuple)), 0)
    keys: set = set()
    for r in returns:
        if not isinstance(r.value, ast.Dict) or not all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in r.value.keys):
            return count, frozenset()
        keys.update(k.value for k in r.value.keys)
    return count, frozenset(keys)
