"""jedi, asked what syntax cannot tell: is `model` an nn.Module, is `arr` a tensor?

jedi reads the code; it never imports or runs the user's modules. Its
environment subprocess (the interpreter whose packages are read) imports only
compiled modules to inspect them - torch's C extension among them (~265 MB,
seconds on the first question): that is why the server asks nothing before it
has published its syntactic diagnostics, and warms jedi up in the background.

jedi is not thread-safe: an `Oracle` must be used from one thread only.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from collections import OrderedDict
from typing import Iterable, Optional

from gradguard.typelayer.facts import TypeFact

log = logging.getLogger(__name__)

MODULE = "torch.nn.modules.module.Module"
LOSS = "torch.nn.modules.loss._Loss"
TENSORS = {"torch.Tensor", "torch._tensor.Tensor", "torch._C.TensorBase", "torch.nn.parameter.Parameter"}
NUMBERS = {"builtins.int", "builtins.float", "builtins.bool", "builtins.complex"}
CONTAINERS = {"builtins.list", "builtins.dict", "builtins.tuple", "builtins.set"}
NDARRAY = "numpy.ndarray"
CACHE_SIZE = 4096  # answers kept, per (document text, position)
PARSED_MODULES = 400  # parso keeps every module jedi read (torch has ~1,500): beyond this, start afresh


def _qualname(value) -> str:
    """`models.net.Net` for a jedi class value (private API, jedi 0.20)."""
    try:
        module = value.get_root_context().py__name__()
    except Exception:  # noqa: BLE001 - a value without a module (builtins stubs)
        module = None
    name = value.py__name__()
    return f"{module}.{name}" if module else name


def _mro(cls) -> Optional[list[str]]:
    """The class's MRO as qualnames; None if jedi could not follow every base
    (torch not installed in that interpreter: `nn.Module` unresolved)."""
    try:
        mro = list(cls.py__mro__())
        for c in mro:
            for base in c.py__bases__():
                if not base.infer():
                    return None
        return [_qualname(c) for c in mro]
    except Exception:  # noqa: BLE001 - jedi failed on this class
        return None


def classify(names) -> Optional[TypeFact]:
    """One fact from jedi's answer, or None if it is empty, ambiguous or says nothing useful."""
    facts = set()
    for name in names:
        fact = _classify_one(name)
        if fact is None:
            return None
        facts.add(fact)
    return facts.pop() if len(facts) == 1 else None


def _classify_one(name) -> Optional[TypeFact]:
    if name.type not in ("instance", "class"):
        return None
    values = list(name._name.infer())  # jedi's values behind the public Name
    if len(values) != 1:
        return None
    value = values[0]
    cls = value if name.type == "class" else getattr(value, "class_value", None)
    if cls is None:
        return None
    mro = _mro(cls)
    if not mro:
        return None
    full = mro[0]
    if MODULE in mro:
        kind = "module-class" if name.type == "class" else "module"
        return TypeFact(kind, full, loss=LOSS in mro)
    if name.type == "class":
        return None  # other classes: calling them makes objects syntax already treats as unknown
    if TENSORS & set(mro):
        return TypeFact("tensor", full)
    if full == NDARRAY or NDARRAY in mro:
        return TypeFact("ndarray", full)
    if full in NUMBERS:
        return TypeFact("number", full)
    if full in CONTAINERS:
        return TypeFact("container", full)
    if full.startswith(("builtins.", "typing.")):
        return None
    return TypeFact("object", full)


class Oracle:
    """The one owner of jedi: a workspace project, an environment, bounded caches."""

    def __init__(self, root: Optional[str] = None, interpreter: Optional[str] = None):
        import jedi  # the type layer only: the CLI without --types never pays for it

        self._jedi = jedi
        self.root = root
        self.interpreter = interpreter or sys.executable
        self._environment = None
        self._project = None
        self._answers: OrderedDict = OrderedDict()
        self.questions = 0  # asked of jedi (not answered from the cache)

    def _env(self):
        if self._environment is None:
            # safe=False: the interpreter is the user's choice (a setting), not the file's
            self._environment = self._jedi.create_environment(self.interpreter, safe=False)
            kwargs = {"environment_path": self.interpreter}
            self._project = self._jedi.Project(self.root, **kwargs) if self.root else None
        return self._environment

    def warm_up(self) -> None:
        """The first question in a process costs seconds (jedi reads torch): ask it early."""
        self.facts("import torch\nfrom torch import nn\nx = torch.zeros(1)\nm = nn.Linear(1, 1)\nx\nm\n", None, [(5, 0), (6, 0)])

    def facts(self, source: str, path: Optional[str], positions: Iterable[tuple[int, int]]) -> dict:
        """(1-based line, code-point column) -> TypeFact, for the positions jedi can type."""
        positions = list(positions)
        digest = hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        out, missing = {}, []
        for pos in positions:
            key = (digest, path, pos)
            if key in self._answers:
                self._answers.move_to_end(key)
                if self._answers[key] is not None:
                    out[pos] = self._answers[key]
            else:
                missing.append(pos)
        if not missing:
            return out
        script = self._jedi.Script(source, path=path, project=self._project_for(), environment=self._env())
        for pos in missing:
            self.questions += 1
            try:
                fact = classify(script.infer(pos[0], pos[1]))
            except Exception:  # noqa: BLE001 - jedi fails on odd code: no fact, never an error
                log.debug("jedi failed at %s:%s", path, pos, exc_info=True)
                fact = None
            self._answers[(digest, path, pos)] = fact
            if fact is not None:
                out[pos] = fact
        while len(self._answers) > CACHE_SIZE:
            self._answers.popitem(last=False)
        self._bound_jedi_memory()
        return out

    def _bound_jedi_memory(self) -> None:
        """jedi's own caches only grow; past a bound they are dropped (the next question re-reads)."""
        import parso.cache

        if sum(len(v) for v in parso.cache.parser_cache.values()) > PARSED_MODULES:
            parso.cache.parser_cache.clear()
            self._jedi.cache.clear_time_caches(True)

    def goto(self, source: str, path: Optional[str], line: int, column: int):
        """jedi's definitions of the name at a position (for hovers: which `detach` is this?)."""
        script = self._jedi.Script(source, path=path, project=self._project_for(), environment=self._env())
        self.questions += 1
        return script.goto(line, column, follow_imports=True)

    def _project_for(self):
        self._env()
        return self._project
