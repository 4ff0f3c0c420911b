"""The questions the engine asks the type layer (jedi) about names syntax leaves unknown."""

from __future__ import annotations

import builtins
import sys

import libcst as cst

from gradguard.engine.values import (
    UNKNOWN,
    Kind,
    Value,
)

_BUILTINS = frozenset(dir(builtins))


# Imports syntax already understands: the type layer never overrides what they give.
_UNDERSTOOD_IMPORTS = frozenset({"torch", "numpy", "torchvision", "timm", "transformers", "diffusers", "math", "builtins"})


# Python's standard library makes no modules, tensors or arrays: a name imported from it is never asked
# about. Generic names a project may give a module of its own (which would shadow the library's) excepted.
_STDLIB = frozenset(sys.stdlib_module_names) - {
    "array", "code", "numbers", "operator", "parser", "platform", "profile", "queue", "select", "signal",
    "site", "stat", "string", "symbol", "test", "this", "token", "trace", "types",
}


def knows_nothing(v: Value) -> bool:
    """Nothing known from syntax: a bare unknown, or a name imported from a module the engine does not model."""
    return v.kind is Kind.UNKNOWN and (v.qualname is None or v.qualname.split(".", 1)[0] not in _UNDERSTOOD_IMPORTS)


class TypeQuestions:
    """Which names to ask jedi about."""

    MAX_TYPE_QUERIES = 64  # distinct questions per file

    def _question(self, node: cst.BaseExpression) -> object:
        """What a name question is about: uses of one binding (an import, a parameter, an
        assignment) or of one `self.<attr>` of a class are one question to jedi, asked at the first."""
        if isinstance(node, cst.Name):
            b = self.lookup(node.value)
            return ("binding", b.token) if b is not None else ("free", node.value)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            cls = self.function.cls if self.function is not None else None
            return ("self", cls, node.attr.value) if cls is not None else node
        return node

    def _python_builtin(self, name: cst.Name) -> bool:
        """`len`, `print`, `super`: Python's own, unless the file rebinds the name (never worth a question)."""
        return name.value in _BUILTINS and self.lookup(name.value) is None

    def _ask(self, node: cst.BaseExpression, removes_only: bool = False) -> None:
        """Syntax cannot tell what this name is: the type layer may - unless it was imported from
        Python's standard library, which makes no modules, tensors or arrays (`Path`, `deque`).
        `removes_only`: the answer can only take findings away (a receiver that turns out to be a
        NumPy array, an appended float), so it is asked only where a finding is (engine._queries)."""
        if isinstance(node, (cst.Name, cst.Attribute)) and node not in self.facts and node not in self.type_queries:
            v = self.values.get(node, UNKNOWN)
            if knows_nothing(v) and (v.qualname is None or v.qualname.split(".", 1)[0] not in _STDLIB):
                about = self._question(node)
                if about in self._questions or len(self._questions) < self.MAX_TYPE_QUERIES:
                    self._questions.add(about)
                    self.type_queries[node] = about
                    if removes_only:
                        self.removal_queries.add(node)
