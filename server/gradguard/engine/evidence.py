"""Evidence from use: what the code does with a name tells what it holds, whoever made it.

Real training code rarely builds its model where the mistake is: `train(model,
loader, optimizer)` receives it. Syntax still tells a lot from how a name is used
(../shared/rules.md, "Evidence from use"):

- an nn.Module: module-only methods called on it (`model.eval()`,
  `model.parameters()` ...), or methods an optimizer also has (`zero_grad`,
  `state_dict`) on a name that is also called like a function;
- an instance of one of the file's nn.Module classes: the methods used on it
  (`decoder.init_state(...)`, one only that class defines), or a call shaped
  like that class's `forward()` (`attention(last_alignment)` for
  `forward(self, last_alignment)`: arguments named as its parameters, keywords
  it declares, the name a word of the class's name - two of them);
- a graph: `loss.backward()` or `torch.autograd.grad(loss, ...)` - PyTorch raises
  on a value without one.

Each kind of evidence is a named function over one scope's body: a function's own
statements (not its nested functions), the module's top level, or every method of
a class for `self.<attr>`. The flow analysis asks `Uses.module_evidence()` /
`Uses.graph_evidence()` only for names it could not know otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.backprop import Chains
from gradguard.engine.handing import names_in
from gradguard.engine.syntax import place_key, string_value
from gradguard.engine.walk import descendants, walk

# Methods only an nn.Module has (a tensor, a NumPy array or an optimizer has none of them).
MODULE_ONLY_METHODS = frozenset(
    """eval parameters named_parameters modules named_modules children named_children
    buffers named_buffers""".split()
)
# Module methods an optimizer or other objects share: evidence only on a name that is
# also called like a function (`model(x)`; an optimizer is never called).
MODULE_IF_CALLED = frozenset("train zero_grad state_dict load_state_dict".split())
SHALLOW_COPIES = frozenset(("dict", "list", "tuple", "copy.copy", "copy"))


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """`model`, `self.model`, `self.net.encoder` for a Name/Attribute chain, else None."""
    parts = []
    while type(node) is cst.Attribute:  # (exact types: see function_facts)
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


@dataclass
class Uses:
    """How one scope uses its names (keys are dotted code: `model`, `self.model`)."""

    module_calls: dict = field(default_factory=dict)  # key -> {method name: first call node}
    called: dict = field(default_factory=dict)  # key -> first call of the name itself
    backwards: dict = field(default_factory=dict)  # key -> first `.backward()` / autograd.grad on it
    recurrent: dict = field(default_factory=dict)  # key -> `out, h = key(x, h)` in a loop (a recurrent model's call)
    aliases: dict = field(default_factory=dict)  # name -> names it was bound from as a whole (`loss = losses`)
    backpropagates: bool = False  # any `.backward()` in the scope, of a name or not (`(a + b).sum().backward()`)
    members: dict = field(default_factory=dict)  # key -> {attribute used on it: first node} (`decoder.attend`)
    predicts: dict = field(default_factory=dict)  # key -> a loss call given its output (`criterion(model(x), y)`)
    unpacked: dict = field(default_factory=dict)  # call -> the names its results are unpacked to (`hm, box = net(x)`)
    keys_read: dict = field(default_factory=dict)  # call -> the constant keys read from its result (`out["state"]`)
    param_keys: dict = field(default_factory=dict)  # parameter -> the constant keys read from it (`outputs["weight"]`)
    passed: dict = field(default_factory=dict)  # call -> (call, name): calls its result is passed to by name (`stop(outputs)`)
    given: dict = field(default_factory=dict)  # name -> the calls it is passed to as an argument (`encode(vae, x)`)
    tensors: dict = field(default_factory=dict)  # name -> a use only a tensor allows (`box.flatten(2).numpy()`)
    # Evidence flowing back from a backward (backprop.py): names a back-propagated value was computed
    # from -> the backward; callables that computed it from data -> (their call, the backward).
    fed: dict = field(default_factory=dict)
    feeders: dict = field(default_factory=dict)
    zero_dim: dict = field(default_factory=dict)  # names a `.backward()` proves 0-dim (backprop.Chains.zero_dim)
    losses: dict = field(default_factory=dict)  # key -> (its call, the backward of its result): a loss

    def module_evidence(self, key: str) -> Optional[cst.Call]:
        """The call that shows `key` is an nn.Module, if any."""
        methods = self.module_calls.get(key) or {}
        for name, call in methods.items():
            if name in MODULE_ONLY_METHODS:
                return call
        if methods and key in self.called:  # the strongest first: train() says more than state_dict()
            return next(methods[name] for name in ("train", "zero_grad", "state_dict", "load_state_dict") if name in methods)
        # `out, hidden = rnn(x, hidden)` in a loop of a scope that back-propagates: a model fed its own
        # state back (truncated BPTT), whatever built it - also where a helper of the file makes the call
        # for it and a method (`rnn.train()`) says nothing by itself.
        found = self.recurrent.get(key) if self.backpropagates else None
        if found is None:
            found = self.predicts.get(key)
        return found if found is not None else self.feeders.get(key, (None,))[0]

    def graph_evidence(self, key: str) -> Optional[cst.Call]:
        """The call that shows `key` carried an autograd graph (backward would raise otherwise), on it
        or on what was computed from it."""
        found = self.backwards.get(key)
        return found if found is not None else self.fed.get(key)

    def merge(self, other: "Uses") -> None:
        for key, methods in other.module_calls.items():
            mine = self.module_calls.setdefault(key, {})
            for name, call in methods.items():
                mine.setdefault(name, call)
        for key, call in other.called.items():
            self.called.setdefault(key, call)
        for key, call in other.backwards.items():
            self.backwards.setdefault(key, call)
        for key, call in other.recurrent.items():
            self.recurrent.setdefault(key, call)
        for key, sources in other.aliases.items():
            self.aliases.setdefault(key, set()).update(sources)
        self.backpropagates |= other.backpropagates
        for key, call in other.predicts.items():
            self.predicts.setdefault(key, call)
        self.unpacked.update(other.unpacked)
        for key, node in other.tensors.items():
            self.tensors.setdefault(key, node)
        for call, keys in other.keys_read.items():
            self.keys_read.setdefault(call, set()).update(keys)
        for name, keys in other.param_keys.items():
            self.param_keys.setdefault(name, set()).update(keys)
        for call, calls in other.passed.items():
            self.passed.setdefault(call, []).extend(calls)
        for name, calls in other.given.items():
            self.given.setdefault(name, []).extend(calls)
        for key, attrs in other.members.items():
            mine = self.members.setdefault(key, {})
            for name, node in attrs.items():
                mine.setdefault(name, node)

    def backward_through_aliases(self) -> None:
        """`loss = losses` (in some branch) and then `loss.backward()`: the object `losses`
        names was back-propagated, so it carried a graph too."""
        for key, call in list(self.backwards.items()):
            for source in self.aliases.get(key, ()):
                self.backwards.setdefault(source, call)


class _UseFinder(cst.CSTVisitor):
    """Collects the uses in one scope's own statements (nested defs, classes and lambdas are their own scopes)."""

    def __init__(self, root: cst.CSTNode, helpers=None):
        self.root = root
        # what a statement's value is, through a helper of the file that hands on its argument
        # (`out, h = as_pair(rnn(x, h))[0]`): handing.FileHelpers.handed_on
        self._handed_on = helpers.handed_on if helpers is not None else _itself
        # what a loop's name is, read from the dict the loop runs over (`value` of `for key, value in
        # as_dict(rnn(x, h)).items():`): handing.FileHelpers.iterated, while the loop's body is walked
        self._iterated = helpers.iterated if helpers is not None else _nothing
        self.through: dict = {}
        # what a call of the file's helper runs for its caller (`out = self.predict(qa)` runs `self.model`)
        self.runs = helpers.runs if helpers is not None else _nothing
        self.uses = Uses()
        self.loops = 0
        self.results: dict = {}  # name -> the callee whose result it was bound to (`out = model(x)`)
        self.bound: dict = {}  # name -> the call whose result it was bound to (`err = crit(out, y)`)
        self.params = frozenset(named_params(root)) if isinstance(root, cst.FunctionDef) else frozenset()
        self.built_losses = built_losses(helpers) if helpers is not None else frozenset()

    def visit_For(self, node) -> None:
        self.loops += 1
        found = self._iterated(node)
        if found is not None:
            self.through[found[0]] = found[1]

    def leave_For(self, node) -> None:
        self.loops -= 1
        found = self._iterated(node)
        if found is not None:
            self.through.pop(found[0], None)

    def handed(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """The expression whose very value `expr` is (`rnn(x, h)` of `as_pair(rnn(x, h))[0]`, and of
        `value` in `for key, value in as_dict(rnn(x, h)).items():`)."""
        expr = self._handed_on(expr)
        if type(expr) is cst.Name and expr.value in self.through:
            return self._handed_on(self.through[expr.value])
        return expr

    def visit_While(self, node) -> None:
        self.loops += 1

    def leave_While(self, node) -> None:
        self.loops -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        """`out, h = rnn(x, h)` in a loop: the callee is fed back its own state; `loss = losses`:
        one object under two names."""
        call = self.handed(node.value)
        if isinstance(call, cst.Name) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.uses.aliases.setdefault(node.targets[0].target.value, set()).add(call.value)
            return
        if isinstance(call, cst.Call) and len(node.targets) == 1 and place_key(node.targets[0].target):
            key = self._callee(call)
            if key is not None:
                self.results[place_key(node.targets[0].target)] = key  # (`self.out = self.model(qa)` too)
            self.bound[place_key(node.targets[0].target)] = call
        if isinstance(call, cst.Call) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Tuple):
            names = [e.value.value if isinstance(e.value, cst.Name) else None for e in node.targets[0].target.elements]
            self.uses.unpacked[call] = names
        if not self.loops or not isinstance(call, cst.Call):
            return
        key = self._callee(call)
        if key is None or "." in key and not key.startswith("self."):
            return  # `np.foo(...)`, `env.step(...)`: a module's function or an object's method
        bound = {n for t in node.targets for n in _bound(t.target)}
        passed = {n for a in call.args for n in _bound(a.value)}
        if bound & passed and len(bound) > 1:
            self.uses.recurrent.setdefault(key, call)

    def _nested(self, node) -> bool:
        return node is not self.root

    def _callee(self, call: cst.Call) -> Optional[str]:
        """The dotted name of what `call` runs: its callee, or what a helper of the file runs for it."""
        ran = self.runs(call)
        return dotted(ran) if ran is not None else dotted(call.func)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return not self._nested(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return not self._nested(node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        key = dotted(self.handed(node.value))  # (`as_dict(vae)["out"].encode`: a member of `vae`)
        if key is not None:
            self.uses.members.setdefault(key, {}).setdefault(node.attr.value, node)
        if node.attr.value in K.TENSOR_ONLY_MEMBERS:
            root = tensor_root(node.value)
            if root is not None:
                self.uses.tensors.setdefault(root, node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """`outputs["state"]` of `outputs = model(...)`, `model(x)["logits"]`: which keys of a call's
        result the code reads (a fact of the callee's API, as a keyword is)."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        index = node.slice[0].slice.value
        if not isinstance(index, cst.SimpleString):
            return
        key = string_value(index.value)
        call = node.value if isinstance(node.value, cst.Call) else (
            self.bound.get(place_key(node.value)) if place_key(node.value) else None)
        if isinstance(call, cst.Call) and isinstance(key, str):
            self.uses.keys_read.setdefault(call, set()).add(key)
        elif type(node.value) is cst.Name and node.value.value in self.params and isinstance(key, str):
            self.uses.param_keys.setdefault(node.value.value, set()).add(key)  # (what a helper reads of what it is given)

    def _criterion(self, node: cst.Call) -> None:
        """`crit(out, y).item()`, `err = crit(out, y); err.backward()`: a call given a prediction and
        a target whose result is reduced to a number or back-propagated is a loss or a metric, by
        what its result flows into - whatever it is called."""
        receiver = node.func.value
        call = receiver if isinstance(receiver, cst.Call) else self.bound.get(place_key(receiver))
        if isinstance(call, cst.Call) and sum(a.keyword is None and not a.star for a in call.args) >= 2:
            self._prediction(call)

    def _prediction(self, node: cst.Call) -> None:
        """`crit(model(x), y)`, `out = self.model(qa); self.crit(out, t)`: the callee whose output a
        loss takes as its prediction is a model - when it is a parameter or an attribute of `self`
        (what the code was given), not a function imported from elsewhere. (A loss: one of torch's
        functional losses, or a call whose result is reduced or back-propagated, `_criterion`.)"""
        key = dotted(node.func)
        first = next((a.value for a in node.args if a.keyword is None and not a.star), None)
        if key is None or first is None:
            return
        first = self.handed(first)
        model = self._callee(first) if isinstance(first, cst.Call) else (
            self.results.get(place_key(first)) if place_key(first) else None)
        if model is not None and (model.startswith("self.") and model.count(".") == 1 or model in self.params):
            self.uses.predicts.setdefault(model, node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        key = dotted(func)
        if key is not None and (key.rsplit(".", 1)[-1] in K.FUNCTIONAL_LOSSES or key in self.built_losses):
            self._prediction(node)
        for a in node.args:  # `stop(outputs)` after `outputs = model(x)`: the result handed to another call
            if type(a.value) is not cst.Name or a.star:
                continue
            self.uses.given.setdefault(a.value.value, []).append(node)
            made = self.bound.get(a.value.value)
            if made is not None:
                self.uses.passed.setdefault(made, []).append((node, a.value.value))
        if isinstance(func, cst.Attribute):
            key = dotted(self.handed(func.value))  # (`as_dict(model)["out"].eval()`: a method of `model`)
            method = func.attr.value
            if method in ("item", "backward"):
                self._criterion(node)
            if method in ("backward", "manual_backward"):
                self.uses.backpropagates = True
            if key is not None:
                if method in MODULE_ONLY_METHODS or method in MODULE_IF_CALLED:
                    if method != "train" or _train_args(node):
                        self.uses.module_calls.setdefault(key, {}).setdefault(method, node)
                if method == "backward" and not any(a.keyword is None for a in node.args):
                    self.uses.backwards.setdefault(key, node)  # not `accelerator.backward(loss)`
            if method == "backward" and any(a.keyword is None for a in node.args):
                arg = dotted(next(a.value for a in node.args if a.keyword is None))
                if arg is not None:
                    self.uses.backwards.setdefault(arg, node)  # `accelerator.backward(loss)`: the loss has one
            elif method == "backward":
                # `out["loss"].backward()`, `outputs.loss.backward()`: the container a model
                # returned holds graphs - its other items too.
                holder = _holder(func.value)
                if holder is not None:
                    self.uses.backwards.setdefault(holder, node)
        key = dotted(func)
        if key is not None:
            self.uses.called.setdefault(key, node)
            if key in K.BACKWARD_SPELLINGS and node.args:
                first = node.args[0]
                target = first.value if first.keyword is None or first.keyword.value in ("outputs", "tensors") else None
                out = dotted(target) if target is not None else None
                self.uses.backpropagates = True
                if out is not None:
                    self.uses.backwards.setdefault(out, node)


def tensor_root(node: cst.BaseExpression) -> Optional[str]:
    """The plain name a value was read from through steps that keep a tensor a tensor and an array an
    array (`box.flatten(2)[0, :, peak].data` -> box; K.TENSOR_KEEPING, subscripts), or None."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in K.TENSOR_KEEPING:
            node = node.func.value
        elif isinstance(node, cst.Attribute) and node.attr.value in K.TENSOR_KEEPING:
            node = node.value
        else:
            return None


def _itself(node: cst.BaseExpression) -> cst.BaseExpression:
    return node


def _nothing(node: cst.BaseExpression) -> None:
    return None


def built_losses(helpers) -> frozenset:
    """Places the file binds to one of torch.nn's losses, in the statements of its top level, of its
    functions and of its classes' methods (`criterion = nn.CrossEntropyLoss()`, `self.crit =
    torch.nn.MSELoss()`): a loss by what it is, whatever it is called. (Cached on the file's helpers.)"""
    found = getattr(helpers, "built_losses", None)
    if found is None:
        found = set()
        body = list(helpers.module.body)
        for stmt in list(body):
            if isinstance(stmt, cst.ClassDef):
                body += [s for s in stmt.body.body if isinstance(s, cst.FunctionDef)]
        for stmt in body:
            lines = stmt.body.body if isinstance(stmt, cst.FunctionDef) else [stmt]
            for line in lines:
                for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
                        key = dotted(small.value.func)
                        if key is not None and key.rsplit(".", 1)[-1] in K.NN_LOSSES:
                            found.update(place_key(t.target) for t in small.targets)
        found = helpers.built_losses = frozenset(found - {None})
    return found


def named_params(fn: cst.FunctionDef) -> dict:
    """name -> `Param` of a function's named parameters (positional-only, ordinary, keyword-only)."""
    ps = fn.params
    return {p.name.value: p for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)}


def _bound(node: cst.BaseExpression) -> list:
    """The places in a target or argument: `h`, `(h, c)`, `out, (h, c)`, a method's `self.h`."""
    key = place_key(node)
    if key is not None:
        return [key]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [n for e in node.elements for n in _bound(e.value)]
    return []


def _holder(node: cst.BaseExpression) -> Optional[str]:
    """`out` of `out["loss"]` or `out[0]`; `outputs` of `outputs.loss`."""
    if isinstance(node, cst.Subscript) or isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return dotted(node.value)
    return None


def _train_args(call: cst.Call) -> bool:
    """`train()` / `train(True)` / `train(mode=flag)`: a module's; `trainer.train(loader, epochs)` is not."""
    return len(call.args) <= 1 and all(a.star == "" for a in call.args)


_METHOD = re.compile(r"\.\s*(" + "|".join(sorted(MODULE_ONLY_METHODS | MODULE_IF_CALLED | {"backward"})) + r")\s*\(")
_RECEIVER = re.compile(r"(?<![\w.)\]])([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*(\[[^\]\n]*\]\s*)?$")
_BACKWARD_OF = re.compile(r"\.\s*backward\s*\(\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*[,)]")
_GRAD = re.compile(r"autograd\s*\.\s*(?:grad|backward)\s*\(\s*(?:\w+\s*=\s*)?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")


_RECURRENT = re.compile(r"^[ \t]*([\w. \t,()\[\]]+,[\w. \t,()\[\]]*?)=[ \t]*([A-Za-z_][\w.]*)[ \t]*\(([^\n]*)$", re.M)
# A call's first argument, when it is a name or a given callable's call (`self.model(`, `model(`)
# followed by more: a loss's prediction (`crit(model(x), y)`, _UseFinder._criterion).
_LOSS_OF = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*\(\s*((?:self\s*\.\s*)?[A-Za-z_]\w*)\s*([(,])")
_BUILT = re.compile(r"^[ \t]*((?:self\s*\.\s*)?[A-Za-z_]\w*)[ \t]*=[ \t]*(?:[A-Za-z_]\w*\.)*(\w+)\s*\(", re.M)
_RESULT = re.compile(r"^[ \t]*((?:self\.)?[A-Za-z_]\w*)[ \t]*=[ \t]*((?:self\.)?[A-Za-z_]\w*)[ \t]*\(([^\n]*)", re.M)
_CALLEE = re.compile(r"(?<![\w.])((?:self\s*\.\s*)?[A-Za-z_]\w*)\s*\(")
_WORD = re.compile(r"[A-Za-z_]\w*")
_ALIAS = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*([A-Za-z_]\w*)[ \t]*(?:#[^\n]*)?$", re.M)


def _receiver_before(source: str, end: int) -> Optional[tuple[str, bool]]:
    """The dotted name a method call at `end` is made on (`model` of `model.eval(`, without
    whitespace), and whether it was subscripted (`outs[0].backward(`)."""
    r = _RECEIVER.search(source, max(0, end - 160), end)
    return None if r is None else (re.sub(r"\s+", "", r.group(1)), r.group(2) is not None)


_PLAIN_ARGUMENT = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)(?![\w'\"]|\s*[(.=])")


def _handed_receivers(source: str, end: int) -> list:
    """The plain names a method call at `end` may be made on through a helper that hands a value on
    (handing.py): `vae` of `as_dict(vae)["out"].encode(` (the names given to the calls before it on
    its line), and of `value.encode(` in `for key, value in as_dict(vae).items():` (those given to the
    calls of the loop's iterable). A superset, for the tree to decide."""
    start = source.rfind("\n", 0, end) + 1
    before = source[start:end].rstrip()
    if before.endswith((")", "]")):
        return _PLAIN_ARGUMENT.findall(before[before.find("(") + 1:]) if "(" in before else []
    r = _receiver_before(source, end)
    if r is None or r[1] or "." in r[0]:
        return []
    return _iterated_arguments(source).get(r[0], [])


@lru_cache(maxsize=8)
def _iterated_arguments(source: str) -> dict:
    """Loop variable -> the plain names given to the calls of the loop's iterable (`value` ->
    [`rnn`, `x`, `h`] of `for key, value in as_dict(rnn(x, h)).items():`), read once per file."""
    found: dict = {}
    for m in _ITERATED.finditer(source):
        found.setdefault(m.group(1), []).extend(_PLAIN_ARGUMENT.findall(m.group(2)))
    return found


def mentioned(source: str) -> frozenset:
    """Every dotted name that could have evidence in this file: one text search, so that the
    many unknown names with none (`x`, `config`, `hidden_states`) never cost a tree walk."""
    keys = set()
    for m in _METHOD.finditer(source):
        keys.update(_handed_receivers(source, m.start()))  # (`as_dict(model)["out"].eval()`)
        found = _receiver_before(source, m.start())
        if found is None:
            continue
        chain = found[0]
        keys.add(chain)
        if m.group(1) == "backward" and "." in chain:
            keys.add(chain.rsplit(".", 1)[0])  # `outputs.loss.backward()`: `outputs` holds graphs
    keys.update(m.group(1) for m in _GRAD.finditer(source))
    for m in _RECURRENT.finditer(source):  # `out, h = rnn(x, h)` (`= as_pair(rnn(x, h))[0]`: every callee there)
        if set(_WORD.findall(m.group(1))) & set(_WORD.findall(m.group(3))):
            keys.add(m.group(2))
            keys.update(re.sub(r"\s+", "", c) for c in _CALLEE.findall(m.group(3)))
    for m in _ITERATED.finditer(source):  # `for key, value in as_dict(rnn(x, h)).items():`, then `out, h = value`
        keys.update(re.sub(r"\s+", "", c) for c in _CALLEE.findall(m.group(2)))
    keys.update(m.group(1) for m in _BACKWARD_OF.finditer(source))
    results = None
    reduced = ".item(" in source or "backward" in source  # what tells a loss (_UseFinder._criterion)
    built = {re.sub(r"\s+", "", m.group(1)) for m in _BUILT.finditer(source) if m.group(2) in K.NN_LOSSES}
    for m in _LOSS_OF.finditer(source):  # `crit(model(x), y)`, `crit(out, y)` after `out = model(x)`
        if not reduced and m.group(1).rsplit(".", 1)[-1] not in K.FUNCTIONAL_LOSSES and m.group(1) not in built:
            continue
        if m.group(3) == "(":
            keys.add(re.sub(r"\s+", "", m.group(2)))
            continue
        if results is None:
            results = {}
            for r in _RESULT.finditer(source):
                results.setdefault(r.group(1), set()).update((r.group(2), *_CALLEE.findall(r.group(3))))
        keys.update(results.get(re.sub(r"\s+", "", m.group(2)), ()))
    keys.update(m.group(2) for m in _ALIAS.finditer(source) if m.group(1) in keys)  # `loss = losses`
    if "backward" in source or "autograd" in source:
        # what a backward's value was computed from (backprop.py): assigned names, and the callables
        # and predictions they were computed with
        keys.update(m.group(1) for m in _ASSIGNED.finditer(source))
        for m in _UNPACKED.finditer(source):  # `loss, loss_chords = compute_loss(...)` (items_through_helpers)
            keys.update(n.strip() for n in m.group(1).split(","))
        keys.update(re.sub(r"\s+", "", m.group(1)) for m in _CALLED.finditer(source))
    return frozenset(keys)


_UNPACKED = re.compile(r"^[ \t]*(\w+(?:[ \t]*,[ \t]*\w+)+)[ \t]*,?[ \t]*=(?!=)", re.M)
_ASSIGNED = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?[-+*/]?=(?!=)", re.M)
_CALLED = re.compile(r"(?<![\w.])((?:self\s*\.\s*)?[A-Za-z_]\w*)\s*\(\s*(?=[A-Za-z_])")  # (a lookahead: `loss(net(x)` names both)


# Methods many kinds of object define (a tokenizer's `encode`, a meter's `update`): that one class
# of the file defines it does not say a receiver is an instance of that class.
COMMON_METHODS = frozenset(
    """forward update step reset run get set add save load close fit predict encode decode sample generate
    train eval compute process apply init build call copy clear to cuda cpu items keys values append extend
    pop remove read write open start stop log info warning error debug format parse setup teardown
    configure prepare transform inverse_transform score summary describe show plot""".split()
)


def no_op(fn: cst.FunctionDef) -> bool:
    """A body that does nothing: `pass`, `...`, a docstring, `raise NotImplementedError` - a base
    class's hook for subclasses to fill (`class Callback: def on_epoch_end(self, trainer): pass`)."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else fn.body.body
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if isinstance(small, cst.Pass) or isinstance(small, cst.Expr) and isinstance(
                    small.value, (cst.Ellipsis, cst.SimpleString, cst.ConcatenatedString)):
                continue
            if isinstance(small, cst.Raise) and small.exc is not None and \
                    (dotted(small.exc.func if isinstance(small.exc, cst.Call) else small.exc) or "") == "NotImplementedError":
                continue
            return False
    return True


def class_methods(module: cst.Module) -> dict:
    """method -> the one top-level class of the file that defines it (public, not a name other
    objects share): what tells an instance of that class (FromUse._instance_by_members). A base
    class's no-op hook does not count beside a class that fills it in (a callback's `on_epoch_end`:
    what a call of it can run is the one real body)."""
    seen: dict = {}
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef):
            for s in stmt.body.body:
                if isinstance(s, cst.FunctionDef):
                    seen.setdefault(s.name.value, []).append((stmt.name.value, no_op(s)))
    out = {}
    for m, owners in seen.items():
        real = [name for name, empty in owners if not empty]
        if len(owners) > 1 and len(real) == 1:
            owners = [(real[0], False)]
        if len(owners) == 1 and m not in COMMON_METHODS and m not in K.TORCH_METHOD_NAMES and not m.startswith("_"):
            out[m] = owners[0][0]
    return out


def interface_receivers(source: str, module: cst.Module) -> set:
    """Dotted names on which two methods or more are called, each defined by one top-level class of the
    file and by no other (`vae` of `vae.encode(x)` ... `vae.decode(z)`, names common alone): candidates
    for an instance of that class (FromUse._instance_by_members decides)."""
    owners: dict = {}
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef):
            for s in stmt.body.body:
                if isinstance(s, cst.FunctionDef) and not s.name.value.startswith("_") and s.name.value != "forward":
                    owners.setdefault(s.name.value, set()).add(stmt.name.value)
    unique = {m for m, o in owners.items() if len(o) == 1 and m not in K.TORCH_METHOD_NAMES}
    if not unique:
        return set()
    called: dict = {}
    for m in re.finditer(r"\.\s*(" + "|".join(sorted(unique)) + r")\s*\(", source):
        r = _receiver_before(source, m.start())
        if r is not None and not r[1] and r[0] not in ("self", "super") and "." not in r[0]:
            called.setdefault(r[0], set()).add(m.group(1))
        for name in _handed_receivers(source, m.start()):  # (`as_dict(vae)["out"].encode(x)`)
            called.setdefault(name, set()).add(m.group(1))
    return {key for key, methods in called.items()
            if len(methods) >= 2 and len({c for m in methods for c in owners[m]}) == 1}


def frozen_by(loop: cst.For) -> Optional[cst.BaseExpression]:
    """`for p in model.parameters(): p.requires_grad = False` (or over `named_parameters()`, with
    every branch of an `if` setting it): the module whose every parameter the loop freezes."""
    it, target = loop.iter, loop.target
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and not it.args
            and it.func.attr.value in ("parameters", "named_parameters")):
        return None
    if it.func.attr.value == "named_parameters" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target = target.elements[1].value
    if not isinstance(target, cst.Name):
        return None
    return it.func.value if _always_freezes(loop.body, target.value) else None


def _always_freezes(suite, name: str) -> bool:
    """Does every path through `suite` set `<name>.requires_grad = False` (or `requires_grad_(False)`)?"""
    for stmt in getattr(suite, "body", ()):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
                if (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"
                        and isinstance(target.value, cst.Name) and target.value.value == name
                        and isinstance(small.value, cst.Name) and small.value.value == "False"):
                    return True
                call = small.value if isinstance(small, cst.Expr) else None
                if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                        and call.func.attr.value == "requires_grad_" and isinstance(call.func.value, cst.Name)
                        and call.func.value.value == name and call.args
                        and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False"):
                    return True
        elif isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else):
            if _always_freezes(stmt.body, name) and _always_freezes(stmt.orelse.body, name):
                return True
    return False


def plain_class_methods(module: cst.Module) -> frozenset:
    """Methods of the file's own classes that derive from nothing (`class Value:` of micrograd, with
    its `backward()` and `parameters()`): in such a file `x.backward()` or `n.parameters()` may well be
    theirs, so those calls are no evidence of a tensor or an nn.Module."""
    found = set()
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef) and all(
            isinstance(b.value, cst.Name) and b.value.value == "object" for b in stmt.bases
        ):
            found.update(s.name.value for s in stmt.body.body if isinstance(s, cst.FunctionDef))
    return frozenset(found)


def member_receivers(source: str, methods: frozenset) -> set:
    """Dotted names on which one of `methods` is called: `decoder` of `decoder.attend(...)`."""
    if not methods:
        return set()
    found = set()
    for m in re.finditer(r"\.\s*(?:" + "|".join(sorted(methods)) + r")\s*\(", source):
        r = _receiver_before(source, m.start())
        if r is not None and not r[1]:
            chain = r[0]
            if chain not in ("self", "super") and chain.count(".") <= chain.startswith("self."):
                found.add(chain)
        found.update(n for n in _handed_receivers(source, m.start()) if n not in ("self", "super"))
    return found


def class_members(node: cst.ClassDef) -> frozenset:
    """What an instance of a class has by its own code: its methods, its class attributes, and
    every `self.x = ...` in its methods (a walk over statements only)."""
    names = set()
    for stmt in node.body.body:
        if isinstance(stmt, cst.FunctionDef):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    names.update(t.value for t in targets if isinstance(t, cst.Name))
    assigns = _SelfAssigns()
    walk(node, assigns)
    for _, found in assigns.classes[:1]:  # the class's own `self`, not a nested class's
        names.update(found)
    return frozenset(names)


def init_submodules(node: cst.ClassDef, module_classes: frozenset) -> frozenset:
    """The attributes a class's `__init__` sets to a new module: `self.encoder = Encoder(...)` of a
    module class of the file (`module_classes`), `self.projection = nn.Linear(...)`."""
    init = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return frozenset()
    assigns = _SelfAssigns()
    assigns.stack.append({})
    walk(init.body, assigns)
    found = set()
    for attr, values in assigns.stack[0].items():
        callees = [dotted(v.func) or "" if isinstance(v, cst.Call) else "" for v in values]
        if all(c.rsplit(".", 1)[-1] in module_classes | WEIGHTED_LAYERS
               or c.startswith(("nn.", "torch.nn.")) and c.rsplit(".", 1)[-1][:1].isupper() for c in callees):
            found.add(attr)
    return frozenset(found)


# nn.Module's own API a class uses on itself: registering state, reading its parameters or mode.
SELF_MODULE_API = frozenset(
    """register_buffer register_parameter register_module add_module parameters named_parameters modules
    named_modules children named_children buffers named_buffers training""".split()
)


class _SelfApi(cst.CSTVisitor):
    """nn.Module's API used on `self`; and whether the code trains (`.backward()`, `opt.step()`)."""

    def __init__(self):
        self.found = False
        self.trains = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == "self" and node.attr.value in SELF_MODULE_API:
            self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and (func.attr.value in K.BACKWARD_METHODS or func.attr.value == "step" and not node.args):
            self.trains = True
        elif (dotted(func) or "") in K.BACKWARD_SPELLINGS:
            self.trains = True


def acts_as_module(node: cst.ClassDef) -> bool:
    """A class that does what only an nn.Module does, whatever its base or name: its `__init__` sets
    torch layers on it (`self.proj = nn.Linear(...)`), or its methods use nn.Module's API on `self`
    (`self.register_buffer(...)`, `self.parameters()`, `self.training`). For a class of a base imported
    from elsewhere (transformers' modular files subclass the models of other files). Not a class whose
    code back-propagates or steps an optimizer: a trainer holding its models (`self.G = nn.Sequential(...)`)."""
    finder = _SelfApi()
    for stmt in node.body.body:
        if isinstance(stmt, cst.FunctionDef):
            walk(stmt.body, finder)
            if finder.trains:
                return False
    return finder.found or bool(init_submodules(node, frozenset()))


def submodule_receivers(source: str, submodules: frozenset) -> set:
    """Dotted names whose submodule is called: `model.module` of `model.module.encoder(x)`."""
    if not submodules:
        return set()
    found = set()
    for m in re.finditer(r"\.\s*(?:" + "|".join(sorted(submodules)) + r")\s*\(", source):
        r = _receiver_before(source, m.start())
        if r is not None and not r[1] and r[0] not in ("self", "super"):
            found.add(r[0])
    return found


def forward_signatures(module: cst.Module) -> list:
    """(class name, positional parameters, every parameter name, the forward itself) of the `forward()`
    of each top-level class of the file: what call_shape_receivers compares calls with."""
    found = []
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef):
            for s in stmt.body.body:
                if isinstance(s, cst.FunctionDef) and s.name.value == "forward":
                    found.append((stmt.name.value, positional_params(s), frozenset(named_params(s)) - {"self"}, s))
    return found


def _returns(suite) -> list:
    """The `return` statements of a suite and of the suites nested in its statements (not of nested
    functions or classes): a statement-level scan, no walk of the expressions."""
    if isinstance(suite, cst.SimpleStatementSuite):
        return [s for s in suite.body if isinstance(s, cst.Return)]
    found = []
    for stmt in getattr(suite, "body", ()):
        if isinstance(stmt, cst.SimpleStatementLine):
            found += [s for s in stmt.body if isinstance(s, cst.Return)]
        elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            found += _clause_returns(stmt)
    return found


def _clause_returns(node: cst.CSTNode) -> list:
    """The returns under a compound statement or one of its clauses (else, elif, except, finally, case)."""
    found = []
    for part in ("body", "orelse", "handlers", "finalbody", "cases"):
        inner = getattr(node, part, None)
        for b in inner if isinstance(inner, (list, tuple)) else [inner]:
            if isinstance(b, cst.BaseSuite):
                found += _returns(b)
            elif isinstance(b, cst.CSTNode):
                found += _clause_returns(b)
    return found


def returned_items(fn: cst.FunctionDef) -> list:
    """The items of a function's first `return a, b, c` ([] when no return gives a tuple)."""
    for ret in _returns(fn.body):
        if isinstance(ret.value, cst.Tuple):
            return [e.value for e in ret.value.elements]
    return []


_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float, cst.Imaginary,
             cst.List, cst.Dict, cst.Set, cst.Tuple, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp, cst.Lambda)


def computed(node: cst.BaseExpression) -> bool:
    """A returned item that can be a tensor: not a literal (a string, a number, a list or dict
    display, `None`), whatever it is called."""
    if isinstance(node, cst.Name):
        return node.value not in ("None", "True", "False")
    return not isinstance(node, _LITERALS)


def returned_names(fn: cst.FunctionDef) -> list:
    """What a function's first `return a, b, c` calls its items, each by the name its value comes
    from: `return self.hm(x).sigmoid(), self.box(x), logits` -> hm, box, logits (None: no name).
    For reading the function's own data flow (GG104: which of its variables it returns), never for
    comparing with a caller's spelling."""
    for ret in _returns(fn.body):
        if isinstance(ret.value, cst.Tuple):
            return [_value_name(e.value) for e in ret.value.elements]
    return []


def _value_name(node: cst.BaseExpression) -> Optional[str]:
    """`self.hm(x).sigmoid()` -> hm; `logits` -> logits; `torch.cat(...)` -> None."""
    while True:
        if isinstance(node, cst.Call):
            node = node.func
        elif isinstance(node, cst.Attribute) and not (isinstance(node.value, cst.Name) and node.value.value == "self"):
            if not isinstance(node.value, (cst.Call, cst.Attribute)):
                return None  # `torch.cat`, `F.relu`: a function of a module, not a name of the value
            node = node.value
        elif isinstance(node, cst.Attribute):
            return node.attr.value
        elif isinstance(node, cst.Name):
            return node.value
        else:
            return None


_SIMPLE_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(([^()]*)\)")
_KEYWORD = re.compile(r"^([A-Za-z_]\w*)\s*=(?!=)")
_UNPACK = re.compile(r"^[ \t]*(\w+(?:[ \t]*,[ \t]*\w+)+)[ \t]*=[ \t]*([A-Za-z_]\w*)[ \t]*\(([^\n]*)", re.M)


@lru_cache(maxsize=16)  # asked of one file's text once per class a project offers it
def _simple_calls(source: str) -> tuple[list, dict]:
    """The text's calls of a plain name with no call in their arguments, as (name, the words of
    the arguments, the arguments), and word -> the indices of the calls whose arguments hold it."""
    calls: list = []
    by_word: dict = {}
    for m in _SIMPLE_CALL.finditer(source):
        words = frozenset(_WORD.findall(m.group(2)))
        for w in words:
            by_word.setdefault(w, []).append(len(calls))
        calls.append((m.group(1), words, m.group(2)))
    return calls, by_word


def returned_shape(fn: cst.FunctionDef) -> tuple:
    """What a function's returns look like from outside: (the number of items of its first `return a,
    b, c` (0: no tuple), the constant keys of the dict literals it returns (none unless every `return`
    gives one: `return {"logits": ..., "state": ...}`)). The shape a caller's unpacking or key reads
    can agree with, whatever anything is called."""
    returns = _returns(fn.body)
    count = next((len(r.value.elements) for r in returns if isinstance(r.value, cst.Tuple)), 0)
    keys: set = set()
    for r in returns:
        if not isinstance(r.value, cst.Dict):
            return count, frozenset()
        for e in r.value.elements:
            k = e.key if isinstance(e, cst.DictElement) else None
            if not isinstance(k, cst.SimpleString) or not isinstance(string_value(k.value), str):
                return count, frozenset()
            keys.add(string_value(k.value))
    return count, frozenset(keys)


_ASSIGNED_CALL = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*([A-Za-z_]\w*)[ \t]*\(([^\n]*)", re.M)
_ITERATED = re.compile(r"^[ \t]*for[ \t]+(?:[A-Za-z_]\w*[ \t]*,[ \t]*)?([A-Za-z_]\w*)[ \t]+in[ \t]+([^\n]*)\.[ \t]*(?:items|values)[ \t]*\([ \t]*\)[ \t]*:", re.M)
_KEY_READ = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\[\s*(['\"])(\w+)\2\s*\]")
_CALL_KEY_READ = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\([^()]*\)\s*\[\s*(['\"])(\w+)\2\s*\]")


@lru_cache(maxsize=16)  # asked of one file's text once per class a project offers it
def _keys_read(source: str) -> tuple:
    """(name -> the constant keys the text reads from it (`outputs["state"]`), callee -> the keys read
    straight from its call's result (`model(x)["logits"]`), (name, callee) of each `name = callee(` -
    and of each call inside, which a helper may hand on: `outputs = as_dict(model(x))["out"]`)."""
    of_name: dict = {}
    for m in _KEY_READ.finditer(source):
        of_name.setdefault(m.group(1), set()).add(m.group(3))
    of_call: dict = {}
    for m in _CALL_KEY_READ.finditer(source):
        of_call.setdefault(m.group(1), set()).add(m.group(3))
    assigned = [(m.group(1), callee) for m in _ASSIGNED_CALL.finditer(source)
                for callee in [m.group(2)] + [c for c in _CALLEE.findall(m.group(3)) if "." not in c]]
    # `for key, outputs in as_dict(model(x)).items():` binds `outputs` to what the calls there give, and
    # `outputs = value` after `for key, value in ...` binds it to what `value` is
    assigned += [(m.group(1), c) for m in _ITERATED.finditer(source) for c in _CALLEE.findall(m.group(2)) if "." not in c]
    callees: dict = {}
    for name, callee in assigned:
        callees.setdefault(name, set()).add(callee)
    assigned += [(m.group(1), c) for m in _ALIAS.finditer(source) for c in callees.get(m.group(2), ())]
    return of_name, of_call, tuple(assigned)


def call_shape_receivers(source: str, signatures: list) -> set:
    """Plain names called the way some `forward()` of the file is declared, by the text: two
    agreements (FlowAnalysis._instance_by_call counts them on the tree), each a fact of the class's
    API, never a name's spelling - keywords it declares (`model(input_ids, state=state)`), its
    results unpacked by the number it returns, keys of the dict it returns read from the result
    (`outputs["state"]`). A superset of what the tree confirms: the scan only picks the names worth
    asking about. (`self.x` is known from the class's own code.)"""
    if not signatures:
        return set()
    shapes = [(names, returned_shape(fn) if isinstance(fn, cst.FunctionDef) else fn) for _, _, names, fn in signatures]
    params = frozenset().union(*(names for names, _ in shapes))
    by_keyword: dict = {}  # (callee, signature) -> the most keywords of it one call passes
    calls, by_word = _simple_calls(source)
    for k in sorted(set().union(*(by_word.get(p, ()) for p in params))):  # calls that pass one of those names
        key, words, args = calls[k]
        pieces = [a.strip() for a in args.split(",") if a.strip()]
        for i, (names, _) in enumerate(shapes):
            hits = sum(1 for piece in pieces if (kw := _KEYWORD.match(piece)) is not None and kw.group(1) in names)
            if hits:
                by_keyword[key, i] = max(by_keyword.get((key, i), 0), hits)
    by_result: dict = {}  # (callee, signature) -> agreements of what is done with its results
    used_as_tensors = _tensor_users(source)
    for targets, callee, rest in _unpackings(source):  # `hm, box, landmark = model(image)`
        for i, (_, (count, _)) in enumerate(shapes):
            if count > 1 and count == len(targets):
                # the count, and a result used as only a tensor can be (call_agreements)
                hits = 1 + any(t in used_as_tensors for t in targets)
                # (and a call inside, handed on: `= as_pair(model(image))[0]`)
                for c in [callee] + [c for c in _CALLEE.findall(rest) if "." not in c]:
                    by_result[c, i] = max(by_result.get((c, i), 0), hits)
    of_name, of_call, assigned = _keys_read(source)
    if any(keys for _, (_, keys) in shapes):
        pairs = [(callee, of_name.get(name, ())) for name, callee in assigned] + list(of_call.items())
        for callee, read in pairs:
            for i, (_, (_, keys)) in enumerate(shapes):
                hits = len(keys.intersection(read))
                if hits:
                    by_result[callee, i] = max(by_result.get((callee, i), 0), hits)
    return {callee for callee, i in by_keyword.keys() | by_result.keys()
            if by_keyword.get((callee, i), 0) + by_result.get((callee, i), 0) >= 2}


_TENSOR_MEMBER = re.compile(r"\.\s*(?:" + "|".join(sorted(K.TENSOR_ONLY_MEMBERS)) + r")\b")


@lru_cache(maxsize=16)  # asked of one file's text once per module that offers it classes
def _tensor_users(source: str) -> frozenset:
    """The words of the lines that use a member only a tensor has (`box.cpu()`): a superset of the
    names _UseFinder finds used as tensors (tensor_root)."""
    found: set = set()
    for m in _TENSOR_MEMBER.finditer(source):
        start, end = source.rfind("\n", 0, m.start()) + 1, m.start()
        found.update(_WORD.findall(source[start:end]))
    return frozenset(found)


@lru_cache(maxsize=16)  # asked of one file's text once per module that offers it classes
def _unpackings(source: str) -> tuple:
    """(the names unpacked, the callee, the rest of the line) of each `a, b = f(...` of the text."""
    return tuple((tuple(t.strip() for t in m.group(1).split(",")), m.group(2), m.group(3)) for m in _UNPACK.finditer(source))


def positional_params(fn: cst.FunctionDef) -> list:
    """The names a call can pass by position (positional-only, ordinary), `self` left out."""
    ps = fn.params
    return [p.name.value for p in (*ps.posonly_params, *ps.params) if p.name.value != "self"]


def call_agreements(call: cst.Call, forward: cst.FunctionDef, unpacked: Optional[list] = None,
                    keys: frozenset = frozenset(), tensors: frozenset = frozenset()) -> Optional[list]:
    """How a call agrees with a class's `forward()`, or None where it cannot be a call of it. Each
    agreement is a fact of the class's API, not a spelling the user chose (rules.md: names are never
    the only reason): each keyword it declares (`state=`), its results unpacked to as many names as
    its `return` gives (`a, b, c = net(x)` for `return self.hm(x), self.box(x), self.lm(x)`), one of
    those results used as only a tensor can be (`tensors`: `b.cpu()`, `b.flatten(2).data.numpy()`)
    where forward returns a computed value, each key of the dict it returns read from the result
    (`out["state"]` for `return {"state": ...}`).
    None: more positional arguments than it takes, a keyword it does not declare, a required
    parameter left out, results unpacked to another number of names than it returns, a result used
    as a tensor where forward returns a literal, a key read that the dict it returns lacks."""
    ps = forward.params
    positional = positional_params(forward)
    keywords = set(positional) | {p.name.value for p in ps.kwonly_params}
    star_args, star_kwargs = isinstance(ps.star_arg, cst.Param), ps.star_kwarg is not None
    required = [p.name.value for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)
                if p.default is None and p.name.value != "self"]
    agree, given = [], set()
    pos = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return None  # `model(*batch)`: nothing to match
    if len(pos) > len(positional) and not star_args:
        return None
    given.update(positional[:len(pos)])
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value not in keywords and not star_kwargs:
                return None
            given.add(a.keyword.value)
            if a.keyword.value in keywords:  # (one `**kwargs` takes is no fact of this forward)
                agree.append(f"`{a.keyword.value}=`")
    if any(r not in given for r in required):
        return None
    count, returned_keys = returned_shape(forward) if unpacked or keys else (0, frozenset())
    if unpacked:
        if count and count != len(unpacked):
            return None
        if count > 1:
            agree.append(f"{count} results unpacked")
            used = [(t, item) for t, item in zip(unpacked, returned_items(forward)) if t is not None and t in tensors]
            if any(not computed(item) for _, item in used):
                return None
            if used:
                agree.append(f"`{used[0][0]}` used as a tensor")
    if keys and returned_keys:
        if not keys <= returned_keys:
            return None
        agree += [f'`["{k}"]`' for k in sorted(keys)]
    return agree


_SCALAR_BACKWARD = re.compile(r"\.\s*backward\s*\(\s*\)")


def scalar_backwards(source: str) -> frozenset:
    """Names back-propagated with no gradient argument (`loss.backward()`): 0-dim tensors."""
    found = set()
    for m in _SCALAR_BACKWARD.finditer(source):
        r = _receiver_before(source, m.start())
        if r is not None and not r[1]:
            found.add(r[0])
    return frozenset(found)


_TRAINS = re.compile(
    r"\.\s*(?:backward|manual_backward)\s*\(|autograd\s*\.\s*(?:grad|backward)\s*\(|\.\s*step\s*\(\s*\)"
    r"|opt\w*\s*\.\s*step\s*\("
)


# `create_supervised_trainer(`, `Seq2SeqTrainer(`, `net.fit(` (knowledge.FRAMEWORK_TRAINERS, _METHODS)
_FRAMEWORK_TRAINS = re.compile(
    r"(?:" + "|".join(sorted(K.FRAMEWORK_TRAINERS)) + r")\s*\("
    r"|\.\s*(?:" + "|".join(sorted(K.FRAMEWORK_TRAINING_METHODS)) + r")\s*\("
)


# `optimizer = optim.SGD(model.parameters(), lr=0.1)`: an optimizer built here is stepped here or by the
# code it is handed to (`StepByStep(model, loss_fn, optimizer).train(100)`, of another file)
_OPTIMIZER_BUILT = re.compile(r"(?<![\w.])(?:torch\s*\.\s*)?optim\s*\.\s*[A-Z]\w*\s*\(")


def trains(source: str) -> bool:
    """Does the file call `.backward()`, `autograd.grad` or an optimizer's `step()` anywhere, build an
    optimizer (stepped here or where it is handed), or hand a model to a framework that trains it? If
    not, it is an inference script: every forward in it runs for inference."""
    return _TRAINS.search(source) is not None or _FRAMEWORK_TRAINS.search(source) is not None \
        or _OPTIMIZER_BUILT.search(source) is not None


# `w.grad` (hand SGD's `w.data -= lr * w.grad`, `w.grad.data.zero_()`), not `torch.autograd.grad(...)`
_GRAD_READ = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\.\s*grad\b(?!\s*\()")
# `params[0].grad`: an item's gradient read - the list (an nn.ParameterList of a hand-written RNN) is trained
_ITEM_GRAD_READ = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\[[^\]\n]*\]\s*\.\s*grad\b(?!\s*\()")
# `for param in params:` (a loop variable whose gradient is read: the list it runs over is trained)
_FOR_IN_NAME = re.compile(r"^[ \t]*for[ \t]+([A-Za-z_]\w*)[ \t]+in[ \t]+([A-Za-z_]\w*)[ \t]*:", re.M)
# `torch.optim.SGD([w, b], lr=0.1)`: the leaves listed are trained
_OPTIMIZED = re.compile(r"optim\s*\.\s*[A-Z]\w*\s*\(\s*\[([^\]]*)\]")
# `params = [W1, b1, W2, b2]` ... `torch.optim.SGD(params, lr=lr)` (d2l's MLP from scratch): a name
# given to an optimizer, bound in the file to a list of names
_OPTIMIZED_NAME = re.compile(r"optim\s*\.\s*[A-Z]\w*\s*\(\s*([A-Za-z_]\w*)\s*[,)]")


def trained_leaves(source: str) -> frozenset:
    """Names whose gradient the code reads or that it lists for an optimizer: tensors it trains (the
    leaves of a hand-written model, `def net(X): return X @ W + b`); and lists of them whose items'
    gradients it reads (`params[0].grad`, `for p in params: p.grad.data.zero_()`)."""
    names = {m.group(1) for m in _GRAD_READ.finditer(source)}
    names.update(m.group(1) for m in _ITEM_GRAD_READ.finditer(source))
    names.update(m.group(2) for m in _FOR_IN_NAME.finditer(source) if m.group(1) in names)
    for m in _OPTIMIZED.finditer(source):
        names.update(_WORD.findall(m.group(1)))
    for name in {m.group(1) for m in _OPTIMIZED_NAME.finditer(source)}:
        listed = re.compile(r"^[ \t]*" + re.escape(name) + r"[ \t]*=[ \t]*\[([^\]]*)\]", re.M)
        for m in listed.finditer(source):
            names.update(_WORD.findall(m.group(1)))
    return frozenset(names)


def trained_through_calls(module: cst.Module) -> frozenset:
    """Names of tensors the file trains through one of its own functions: listed in a call
    (`train_ch3(net, ..., [W, b], lr)`, or a name bound to such a list) for a parameter whose items
    that function trains - it reads their gradient (`for p in params: p.grad.data.zero_()`,
    `params[0].grad`), gives them to an optimizer, or hands them on to a function of the file that
    does (`sgd(params, lr)`). What the leaves of a hand-written model are, where the file passes them
    to its training function instead of reading their `.grad` itself."""
    everything = descendants(module)
    defs = [n for n in everything if type(n) is cst.FunctionDef]
    by_name: dict = {}
    for d in defs:
        by_name.setdefault(d.name.value, []).append(d)
    nodes = {d: descendants(d.body) for d in defs}
    trains: dict = {}  # function node -> the names of its parameters whose items it trains
    for d in defs:
        params = set(named_params(d))
        items = {}  # loop variable -> the parameter it runs over (`for p in params`)
        for n in nodes[d]:
            if type(n) is cst.For and type(n.target) is cst.Name and type(n.iter) is cst.Name and n.iter.value in params:
                items[n.target.value] = n.iter.value
        found = set()
        for n in nodes[d]:
            if type(n) is cst.Attribute and n.attr.value == "grad":
                base = n.value.value if type(n.value) is cst.Subscript else n.value
                if type(base) is cst.Name:
                    found.add(items.get(base.value, base.value) if base is n.value else base.value)
            elif type(n) is cst.Call and _optimizer_call(n) and n.args and type(n.args[0].value) is cst.Name:
                found.add(n.args[0].value.value)
        trains[d] = found & params
    if not any(trains.values()):
        return frozenset()  # (most files: no function of the file trains what it is given)
    for _ in range(2):  # handed on: `sgd(params, lr, batch_size)` in the training loop
        for d in defs:
            for n in nodes[d]:
                if type(n) is cst.Call:
                    for name in _given_to_trainers(n, by_name, trains):
                        if name in named_params(d):
                            trains[d] = trains[d] | {name}
    lists = {}  # name -> the names of the list literal bound to it (`params = [W1, b1, W2, b2]`)
    for n in everything:
        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                and type(n.value) in (cst.List, cst.Tuple):
            lists[n.targets[0].target.value] = set(names_in(n.value))
    out: set = set()
    for n in everything:
        if type(n) is cst.Call:
            for given in _given_to_trainers(n, by_name, trains, values=True):
                if type(given) in (cst.List, cst.Tuple):
                    out.update(names_in(given))
                elif type(given) is cst.Name:
                    out.update(lists.get(given.value, ()))
    return frozenset(out)


def _optimizer_call(call: cst.Call) -> bool:
    """`torch.optim.SGD(...)`, `optim.Adam(...)`: an optimizer built over its first argument."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value[:1].isupper() and dotted(func.value) in (
        "optim", "torch.optim")


def _given_to_trainers(call: cst.Call, by_name: dict, trains: dict, values: bool = False) -> list:
    """The arguments of a call of a function of the file (one definition of that name) given for a
    parameter whose items it trains: their names (or, with `values`, the argument expressions)."""
    if not isinstance(call.func, cst.Name) or len(by_name.get(call.func.value, ())) != 1:
        return []
    d = by_name[call.func.value][0]
    trained = trains.get(d, set())
    if not trained:
        return []
    ps = d.params
    positional = [p.name.value for p in (*ps.posonly_params, *ps.params)]
    out = []
    for i, a in enumerate(x for x in call.args if x.keyword is None and not x.star):
        if i < len(positional) and positional[i] in trained:
            out.append(a.value)
    for a in call.args:
        if a.keyword is not None and a.keyword.value in trained:
            out.append(a.value)
    if values:
        return out
    return [v.value for v in out if isinstance(v, cst.Name)]


def imported_names(module: cst.Module) -> frozenset:
    """The names the file's top-level imports bind (`np`, `pd`, `Variable`): libraries, not values."""
    names = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    names.add(alias.asname.name.value if alias.asname else dotted(alias.name).split(".")[0])
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    names.add(alias.asname.name.value if alias.asname else alias.name.value)
    return frozenset(names)


def uses_of(scope_node: cst.CSTNode, imported: frozenset = frozenset(), helpers=None) -> Uses:
    """The uses in one function's body or a module's top level (`imported`: see imported_names;
    `helpers`: handing.FileHelpers of the module)."""
    finder = _UseFinder(scope_node, helpers)
    walk(scope_node, finder)
    uses = finder.uses
    uses.backward_through_aliases()
    if uses.backwards and isinstance(scope_node, cst.FunctionDef):
        # (a function's names, not a module's: a script or notebook rebinds `images`, `output` from
        # cell to cell, and what one cell back-propagates says nothing of another's)
        chains = Chains(scope_node, uses.backwards, finder.params, imported)
        items = items_through_helpers(uses, {**chains.graphs, **uses.backwards}, helpers, imported)
        if items:  # the other items of a helper's tuple, terms of the item back-propagated here
            chains = Chains(scope_node, {**items, **uses.backwards}, finder.params, imported)
            chains.graphs.update((k, v) for k, v in items.items() if k not in chains.graphs)
        uses.fed = {k: v for k, v in chains.graphs.items() if k not in uses.backwards}
        uses.feeders = {k: (call, chains.graphs.get(k)) for k, call in chains.models.items()}
        uses.zero_dim = chains.zero_dim
        uses.losses = chains.losses
    return uses


def _tuple_returns(fn: cst.FunctionDef) -> Optional[list]:
    """The items of every `return a, b, c` of a function, by position: [[a, ...], [b, ...], ...];
    None unless every return gives a tuple of one length."""
    returns = _returns(fn.body)
    if not returns or not all(isinstance(r.value, cst.Tuple) for r in returns):
        return None
    lengths = {len(r.value.elements) for r in returns}
    if len(lengths) != 1 or any(isinstance(e, cst.StarredElement) for r in returns for e in r.value.elements):
        return None
    return [[r.value.elements[i].value for r in returns] for i in range(lengths.pop())]


def items_through_helpers(uses: Uses, graphs: dict, helpers, imported: frozenset) -> dict:
    """`loss, loss_chords, _ = compute_loss(model, data)` and then `loss.backward()`, where the file's
    `compute_loss` returns `loss_total, loss_chords, acc` with `loss_total = loss_chords + loss_melody`:
    the backward proves the item it back-propagates carried a graph, and so (backprop.Chains, in the
    helper's own body) what that item was computed from - the caller's names for those other items
    carry a graph too. Read through the helper's code, whatever anything is called: name -> the backward."""
    found: dict = {}
    if helpers is None:
        return found
    for call, names in uses.unpacked.items():
        proved = [(i, graphs[n]) for i, n in enumerate(names) if n is not None and n in graphs]
        if not proved:
            continue
        func = call.func
        if isinstance(func, cst.Name):
            fn = helpers.defs.get(func.value)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            fn = helpers.methods.get(func.attr.value)
        else:
            fn = None
        items = _tuple_returns(fn) if isinstance(fn, cst.FunctionDef) else None
        if items is None or len(items) != len(names):
            continue
        seeds = {}
        for i, proof in proved:
            for item in items[i]:
                if isinstance(item, cst.Name):
                    seeds.setdefault(item.value, proof)
        if not seeds:
            continue
        inner = Chains(fn, seeds, frozenset(named_params(fn)), imported)
        for j, name in enumerate(names):
            if name is None or name in graphs:
                continue
            # every return gives at that place a name the helper's backward chain reaches
            if all(isinstance(e, cst.Name) and e.value in inner.graphs for e in items[j]):
                found.setdefault(name, inner.graphs[items[j][0].value])
    return found


def class_uses(node: cst.ClassDef, helpers=None) -> Uses:
    """Uses of `self.<attr>` across every method of a class."""
    uses = Uses()
    for stmt in node.body.body:
        if isinstance(stmt, cst.FunctionDef):
            mine = uses_of(stmt, helpers=helpers)
            uses.merge(Uses(
                module_calls={k: v for k, v in mine.module_calls.items() if k.startswith("self.")},
                called={k: v for k, v in mine.called.items() if k.startswith("self.")},
                backwards={k: v for k, v in mine.backwards.items() if k.startswith("self.")},
                recurrent={k: v for k, v in mine.recurrent.items() if k.startswith("self.")},
                predicts={k: v for k, v in mine.predicts.items() if k.startswith("self.")},
            ))
    return uses


class _KeptFinder(cst.CSTVisitor):
    """Parameters a function keeps where they outlive the call: `SEEN.append(v)` on a
    global list, `self.total += val`, `self.last = v`, `CACHE[k] = v`."""

    def __init__(self, fn: cst.FunctionDef):
        self.fn = fn
        self.params = set(named_params(fn)) - {"self", "cls"}
        self.local: set = set()
        self.kept: dict = {}
        self.replaced: set = set()  # parameters kept so far only by an attribute assignment
        self.parts: dict = {}  # `value` of `for key, value in d.items()` (or `d.values()`) -> the parameter `d`
        self.via: dict = {}  # parameter kept through one of its parts -> that part's name

    def visit_FunctionDef(self, node) -> bool:
        return node is self.fn

    def visit_For(self, node: cst.For) -> None:
        # an entry of a parameter that is a dict (`for key, value in d.items(): self.meters[key].add(value)`):
        # keeping it keeps what the caller's dict holds
        it, target = node.iter, node.target
        if isinstance(it, cst.Call) and not it.args and isinstance(it.func, cst.Attribute) \
                and isinstance(it.func.value, cst.Name) and it.func.value.value in self.params:
            name, method = it.func.value.value, it.func.attr.value
            if method == "values" and isinstance(target, cst.Name):
                self.parts[target.value] = name
            elif method == "items" and isinstance(target, cst.Tuple) and len(target.elements) == 2 \
                    and isinstance(target.elements[1].value, cst.Name):
                self.parts[target.elements[1].value.value] = name

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self.local.add(node.target.value)
        elif not isinstance(node.target, (cst.Tuple, cst.List)):
            # (`self.val = val` replaces what the last call kept: named only where nothing piles it up -
            # `self.sum += val * n` beside it is the place that keeps every call's)
            self._keep(node.target, self._value, replaced=isinstance(node.target, cst.Attribute))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._value = node.value

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if not isinstance(node.target, cst.Name):  # `total += v` binds a local unless declared global
            self._keep(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "add", "appendleft") and node.args:
            self._keep(func.value, node.args[-1].value)

    def _keep(self, target: cst.BaseExpression, stored: cst.BaseExpression, replaced: bool = False) -> None:
        # `self.rows.append(dict(metrics))`: a shallow copy keeps the same items
        while isinstance(stored, cst.Call) and dotted(stored.func) in SHALLOW_COPIES and len(stored.args) == 1:
            stored = stored.args[0].value
        while isinstance(stored, cst.BinaryOperation):  # `self.sum += val * n`: val is kept
            left, right = stored.left, stored.right
            stored = left if isinstance(left, cst.Name) and left.value in self.params else right
        if isinstance(stored, cst.Name) and stored.value in self.parts and self.parts[stored.value] not in self.kept:
            self.via[self.parts[stored.value]] = stored.value
            stored = cst.Name(self.parts[stored.value])
        if isinstance(stored, cst.Name) and stored.value in self.params:
            if stored.value in self.replaced and not replaced:
                del self.kept[stored.value]
                self.replaced.discard(stored.value)
            if stored.value not in self.kept:
                self.kept[stored.value] = target
                if replaced:
                    self.replaced.add(stored.value)


def kept_params(fn: cst.FunctionDef) -> dict:
    """parameter name -> the target node it is kept in (see _KeptFinder): a global the function does
    not bind itself, an attribute, or a container another parameter holds (`history.append(loss)`
    with both given: the caller's list keeps it)."""
    finder = _KeptFinder(fn)
    walk(fn, finder)
    return {
        name: target for name, target in finder.kept.items()
        if name not in finder.local  # `v = v.data.sum()` before `self.sum += v`: what is kept is not the argument
        and finder.via.get(name) not in finder.local  # (nor a part of it rebound: `value = value.item()`)
        and not (isinstance(_root(target), cst.Name) and _root(target).value in finder.local)
        and not (isinstance(_root(target), cst.Name) and _root(target).value in finder.params
                 and _root(target).value in ("self", "cls"))
    }


def _root(node: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(node, (cst.Subscript, cst.Attribute)) and not (
        isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"
    ):
        node = node.value
    return node


class _SelfAssigns(cst.CSTVisitor):
    """`self.<attr> = value` in the methods of each class of a module, in one walk that reads
    statements, not expressions: class name -> attr -> [value or None (a tuple target)]."""

    def __init__(self):
        self.classes: list = []  # (class name, {attr: [values]}), one per class, in order
        self.stack: list = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append({})  # a nested class's `self` is another object
        self.classes.append((node.name.value, self.stack[-1]))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        if self.stack:
            for small in node.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        self._target(t.target, small.value)
                elif isinstance(small, cst.AnnAssign):
                    self._target(small.target, small.value)
                elif isinstance(small, cst.AugAssign):
                    self._target(small.target, None)
        return False  # no statement inside an expression

    def _target(self, target, value) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._target(e.value, None)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            self.stack[-1].setdefault(target.attr.value, []).append(value)


def _is_parameter(value) -> bool:
    """`nn.Parameter(...)`, `torch.nn.Parameter(...)`, `Parameter(...)`."""
    return isinstance(value, cst.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] == "Parameter"


_PARAMETER_SET = re.compile(r"\bself\s*\.\s*\w+\s*(?::[^=\n]*)?=\s*[\w.]*Parameter\s*\(")


def parameter_attributes(module: cst.Module, source: str) -> dict:
    """attr -> (class name, the `nn.Parameter(...)` call) for each attribute that exactly one class of
    the file sets on `self`, always to a new `nn.Parameter`. A model received from elsewhere whose
    `.W` is read is then, by its attributes, most likely that class (as `meter.update(v)` is the
    one class with an `update`): its `.W` is a parameter, a leaf that requires grad."""
    if "Parameter" not in source:
        return {}
    if not _PARAMETER_SET.search(source):
        return {}  # no `self.x = ...Parameter(` anywhere: no walk of the module (half the files of a model library)
    return {attr: (name, values[0]) for attr, (name, values) in _one_setter(module).items()
            if all(_is_parameter(v) for v in values)}


def _one_setter(module: cst.Module) -> dict:
    """attr -> (class name, [values]) for each `self.<attr>` that exactly one class of the file sets."""
    assigns = _SelfAssigns()
    walk(module, assigns)
    setters: dict = {}
    for name, found in assigns.classes:
        for attr, values in found.items():
            setters.setdefault(attr, []).append((name, values))
    return {attr: found[0] for attr, found in setters.items() if len(found) == 1}


# torch.nn layers that own a `.weight` (and usually a `.bias`) parameter.
WEIGHTED_LAYERS = frozenset(
    """Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d
    Embedding EmbeddingBag LayerNorm GroupNorm BatchNorm1d BatchNorm2d BatchNorm3d InstanceNorm1d
    InstanceNorm2d InstanceNorm3d PReLU RMSNorm""".split()
)
_LAYER_SET = re.compile(r"\bself\s*\.\s*\w+\s*(?::[^=\n]*)?=\s*(?:[\w.]*\.)?(?:%s)\s*\(" % "|".join(sorted(WEIGHTED_LAYERS)))


def _layer(value) -> Optional[str]:
    """`nn.Linear` of `nn.Linear(4, 2)`, `torch.nn.Conv2d(...)`, `Linear(...)`."""
    if not isinstance(value, cst.Call):
        return None
    name = (dotted(value.func) or "").rsplit(".", 1)[-1]
    return name if name in WEIGHTED_LAYERS else None


def layer_attributes(module: cst.Module, source: str) -> dict:
    """attr -> (class name, layer name, the constructor call) for each attribute that exactly one
    class of the file sets on `self`, always to a new torch layer with weights (`self.dense =
    nn.Linear(...)`): `model.layers[i].dense.weight` of a model from elsewhere is then that
    layer's weight, a parameter (as parameter_attributes reads `model.W`)."""
    if not _LAYER_SET.search(source):
        return {}
    out = {}
    for attr, (name, values) in _one_setter(module).items():
        layers = {_layer(v) for v in values}
        if len(layers) == 1 and None not in layers:
            out[attr] = (name, layers.pop(), values[0])
    return out
