"""What the type layer can say about a name, and what that means to the engine.

jedi answers with a type; the engine needs a `Value`. Only answers that change
a rule's decision are kept: an nn.Module instance or subclass (its calls carry a
graph), a tensor, and the look-alikes that must not be taken for tensors (NumPy
arrays, numbers, containers, other objects with their own `clone()`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from gradguard.engine.values import NUMBER, Evidence, Grad, Kind, Value


@dataclass(frozen=True)
class TypeFact:
    kind: str  # "module" | "module-class" | "tensor" | "ndarray" | "number" | "container" | "object"
    type_name: str  # the resolved type, e.g. "models.net.Net", "numpy.ndarray", "builtins.float"
    loss: bool = False  # module / module-class: a loss (torch.nn.modules.loss._Loss subclass)
    # Where the type is defined: a file of the project ("models/net.py"), "GradGuard's torch stubs",
    # "the interpreter's torch", a package ("numpy"); "" when jedi does not say (builtins).
    origin: str = ""

    def describe(self) -> str:
        """For hovers: "`models.net.Net` (an nn.Module, from `models/net.py`)"."""
        what = {
            "module": "an nn.Module" if not self.loss else "an nn.Module loss",
            "module-class": "an nn.Module subclass",
            "tensor": "a tensor",
            "ndarray": "a NumPy array",
            "number": "a Python number",
            "container": "a Python container",
            "object": "not a tensor",
        }[self.kind]
        if not self.origin:
            return f"`{self.type_name}` ({what})"
        where = self.origin if " " in self.origin else f"`{self.origin}`"
        return f"`{self.type_name}` ({what}, from {where})"


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def value_of(fact: TypeFact, node: cst.CSTNode) -> Optional[Value]:
    """The engine's value for a name the type layer resolved."""
    why = Evidence(node, f"a `{_short(fact.type_name)}` (type from jedi)")
    if fact.kind == "module":
        return Value(kind=Kind.MODULE, grad=Grad.NO, loss=fact.loss, parameterized=not fact.loss, scalar=fact.loss, why=why)
    if fact.kind == "module-class":
        instance = Value(kind=Kind.MODULE, grad=Grad.NO, loss=fact.loss, parameterized=not fact.loss, scalar=fact.loss)
        return Value(kind=Kind.CLASS, grad=Grad.NO, item=instance, why=why)
    if fact.kind == "tensor":
        return Value(kind=Kind.TENSOR, grad=Grad.UNKNOWN)
    if fact.kind == "ndarray":
        return Value(kind=Kind.NDARRAY, grad=Grad.NO, why=why)
    if fact.kind == "number":
        return NUMBER
    if fact.kind == "container":
        return Value(kind=Kind.CONTAINER, grad=Grad.UNKNOWN)
    if fact.kind == "object":
        return Value(kind=Kind.OBJECT, grad=Grad.NO, why=why)
    return None
