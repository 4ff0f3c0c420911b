"""The records of the model the walk builds: grad modes, bindings of names in scopes, the frame of
the body being walked, the file's classes and functions, and the stores and backwards it found."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from gradguard.engine.handing import argument, handed_out_methods
from gradguard.engine.values import UNKNOWN, Value


class GradMode(enum.Enum):
    ON = "on"
    OFF = "off"  # torch.no_grad(), inference_mode(), set_grad_enabled(False)
    UNKNOWN = "unknown"  # set_grad_enabled(flag)


CLASS_KEY = "<class>"  # the class a class body belongs to (not an identifier: a method may be named __class__)


@dataclass(eq=False)
class Binding:
    value: Value
    loops: tuple  # loop nodes of the function that were running when it was bound
    node: Optional[cst.CSTNode] = None
    # Stands for this binding among a value's graph origins (the binding itself
    # there would be a reference cycle: its value's origins would hold it).
    token: object = field(default_factory=object, repr=False)


def param_token(fn: "FunctionInfo", name: str) -> tuple:
    """The identity of the binding of `fn`'s parameter `name` (the same in every analysis of `fn`): a
    value that holds what the parameter held, written to (`total += loss`) or added to and rebound
    (`total = total + loss`), carries it among its origins, and so does what `fn` returns of it."""
    return ("param", fn, name)


@dataclass(eq=False)
class Scope:
    kind: str  # "module" | "function" | "class"
    parent: Optional["Scope"]
    env: dict = field(default_factory=dict)
    function: Optional[FunctionInfo] = None


@dataclass(eq=False)
class Frame:
    """Walk state of one function (or module) body being analysed."""

    scope: Scope
    loops: tuple = ()
    modes: list = field(default_factory=lambda: [GradMode.ON])
    mode_nodes: list = field(default_factory=lambda: [None])  # the `torch.no_grad()` that set each mode
    inference: Optional[cst.CSTNode] = None  # the `torch.inference_mode()` in force (a `with` item or decorator)
    inert: Optional[cst.CSTNode] = None  # a `torch.enable_grad()` that inference mode keeps from recording
    fresh_attrs: set = field(default_factory=set)  # `self.x` made a new empty container by this call (Places)
    # `reporter.observation` -> the loop whose every iteration makes it a new empty container first (Places)
    reset_in_loop: dict = field(default_factory=dict)

    @property
    def mode(self) -> GradMode:
        return self.modes[-1]


@dataclass(eq=False)
class ClassInfo:
    name: str
    node: cst.ClassDef
    is_module: bool
    parameterized: bool
    scope: "Scope"
    attrs: dict = field(default_factory=dict)  # self.<attr> -> Value, merged over all methods
    # self.<attr> -> {method: (its analysis, Value)}: a method analysed again (in its callers' context)
    # replaces what its earlier analysis assigned instead of merging with it
    attr_sources: dict = field(default_factory=dict)
    methods: dict = field(default_factory=dict)  # name -> FunctionInfo
    lightning: bool = False
    unknown_base: bool = False  # a base class imported from elsewhere, not known to be torch's
    acts_as_module: bool = False  # sets torch layers on itself or uses nn.Module's API on self (evidence.acts_as_module)
    test_case: bool = False  # a unittest.TestCase: its methods are tests
    bases: tuple = ()  # the classes of the file it derives from, in order (ClassInfo)
    handed: Optional[dict] = None  # its methods its own code hands out uncalled (handing.handed_out_methods)

    def method(self, name: str) -> Optional["FunctionInfo"]:
        """The method `name` as an instance of the class runs it: its own, else the first base class of
        the file that defines it, depth first in the order of the bases (Python's order wherever no two
        bases share a base)."""
        return _method(self, name, set())

    @property
    def module_like(self) -> bool:
        """An nn.Module subclass, or a class of an unknown base that has a forward() or does what only
        a module does (transformers' modular files subclass models of other files) - never by its name."""
        return self.is_module or "forward" in self.methods or (self.unknown_base and self.acts_as_module)


@dataclass(eq=False)
class FunctionInfo:
    name: str
    node: cst.FunctionDef
    scope: "Scope"  # the defining scope (closures and globals)
    cls: Optional[ClassInfo] = None
    decorated_mode: Optional[GradMode] = None
    context: Optional[tuple] = None  # (mode, params) it was last analysed with
    analyses: int = 0
    in_progress: bool = False
    returns: Value = UNKNOWN
    returned: bool = False  # a `return` with a value was seen in the current analysis
    yields: Optional[Value] = None  # a generator: what its `yield`s gave in the current analysis
    # FunctionInfos whose analysis used `returns`, in the order first seen (a dict: a set's order is the
    # objects' addresses, and what walks up the callers and stops at the first answer must not vary run to run)
    callers: dict = field(default_factory=dict)
    walked_at: Optional[tuple] = None  # (call, caller) its last analysis walked the body for; None: on its own
    called_at_top: bool = False  # module-level code calls it
    backwards: list = field(default_factory=list)  # the Backwards its last analysis ran (its callees' too)
    makes_graph: bool = False  # its last analysis called a model (itself or through its callees)
    kept: list = field(default_factory=list)  # Kept: graphs its last analysis left where they outlive the call
    freezes: set = field(default_factory=set)  # parameters whose every weight it sets requires_grad=False
    bound: dict = field(default_factory=dict)  # parameter -> the Value its last analysis bound it to
    dirty: bool = False
    call_modes: set = field(default_factory=set)
    call_sites: int = 0  # calls seen in this file (0: called from elsewhere, or by a framework)
    repeated: bool = False  # called over and over by a framework: `optimizer.step(closure)`
    keeps: Optional[dict] = None  # parameter -> where the function keeps it past the call (computed on first call)
    param_values: dict = field(default_factory=dict)  # parameter -> what the calls give it, joined
    given: dict = field(default_factory=dict)  # caller (None: the module) -> (its analysis, {parameter: Value})
    off_call: Optional[tuple] = None  # (call, the caller's `torch.no_grad()` or None): its first call with grad off

    def passed(self, param: str) -> Optional[tuple]:
        """(the argument, the caller) that the call this function's last analysis walked it for gives
        `param`: a parameter's value, up the calls. None when it was analysed on its own or the call
        does not say (`f(*xs)`, a default)."""
        if self.walked_at is None:
            return None
        call, caller = self.walked_at
        arg = argument(self.node, call, param, (), bound=self.cls is not None and isinstance(call.func, cst.Attribute))
        return (arg, caller) if arg is not None else None


def forward_code(fn: Optional[FunctionInfo], seen: Optional[set] = None) -> bool:
    """Does `fn` run as part of a model's forward, by what the code does, not by its name: torch's
    `forward()` itself; a function defined in forward code (`def custom_forward(*inputs)` handed
    to `checkpoint`); a method its nn.Module class hands out uncalled (`partial(self._shortcut,
    ...)`, `checkpoint(self._block, x)`: PyTorch or a layer runs it in the computation); a function
    every caller of which in this file is forward code (`self._forward(x)` in `forward`)."""
    if fn is None:
        return False
    if fn.name == "forward":
        return True
    seen = seen if seen is not None else set()
    seen.add(fn)
    outer = fn.scope.function if fn.scope is not None and fn.scope.kind == "function" else None
    if outer is not None and outer not in seen and forward_code(outer, seen):
        return True
    cls = fn.cls
    if cls is not None and cls.module_like:
        if cls.handed is None:
            cls.handed = handed_out_methods(cls.node, set(cls.methods))
        if fn.name in cls.handed:
            return True
    callers = [c for c in fn.callers if c not in seen]
    return bool(callers) and all(forward_code(c, seen) for c in callers)


@dataclass(eq=False)
class Store:
    """A graph-carrying value stored where it outlives the loop iteration."""

    node: cst.BaseExpression  # the stored expression (where a finding goes)
    value: Value
    target: str  # how the place reads in code: "losses", "self.last", "stats['loss']"
    token: object  # identity of the place (for "a later backward reads it")
    loop: cst.CSTNode  # innermost loop
    how: str  # "append", "accumulate", "assign", "item"
    function: Optional[FunctionInfo]
    via: Optional[str] = None  # the function of this file that stores it (`remember(loss)`)
    kept_at: Optional[cst.CSTNode] = None  # where that function keeps it (`SEEN` of `SEEN.append(v)`)
    made_in: tuple = ()  # the loops a local place was made in (`losses = []` in an outer loop's body)
    local: bool = False  # the place is a name this scope binds (not `self.x`, a global, a closure's)
    loops: tuple = ()  # every loop running at the store, outermost first


@dataclass(eq=False)
class Backward:
    node: cst.CSTNode
    origins: frozenset
    loops: tuple
    function: Optional[FunctionInfo]
    value: Value = UNKNOWN  # what was back-propagated
    # A backward that ran inside a call of a function of the file (`one_step(net, opt, x, y)`): `node`
    # is the call, in the caller's loops; `through` the function called, `real` the `.backward()` itself.
    through: Optional[FunctionInfo] = None
    real: Optional[cst.CSTNode] = None
    # ... or of a function of another file (outside.Returns): "in `one_step()` (engine.py line 9)"
    elsewhere: str = ""

    @property
    def by_call(self) -> bool:
        """Did it run inside a function this code calls (`node` the call), not at `node` itself?"""
        return self.through is not None or bool(self.elsewhere)

    @property
    def at(self) -> cst.CSTNode:
        """The `.backward()` call itself (for messages), wherever the walk met it."""
        return self.real if self.real is not None else self.node


@dataclass(eq=False)
class Kept:
    """A graph a function leaves where it outlives the call (its summary; applied at every call):
    in a container or object a parameter holds (`history.append(loss)`), on `self`, or in a global."""

    holder: tuple  # ("param", name) | ("self", attr) | ("global", name)
    stored: cst.CSTNode  # the stored expression, in the function
    value: Value
    kept_at: cst.CSTNode  # the place it is written, in the function (`history`, `self.sum`, `SEEN`)
    how: str
    suffix: str = ""  # the place within what the holder holds (`.sum` of `meter` for `meter.update(v)`)


def _method(info: ClassInfo, name: str, seen: set) -> Optional[FunctionInfo]:
    if info in seen:
        return None
    seen.add(info)
    found = info.methods.get(name)
    if found is not None:
        return found
    for base in info.bases:
        found = _method(base, name, seen)
        if found is not None:
            return found
    return None
