"""Attribute names that belong to libraries: what `rename` never touches.

An attribute is renamed by its name wherever it appears (`x.attr`), whatever `x` is, so a name a
library object also has (`.weight`, `.update`, `.step`, `.log`, `.append`) stays: the file may
reach the library's attribute with it. The names come from the installed libraries themselves:
`dir()` of every class and function of torch's public modules, NumPy, the builtins and
collections, the attributes torch's own `__init__`s set (`self.weight = ...`, `self.hidden_size`),
and the hooks Lightning calls by name (read from its source, without importing it).
"""

from __future__ import annotations

import builtins
import collections
import functools
import importlib
import importlib.util
import math
import re
from pathlib import Path

TORCH_MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.utils.rnn",
                 "torch.optim", "torch.optim.lr_scheduler", "torch.distributions", "torch.utils.data",
                 "torch.autograd", "torch.linalg", "torch.return_types", "torch.fft", "torch.special")
TORCH_SOURCES = ("nn/modules", "optim", "distributions", "utils/data")
LIGHTNING_SOURCES = ("pytorch/core/module.py", "pytorch/core/hooks.py", "pytorch/callbacks/callback.py")
_SELF_ATTRIBUTE = re.compile(r"self\.(\w+)\s*(?::[^=\n]*)?=[^=]")
_DEF = re.compile(r"^\s*def (\w+)\(", re.M)


@functools.cache
def library_attributes() -> frozenset[str]:
    import numpy

    names: set[str] = set()
    modules = [builtins, collections, math, numpy] + [importlib.import_module(m) for m in TORCH_MODULES]
    for module in modules:
        names |= set(dir(module))
        for value in list(vars(module).values()):
            if isinstance(value, type):
                names |= set(dir(value))
    torch_root = Path(importlib.import_module("torch").__file__).parent
    for folder in TORCH_SOURCES:
        for path in (torch_root / folder).rglob("*.py"):
            names |= set(_SELF_ATTRIBUTE.findall(path.read_text(encoding="utf-8")))
    spec = importlib.util.find_spec("lightning")
    if spec is not None and spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        for relative in LIGHTNING_SOURCES:
            if (root / relative).exists():
                names |= set(_DEF.findall((root / relative).read_text(encoding="utf-8")))
    return frozenset(names)
