"""The type layer in the server: jedi in its own process, never before the syntactic diagnostics.

jedi is CPU-bound Python: on a thread of the server it would hold the GIL for
seconds and starve the event loop (hovers measured at 1.8 s p95 that way), so it
runs in one worker process (spawned, not forked from the threaded server) that
owns it - jedi is not thread-safe either. It warms up once the configuration is
read (the first question in a process costs seconds: jedi reads torch).

Answers are kept per document for the names of statements an edit left alone
(the incremental parse keeps their nodes), so a keystroke asks jedi only about
the statements it touched; a save asks everything again.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Optional

log = logging.getLogger(__name__)

SYMBOL_CACHE = 512

# ---------------------------------------------------------------- in the worker process
_oracle = None
_failed: Optional[str] = None


def _start(root: Optional[str], interpreter: Optional[str]) -> None:
    global _oracle, _failed
    try:
        from gradguard.typelayer.oracle import Oracle

        _oracle = Oracle(root, interpreter)
    except Exception as e:  # noqa: BLE001 - no jedi, a bad interpreter: syntax only
        _failed = f"{type(e).__name__}: {e}"


def _warm_up() -> Optional[str]:
    if _oracle is not None:
        try:
            _oracle.status()  # the interpreter jedi reads: the CLI's words when it cannot
        except Exception as e:  # noqa: BLE001
            return f"jedi cannot use {_oracle.interpreter} ({type(e).__name__})"
        try:
            _oracle.warm_up()
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"
    return _failed


def _status() -> Optional[tuple[bool, str]]:
    """Whether jedi resolves nn.Module (the torch of the interpreter, or the bundled stubs), and the words for it."""
    if _oracle is None:
        return None
    try:
        status = _oracle.status()
    except Exception as e:  # noqa: BLE001 - jedi cannot start the interpreter
        return False, f"types are off: jedi cannot use {_oracle.interpreter} ({type(e).__name__})"
    return status.ok, status.message()


def _facts(source: str, path: Optional[str], positions: list) -> dict:
    return _oracle.facts(source, path, positions) if _oracle is not None else {}


# Where torch's public names are implemented: what jedi resolves to, and the name users write.
PUBLIC_TORCH = (
    ("torch._C._VariableFunctions.", "torch."),
    ("torch._C._TensorBase.", "torch.Tensor."),
    ("torch._C.TensorBase.", "torch.Tensor."),
    ("torch._tensor.Tensor.", "torch.Tensor."),
    ("torch._C._nn.", "torch.nn.functional."),
    ("torch.autograd.grad_mode.", "torch."),
    ("torch.nn.modules.module.Module.", "torch.nn.Module."),
)


def public_name(full: str) -> Optional[str]:
    """torch's public API for a name jedi resolved (`torch._C.TensorBase.detach` -> `torch.Tensor.detach`);
    None for another private name of torch (no internals in hovers)."""
    for private, public in PUBLIC_TORCH:
        if full.startswith(private):
            return public + full[len(private):]
    if full.startswith("torch.") and any(part.startswith("_") and not part.startswith("__") for part in full.split(".")):
        return None
    return full


def dotted_name(name) -> Optional[str]:
    """A jedi name's dotted path, with an attribute that a method assigns (`self.data = ...` in
    `Tensor.__setstate__`, which jedi names `Tensor.__setstate__.data`) named on its class:
    `Tensor.data`."""
    full = name.full_name
    if not full or name.type != "statement":
        return full
    try:
        scope = name.parent()
        owner = scope.parent() if scope.type == "function" else None
        line = name.get_line_code()
    except Exception:  # noqa: BLE001 - a name without source: as jedi says
        return full
    if owner is not None and owner.type == "class" and owner.full_name and line[name.column - 1 : name.column] == ".":
        return f"{owner.full_name}.{name.name}"
    return full


def _goto(source: str, path: Optional[str], line: int, column: int) -> Optional[str]:
    if _oracle is None:
        return None
    try:
        full = {public_name(dotted_name(n)) for n in _oracle.goto(source, path, line, column) if n.full_name}
    except Exception:  # noqa: BLE001 - odd code: no name
        return None
    full.discard(None)
    return full.pop() if len(full) == 1 else None


# ---------------------------------------------------------------- in the server
class TypeService:
    def __init__(self, root: Optional[str], interpreter: Optional[str]):
        self.root, self.interpreter = root, interpreter
        self._pool = ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_start, initargs=(root, interpreter)
        )
        self._symbols: OrderedDict = OrderedDict()
        self._known: dict[str, dict] = {}  # per document: node -> TypeFact or None (asked, no answer)
        self.failed: Optional[str] = None  # why jedi is not there (the server goes on without it)
        self.warm = asyncio.Event()  # set once the warm-up finished

    async def _run(self, fn, *args):
        if self.failed is not None:
            return None
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        except BrokenProcessPool as e:
            self.failed = f"jedi's process ended: {e}"
            return None

    async def warm_up(self) -> Optional[str]:
        """None, or why jedi could not start."""
        try:
            problem = await self._run(_warm_up)
            if problem is not None:
                self.failed = problem
            return self.failed
        finally:
            self.warm.set()

    async def status(self) -> Optional[tuple[bool, str]]:
        """(nn.Module resolves?, what to say), None when jedi is not there."""
        return await self._run(_status)

    async def facts(self, key: str, analysis, source: str, path: Optional[str]) -> dict:
        """node -> TypeFact for the analysis's questions, jedi asked only about new nodes."""
        known = self._known.setdefault(key, {})
        wanted = {node: (line, col) for line, col, node in analysis.type_queries}
        missing = {node: pos for node, pos in wanted.items() if node not in known}
        if missing:
            answers = await self._run(_facts, source, path, list(dict.fromkeys(missing.values())))
            if answers is None:
                return {}
            for node, pos in missing.items():
                known[node] = answers.get(pos)
        for node in [n for n in known if n not in wanted]:  # statements the edit replaced
            del known[node]
        return {node: known[node] for node in wanted if known.get(node) is not None}

    def forget(self, key: str) -> None:
        """Ask everything again next time (on save, on close)."""
        self._known.pop(key, None)

    async def symbol(self, source: str, path: Optional[str], line: int, column: int) -> Optional[str]:
        """jedi's full name for the name at a position (`torch.nn.modules.module.Module.requires_grad_`)."""
        key = (hash(source), path, line, column)
        if key not in self._symbols:
            self._symbols[key] = await self._run(_goto, source, path, line, column)
            while len(self._symbols) > SYMBOL_CACHE:
                self._symbols.popitem(last=False)
        return self._symbols[key]

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
