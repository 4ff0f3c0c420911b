"""The project index: which files make up a project, what each defines, and where an import leads.

Built from the text alone - a line scan for `def`/`class` and `from ... import` lines, no
parse, no jedi, no import of user code - so that indexing a project costs a small part of
analysing it. An import resolves the way Python would find the project's own modules: relative
to the importing package (`from .models import Net`), the importing script's directory (`python
train.py` puts it first on sys.path), its parent directories up to the root, and `src/`. What
does not resolve to a file of the project (torch, a pip package) is jedi's job (`--types`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Optional

# `def f(`, `async def f(`, `class C(` at the start of a line, with its indentation
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.M)
# `from x.y import a, b as c` and `from . import (a,\n b)`
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)
MAX_DEPTH = 4  # re-exports followed (`__init__.py` importing from a submodule that imports from another)


@dataclass
class Module:
    path: str  # absolute
    defines: frozenset = frozenset()  # "f", "C", "C.m": what another file can name
    imports: dict = field(default_factory=dict)  # local name -> qualified name, from `from ... import` lines
    stars: tuple = ()  # the modules of its `from ... import *` lines, in order


def scan(path: str, text: str) -> Module:
    """What a module defines at its top level (functions, classes, their methods) and imports by name."""
    defines: set = set()
    top_class: Optional[str] = None
    class_indent = ""
    member_indent: Optional[str] = None
    for m in _DEF.finditer(text):
        indent, kind, name = m.groups()
        if not indent:
            defines.add(name)
            top_class, member_indent = (name, None) if kind == "class" else (None, None)
            continue
        if top_class is not None and indent.startswith(class_indent):
            if member_indent is None:
                member_indent = indent
            if indent == member_indent and kind == "def":
                defines.add(f"{top_class}.{name}")
    imports = {}
    stars = []
    for m in _FROM.finditer(text):
        module, names = m.group(1), m.group(2).strip("()")
        for part in names.split(","):
            words = part.split()
            if words == ["*"]:
                stars.append(module)
            if not words or words[0] == "*":
                continue
            local = words[2] if len(words) >= 3 and words[1] == "as" else words[0]
            imports[local] = f"{module}{words[0]}" if module.endswith(".") else f"{module}.{words[0]}"
    return Module(path, frozenset(defines), imports, tuple(stars))


class ProjectIndex:
    """The modules of one project root and how names lead from one to another."""

    def __init__(self, root: str, modules: dict[str, Module]):
        self.root = os.path.abspath(root)
        self.modules = modules  # absolute path -> Module
        self._methods: Optional[dict] = None
        self._importers: Optional[dict] = None

    @classmethod
    def from_texts(cls, root: str, texts: dict[str, str]) -> "ProjectIndex":
        return cls(root, {os.path.abspath(p): scan(os.path.abspath(p), t) for p, t in texts.items()})

    def methods_named(self, name: str) -> list[tuple[str, str]]:
        """Every (path, "C.name") of the project: what `x.name()` may call when nothing says what `x` is."""
        if self._methods is None:
            self._methods = {}
            for path, module in self.modules.items():
                for symbol in module.defines:
                    _, dot, method = symbol.partition(".")
                    if dot:
                        self._methods.setdefault(method, []).append((path, symbol))
        return self._methods.get(name, [])

    def importers(self, path: str) -> list[str]:
        """The modules of the project that import a name `path` defines (`from models.net import Net`)."""
        if self._importers is None:
            self._importers = {}
            for other, module in self.modules.items():
                for qualname in module.imports.values():
                    found = self.resolve(other, qualname)
                    if found is not None and found[0] != other:
                        self._importers.setdefault(found[0], {})[other] = None
        return list(self._importers.get(os.path.abspath(path), ()))

    def resolve(self, importer: str, qualname: str, depth: int = 0) -> Optional[tuple[str, str]]:
        """(path, symbol) of the project's definition that `qualname`, as `importer`'s imports
        spell it ("models.net.Net.generate", ".utils.evaluate", "*.Net" for a name only a star import
        can have bound), names; None if not the project's."""
        parts, dots = _split(qualname)
        if parts[0] == "*":
            return self._through_stars(importer, parts[1:], depth)
        for i in range(len(parts) - 1, 0, -1):
            for path in self._module_files(importer, dots, parts[:i]):
                found = self._in_module(path, parts[i:], depth)
                if found is not None:
                    return found
        return None

    def _in_module(self, path: str, symbol: list[str], depth: int) -> Optional[tuple[str, str]]:
        module = self.modules.get(path)
        if module is None:
            return None
        name = ".".join(symbol[:2])
        if name in module.defines and len(symbol) <= 2:
            return path, name
        origin = module.imports.get(symbol[0])  # a re-export: `from .net import Net` in models/__init__.py
        if origin is not None and depth < MAX_DEPTH:
            return self.resolve(path, ".".join([origin, *symbol[1:]]), depth + 1)
        return self._through_stars(path, symbol, depth)  # `from .net import *` in models/__init__.py

    def _through_stars(self, path: str, symbol: list[str], depth: int) -> Optional[tuple[str, str]]:
        """Where the star imports of `path` find `symbol`: the last one that binds it wins, as in Python."""
        module = self.modules.get(path)
        if module is None or depth >= MAX_DEPTH:
            return None
        for star in reversed(module.stars):
            found = self.resolve(path, star + ".".join(symbol) if star.endswith(".") else ".".join([star, *symbol]),
                                 depth + 1)
            if found is not None:
                return found
        return None

    def _module_files(self, importer: str, dots: int, parts: list[str]):
        """The files `import <dots><parts>` may load from `importer`, likeliest first."""
        here = os.path.dirname(os.path.abspath(importer))
        if dots:
            bases = [here]
            for _ in range(dots - 1):
                bases = [os.path.dirname(bases[0])]
        else:
            bases, d = [], here
            while True:  # the script's directory, then each parent up to the root
                bases.append(d)
                if d == self.root or not d.startswith(self.root + os.sep):
                    break
                d = os.path.dirname(d)
            bases.append(os.path.join(self.root, "src"))
        rel = os.path.join(*parts)
        for base in bases:
            for candidate in (os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")):
                if candidate in self.modules:
                    yield candidate


def _split(qualname: str) -> tuple[list[str], int]:
    stripped = qualname.lstrip(".")
    return stripped.split("."), len(qualname) - len(stripped)
