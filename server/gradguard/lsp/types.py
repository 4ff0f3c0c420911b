"""The type layer in the server: jedi on its own thread, never before the syntactic diagnostics.

One thread owns jedi (it is not thread-safe). It warms up in the background
once the configuration is read (the first question in a process costs seconds:
jedi reads torch); refinements and hover questions queue behind it, and
nothing waits for it but the refined publish of a document version.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from gradguard.typelayer.oracle import Oracle
from gradguard.typelayer.refine import ask

log = logging.getLogger(__name__)

SYMBOL_CACHE = 512


class TypeService:
    def __init__(self, root: Optional[str], interpreter: Optional[str]):
        self.root, self.interpreter = root, interpreter
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradguard-types")
        self._oracle: Optional[Oracle] = None
        self._symbols: OrderedDict = OrderedDict()
        self.failed: Optional[str] = None  # why jedi could not start (the server goes on without it)
        self.warm = asyncio.Event()  # set once the warm-up finished

    def _get(self) -> Optional[Oracle]:
        if self._oracle is None and self.failed is None:
            try:
                self._oracle = Oracle(self.root, self.interpreter)
            except Exception as e:  # noqa: BLE001 - no jedi, a bad interpreter: syntax only
                self.failed = f"{type(e).__name__}: {e}"
        return self._oracle

    async def _run(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def warm_up(self) -> None:
        def job():
            oracle = self._get()
            if oracle is not None:
                try:
                    oracle.warm_up()
                except Exception as e:  # noqa: BLE001
                    self.failed = f"{type(e).__name__}: {e}"

        try:
            await self._run(job)
        finally:
            self.warm.set()

    async def facts(self, analysis, source: str, path: Optional[str]) -> dict:
        """node -> TypeFact for the analysis's questions ({} without jedi)."""

        def job():
            oracle = self._get()
            return ask(analysis, source, oracle, path) if oracle is not None else {}

        return await self._run(job)

    async def symbol(self, source: str, path: Optional[str], line: int, column: int) -> Optional[str]:
        """jedi's full name for the name at a position (`torch.Tensor.detach`), cached."""
        key = (hash(source), path, line, column)
        if key in self._symbols:
            return self._symbols[key]

        def job():
            oracle = self._get()
            if oracle is None:
                return None
            try:
                names = oracle.goto(source, path, line, column)
            except Exception:  # noqa: BLE001
                log.debug("jedi goto failed", exc_info=True)
                return None
            full = {n.full_name for n in names if n.full_name}
            return full.pop() if len(full) == 1 else None

        found = await self._run(job)
        self._symbols[key] = found
        while len(self._symbols) > SYMBOL_CACHE:
            self._symbols.popitem(last=False)
        return found

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
