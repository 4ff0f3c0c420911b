"""Running a program to see whether it still trains: which parameters got a gradient.

A module-level forward hook (torch's global hook) sees every module that runs
a forward, so parameters are found wherever the program keeps its model - a
global, a Trainer's attribute, a local inside a function. Modules are named by
the order they first ran and their class, so two runs of the same program (the
original and the fixed one, same seed) name the same parameters alike.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from dataclasses import dataclass, field

import torch


@dataclass
class Run:
    error: str | None = None
    graded: set = field(default_factory=set)  # names of parameters that received a non-zero gradient
    namespace: dict = field(default_factory=dict)


def _graded(modules: list, namespace: dict) -> set:
    out = set()
    for i, m in enumerate(modules):
        for name, p in m.named_parameters():
            if p.grad is not None and p.grad.abs().sum().item() > 0:
                out.add(f"{i}:{type(m).__name__}.{name}")
    for key, v in namespace.items():  # leaves made with requires_grad=True
        if isinstance(v, torch.Tensor) and v.is_leaf and v.requires_grad and v.grad is not None:
            if v.grad.abs().sum().item() > 0:
                out.add(key)
    return out


def run(code: str, name: str, after: str = "") -> Run:
    """Run `code` (then `after`, e.g. a corpus program's `observe()` call) in a fresh
    namespace with a fixed seed; import errors of modules that are not installed skip."""
    torch.manual_seed(0)
    seen: list = []
    ids: set = set()

    def hook(module, _inputs, _out):
        if id(module) not in ids:
            ids.add(id(module))
            seen.append(module)

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    ns: dict = {"__name__": "__main__"}
    result = Run(namespace=ns)
    cwd = os.getcwd()
    scratch = tempfile.TemporaryDirectory()
    os.chdir(scratch.name)  # what a program writes (np.save(...)) lands in a scratch directory
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(compile(code, f"<{name}>", "exec"), ns)
                if after:
                    exec(compile(after, f"<{name} after>", "exec"), ns)
            except ImportError:
                raise
            except Exception as e:  # noqa: BLE001 - what the program raised is the observation
                result.error = f"{type(e).__name__}: {e}"
    finally:
        handle.remove()
        os.chdir(cwd)
        scratch.cleanup()
    result.graded = _graded(seen, ns)
    return result


def assert_still_trains(before: Run, after: Run, what: str) -> None:
    """The fixed program runs (or fails exactly as the original did, where no fix
    touched the failure) and every parameter that learned before still learns."""
    if before.error is None:
        assert after.error is None, f"{what}: the fixed program raises {after.error}"
    else:
        assert after.error in (None, before.error), f"{what}: the fixed program raises {after.error}"
    if before.error is None:
        lost = before.graded - after.graded
        assert not lost, f"{what}: after the fix these parameters get no gradient: {sorted(lost)}"
