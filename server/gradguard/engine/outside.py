"""Calls that cross a file's border, for project-wide analysis (gradguard/project/).

Out: the calls this file makes of what another file of the project may define (a function or
class it imports, a method of an instance built from an imported class, a method of an object
nothing here tells), each with the grad mode it runs in. In: how the other files call this
file's top-level functions and methods (`Outside`), where they all agree - a model's
`generate()` that main.py only calls from a function decorated `@torch.no_grad()` runs with
grad off. The engine never reads another file: the driver hands it what the others said.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from gradguard.engine.knowledge import AUTOGRAD_NAMES
from gradguard.engine.model import FunctionInfo, GradMode
from gradguard.engine.values import UNKNOWN, Kind

# Where a call's callee comes from a library, never from the project: not worth exporting.
LIBRARIES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "numpy", "scipy", "pandas", "sklearn", "matplotlib",
    "math", "os", "sys", "re", "json", "time", "random", "collections", "itertools", "functools", "logging",
    "argparse", "pathlib", "typing", "copy", "pickle", "shutil", "glob", "datetime", "builtins", "tqdm",
    "transformers", "PIL", "cv2", "wandb", "tensorboardX", "einops", "timm", "lightning", "pytorch_lightning",
})
# `Net(...).to(device).eval()`: still the instance `Net(...)` built
_SAME_INSTANCE = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "double", "half", "bfloat16",
                            "requires_grad_", "share_memory"})


@dataclass(frozen=True)
class Call:
    """A call of something another file may define."""

    target: str  # "model.Model.generate" (as this file's imports name it), or "generate" when `by_name`
    by_name: bool  # the receiver is unknown: only the method's name says what it may be
    mode: str  # GradMode value at the call: "on", "off", "unknown"
    proved: bool  # grad is on for certain (module-level code, a function that trains)
    how: str  # where it is and why the mode is what it is: "in `test()`, decorated `@t.no_grad()`"


@dataclass(frozen=True)
class Outside:
    """How every other file of the project calls a function of this file, where they agree."""

    mode: GradMode
    proved: bool  # ON only: every call runs with grad on for certain
    why: str  # "called only with grad off: main.py, in `test()`, decorated `@t.no_grad()`"
    guessed: bool = False  # only calls of objects nothing tells, matched by the method's name


def symbol_of(fn: FunctionInfo) -> Optional[str]:
    """"f" for a module-level function, "C.f" for a method of a module-level class, else None
    (another file cannot name a nested function)."""
    if fn.cls is None:
        return fn.name if fn.scope is not None and fn.scope.kind == "module" else None
    owner = fn.cls.scope
    return f"{fn.cls.name}.{fn.name}" if owner is not None and owner.kind == "module" else None


class Border:
    """FlowAnalysis' side: `outside` (given) and `outgoing` (collected; None: not asked for)."""

    outside: dict
    outgoing: Optional[list]

    def outside_of(self, fn: FunctionInfo) -> Optional[Outside]:
        """What the other files say of `fn`, if the file itself never calls it."""
        if not self.outside or fn.call_modes or fn.decorated_mode is not None:
            return None
        key = symbol_of(fn)
        found = self.outside.get(key) if key is not None else None
        if found is not None and found.guessed and self.facts_of(fn.node).all_names & AUTOGRAD_NAMES:
            return None  # a guessed callee must not make its own backward look like one under no_grad
        return found

    def _export_call(self, node: cst.Call, fv) -> None:
        func = node.func
        if fv.qualname:
            root = fv.qualname.split(".", 1)[0]
            if root in LIBRARIES:
                return
            target, by_name = fv.qualname, False
        elif isinstance(func, cst.Attribute) and not isinstance(fv.cls, FunctionInfo):
            made = self._built_by(func.value)
            if made:
                target, by_name = f"{made}.{func.attr.value}", False
            elif self.values.get(func.value, UNKNOWN).kind in (Kind.UNKNOWN, Kind.OBJECT, Kind.MODULE):
                target, by_name = func.attr.value, True  # a tensor's or a list's own method is no one's in the project
            else:
                return
        else:
            return
        self.outgoing.append((self.function, target, by_name, self.frame.mode, self._how()))

    def _built_by(self, expr: cst.BaseExpression) -> Optional[str]:
        """The imported class whose call built the instance a name holds (`model = Net(cfg).eval()`)."""
        if not isinstance(expr, cst.Name):
            return None
        b = self.lookup(expr.value)
        node = b.node if b is not None else None
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _SAME_INSTANCE:
            node = node.func.value
        if not isinstance(node, cst.Call):
            return None
        q = self._qualname(node.func)
        return q if q and q.split(".", 1)[0] not in LIBRARIES else None

    def _how(self) -> str:
        fn = self.function
        where = f"in `{fn.name}()`" if fn is not None else "at module level"
        if self.frame.mode is not GradMode.OFF:
            return where
        at = self.frame.mode_nodes[-1]
        if at is not None:
            return f"{where}, inside `{self._short(at)}`"
        if fn is None:
            return f"{where}, with grad off"
        decorator = next((d.decorator for d in fn.node.decorators if self.grad_mode_of(d.decorator) is GradMode.OFF), None)
        if decorator is not None:
            return f"{where}, decorated `@{self._short(decorator)}`"
        return f"{where}, which runs with grad off"

    def exported_calls(self) -> list[Call]:
        """The calls of other files' functions, once the walk is over (whether grad is on for
        certain is read then, when every call of the file's own functions has been seen)."""
        proved: dict = {}
        calls = set()
        for fn, target, by_name, mode, how in self.outgoing or ():
            on = mode is GradMode.ON
            if on and fn not in proved:
                proved[fn] = fn is None or self._on_in(fn, set())
            calls.add(Call(target, by_name, mode.value, on and proved[fn], how))
        return sorted(calls, key=lambda c: (c.target, c.mode, c.how))
