"""jedi, asked what syntax cannot tell: is `model` an nn.Module, is `arr` a tensor?

jedi reads the code; it never imports or runs the user's modules. Its
environment subprocess (the interpreter whose packages are read) imports only
compiled modules to inspect them - torch's C extension among them (~265 MB,
seconds on the first question): that is why the server asks nothing before it
has published its syntactic diagnostics, and warms jedi up in the background.

jedi is not thread-safe: an `Oracle` must be used from one thread only.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass
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
BATCH_PARSED_MODULES = 1500  # the same bound for a CLI run (`batch`): dropping torch's modules costs a re-read
# GradGuard's own small torch stubs (a PEP 561 `torch-stubs` package): given to jedi only when the
# chosen interpreter has no torch, so that `class G(nn.Module)` resolves in any environment.
STUBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stubs")
PROBE = "from torch import nn\nnn.Module\n"  # what must resolve for the type layer to be of use


@dataclass(frozen=True)
class Status:
    """Where `nn.Module` came from for jedi: "torch" (the interpreter's own), "stubs" (GradGuard's),
    or "unresolved" (neither: the type layer can add nothing about modules)."""

    state: str
    interpreter: str
    torch_path: Optional[str] = None  # the interpreter's torch package, when it has one

    @property
    def ok(self) -> bool:
        return self.state != "unresolved"

    def message(self) -> str:
        if self.state == "torch":
            return f"types: nn.Module from the torch of {self.interpreter} ({self.torch_path})"
        if self.state == "stubs":
            return f"types: no torch in {self.interpreter}; nn.Module from GradGuard's bundled torch stubs"
        where = f"its torch at {self.torch_path}" if self.torch_path else "no torch and no stubs"
        return (
            f"types are on but jedi cannot resolve torch.nn.Module with {self.interpreter} ({where}): "
            "nn.Module subclasses from other files cannot be recognised"
        )


def find_torch(sys_path: Iterable[str]) -> Optional[str]:
    """The torch package an interpreter would import, found on its sys.path without importing it."""
    for entry in sys_path:
        candidate = os.path.join(entry, "torch")
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            return candidate
    return None


def origin(value, root: Optional[str]) -> str:
    """Where a jedi value is defined, for hovers: "GradGuard's torch stubs", "torch", "numpy",
    or a file of the project ("models/net.py")."""
    try:
        path = value.get_root_context().py__file__()
    except Exception:  # noqa: BLE001 - builtins, compiled values
        path = None
    if path is None:
        return ""
    path = os.path.abspath(str(path))
    if path.startswith(STUBS + os.sep):
        return "GradGuard's torch stubs"
    if root and path.startswith(os.path.abspath(root) + os.sep) and os.sep + "site-packages" + os.sep not in path:
        return os.path.relpath(path, root).replace(os.sep, "/")
    parts = path.split(os.sep)
    for marker in ("site-packages", "dist-packages"):
        if marker in parts and parts.index(marker) + 1 < len(parts):
            package = parts[parts.index(marker) + 1]
            return "the interpreter's torch" if package == "torch" else package.removesuffix(".py")
    return os.path.basename(path)


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


def classify(names, root: Optional[str] = None) -> Optional[TypeFact]:
    """One fact from jedi's answer, or None if it is empty, ambiguous or says nothing useful.
    `root`: the project's directory (a class defined there is named by its file in `origin`)."""
    facts = set()
    for name in names:
        fact = _classify_one(name, root)
        if fact is None:
            return None
        facts.add(fact)
    return facts.pop() if len(facts) == 1 else None


def _classify_one(name, root: Optional[str] = None) -> Optional[TypeFact]:
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
        return TypeFact(kind, full, loss=LOSS in mro, origin=origin(cls, root))
    if name.type == "class":
        return None  # other classes: calling them makes objects syntax already treats as unknown
    if TENSORS & set(mro):
        return TypeFact("tensor", full, origin=origin(cls, root))
    if full == NDARRAY or NDARRAY in mro:
        return TypeFact("ndarray", full, origin=origin(cls, root))
    if full in NUMBERS:
        return TypeFact("number", full)
    if full in CONTAINERS:
        return TypeFact("container", full)
    if full.startswith(("builtins.", "typing.")):
        return None
    return TypeFact("object", full, origin=origin(cls, root))


_environments: dict = {}  # interpreter -> (jedi environment, its torch or None): one per process


def environment(jedi, interpreter: str):
    """jedi's environment for an interpreter, shared by every Oracle of the process (one
    subprocess each), and the torch package that interpreter has (None: GradGuard's stubs)."""
    if interpreter not in _environments:
        # safe=False: the interpreter is the user's choice (a setting or --python), not the file's
        env = jedi.create_environment(interpreter, safe=False)
        _environments[interpreter] = (env, find_torch(env.get_sys_path()))
    return _environments[interpreter]


class Oracle:
    """The one owner of jedi: a workspace project, an environment, bounded caches."""

    def __init__(self, root: Optional[str] = None, interpreter: Optional[str] = None, *, batch: bool = False):
        """`batch`: the CLI's use, a run over files that do not change meanwhile: one jedi inference
        state serves every file (what jedi inferred of torch and of the project's modules for one file
        serves the next), and what jedi keeps is moved out of the garbage collector's sight (see
        `_settle`). The server leaves it off: there a saved file must be read again."""
        import jedi  # the type layer only: the CLI without --types never pays for it

        self._jedi = jedi
        self.root = root
        self.interpreter = interpreter or sys.executable
        self.batch = batch
        self._state = None  # with `batch`: jedi's InferenceState, kept from one Script to the next
        self._batches = 0  # facts() calls that asked jedi, with `batch`
        self._environment = None
        self._project = None
        self._status: Optional[Status] = None
        self._answers: OrderedDict = OrderedDict()
        self.questions = 0  # asked of jedi (not answered from the cache)

    def _env(self):
        if self._environment is None:
            self._environment, torch = environment(self._jedi, self.interpreter)
            # No torch in that interpreter: GradGuard's stubs stand in for it (never beside a real torch,
            # whose own names and types are better).
            added = () if torch else (STUBS,)
            self.stubs = not torch
            self.torch_path = torch
            self._project = self._jedi.Project(
                self.root or os.getcwd(), environment_path=self.interpreter, added_sys_path=added
            )
        return self._environment

    def status(self) -> Status:
        """Whether jedi resolves `torch.nn.Module` here, and from where (asked once)."""
        if self._status is None:
            self._env()
            script = self._jedi.Script(PROBE, path=None, project=self._project, environment=self._environment)
            try:
                fact = classify(script.infer(2, 3))
            except Exception:  # noqa: BLE001 - jedi failed: as good as unresolved
                fact = None
            ok = fact is not None and fact.kind == "module-class"
            state = ("stubs" if self.stubs else "torch") if ok else "unresolved"
            self._status = Status(state, self.interpreter, self.torch_path)
        return self._status

    def warm_up(self) -> None:
        """The first question in a process costs seconds (jedi reads torch): ask it early."""
        self.facts("import torch\nfrom torch import nn\nx = torch.zeros(1)\nm = nn.Linear(1, 1)\nx\nm\n", None, [(5, 0), (6, 0)])

    def facts(self, source: str, path: Optional[str], positions: Iterable[tuple[int, int]]) -> dict:
        """(1-based line, code-point column) -> TypeFact, for the positions jedi can type."""
        positions = list(dict.fromkeys(positions))  # uses of one binding share their question
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
        script = self._script(source, path)
        for pos in missing:
            self.questions += 1
            try:
                fact = classify(script.infer(pos[0], pos[1]), self.root)
            except Exception:  # noqa: BLE001 - jedi fails on odd code: no fact, never an error
                log.debug("jedi failed at %s:%s", path, pos, exc_info=True)
                fact = None
            self._answers[(digest, path, pos)] = fact
            if fact is not None:
                out[pos] = fact
        while len(self._answers) > CACHE_SIZE:
            self._answers.popitem(last=False)
        cleared = self._bound_jedi_memory()
        if self.batch:
            self._settle(cleared)
        return out

    SETTLE_EVERY = 100  # batches between two full collections, with `batch`

    def _settle(self, cleared: bool) -> None:
        """jedi keeps ~1.5 million objects (parso trees, inferred values) alive from one question to
        the next; each of Python's full garbage collections walks them all, and the engine's own
        allocations trigger many: the checker ran 2x slower beside them. They are moved to the
        permanent generation (gc.freeze), which the collector skips; every SETTLE_EVERY batches, or
        when jedi's caches were dropped, one full collection first frees what has since become
        garbage (parso trees are cyclic: frozen, they would never be freed)."""
        self._batches += 1
        if cleared or self._batches % self.SETTLE_EVERY == 0:
            gc.unfreeze()
            gc.collect()
        gc.freeze()

    def _bound_jedi_memory(self) -> bool:
        """jedi's own caches only grow; past a bound they are dropped (the next question re-reads).
        True if they were."""
        import parso.cache

        bound = BATCH_PARSED_MODULES if self.batch else PARSED_MODULES
        if sum(len(v) for v in parso.cache.parser_cache.values()) > bound:
            parso.cache.parser_cache.clear()
            self._jedi.cache.clear_time_caches(True)
            self._state = None
            return True
        return False

    def goto(self, source: str, path: Optional[str], line: int, column: int):
        """jedi's definitions of the name at a position (for hovers: which `detach` is this?)."""
        script = self._script(source, path)
        self.questions += 1
        return script.goto(line, column, follow_imports=True)

    def _script(self, source: str, path: Optional[str]):
        """A jedi Script of `source`; with `batch`, on the inference state of the files before it
        (jedi makes one per Script: every file would infer torch's modules afresh, and inspect its
        compiled parts again through the environment's subprocess)."""
        script = self._jedi.Script(source, path=path, project=self._project_for(), environment=self._env())
        if self.batch:
            state = self._state
            if state is None:
                self._state = state = script._inference_state  # private API of jedi 0.20 (pinned: constraints.txt)
            else:
                script._inference_state = state
            state.script_path = script.path
            state.inferred_element_counts = {}  # jedi's per-Script bound on inferring one node
            state.reset_recursion_limitations()
        return script

    def _project_for(self):
        self._env()
        return self._project
