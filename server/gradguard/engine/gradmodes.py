"""Grad modes: which `with` items, decorators and statements turn autograd off or on, and why
a value computed under them has no graph."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.evidence import dotted
from gradguard.engine.model import FunctionInfo, GradMode
from gradguard.engine.outside import Outside
from gradguard.engine.syntax import literal_bool
from gradguard.engine.walk import descendants
from gradguard.engine.values import (
    NUMBER,
    UNKNOWN,
    Evidence,
    Kind,
)

_GRAD_SWITCHES = frozenset({"set_grad_enabled", "no_grad", "inference_mode", "enable_grad"})
# What code that back-propagates names: a backward method, or `autograd` of knowledge.BACKWARD_SPELLINGS.
_BACKWARD_NAMES = K.BACKWARD_METHODS | {"autograd"}


def _may_switch(name: str) -> bool:
    """A callee whose code is elsewhere and whose name says it may switch grad mode (see grad_mode_of)."""
    name = name.lower()
    return any(word in name for word in ("no_grad", "inference", "grad_enabled", "training_mode", "eval_mode"))


class GradModes:
    """The `with`/decorator/statement side of the walk that sets `frame.modes`."""

    def grad_mode_of(self, expr: cst.BaseExpression) -> Optional[GradMode]:
        """The grad mode a `with` item or decorator sets, or None if it sets none."""
        if not isinstance(expr, cst.Call):
            q = self._qualname(expr)
            if q in K.GRAD_CONTEXTS_OFF:  # @torch.no_grad without parentheses
                return GradMode.OFF
            return None
        q = self._qualname(expr.func)
        if q is None:
            # a context manager of this file: its code says whether it switches grad mode, whatever it is called
            fv = self.values.get(expr.func, UNKNOWN)
            if fv.kind is Kind.FUNCTION and isinstance(fv.cls, FunctionInfo):
                if self._switches_grad(fv.cls):
                    return self._yielded_mode(fv.cls)  # (`maybe_no_grad(flag)`: unknown)
                # (one that hands on a switch it imports - `return smart_inference_mode()` - is that switch)
                names = self.facts_of(fv.cls.node).body_names
                return GradMode.UNKNOWN if any(_may_switch(n) for n in names) else None
            if fv.kind is Kind.CLASS and fv.cls is not None:
                enter = fv.cls.methods.get("__enter__")
                if enter is None or not self._switches_grad(enter):
                    return None
                return self._entered_mode(enter)  # `with EvalNoGrad(model):`
        if q is None or not q.startswith("torch."):
            # Left to a name (tests/corpus/README.md, "Names that no longer decide"): a switch whose code this
            # file does not have - yolov5's imported smart_inference_mode(), poutyne's _set_training_mode(False),
            # a context manager handed in - is unknown when its name says it may turn grad off.
            if _may_switch((q or dotted(expr.func) or "").rsplit(".", 1)[-1]):
                return GradMode.UNKNOWN
        if q is None:
            return None
        if q in K.GRAD_CONTEXTS_OFF:
            if q == "torch.inference_mode" and expr.args and literal_bool(expr.args[0].value) is False:
                return GradMode.ON
            return GradMode.OFF
        if q in K.GRAD_CONTEXTS_ON:
            return GradMode.ON
        if q in K.SET_GRAD_ENABLED and expr.args:
            flag = literal_bool(expr.args[0].value)
            return GradMode.UNKNOWN if flag is None else (GradMode.ON if flag else GradMode.OFF)
        return None

    def _entered_mode(self, enter: FunctionInfo) -> GradMode:
        """The mode a context manager class's `__enter__` leaves: off where its only switch is
        `torch.set_grad_enabled(False)`; unknown for any other (a flag, a saved mode)."""
        switches = [n for n in descendants(enter.node.body) if isinstance(n, cst.Call)
                    and (self._qualname(n.func) or "").rsplit(".", 1)[-1] in _GRAD_SWITCHES]
        if switches and all(self._qualname(n.func) in K.SET_GRAD_ENABLED and n.args
                            and literal_bool(n.args[0].value) is False for n in switches):
            return GradMode.OFF
        return GradMode.UNKNOWN

    def _yielded_mode(self, fn: FunctionInfo) -> GradMode:
        """The mode a generator context manager of the file gives its `with` body: off where it yields
        only inside `with torch.no_grad():` (or `inference_mode()`) and switches grad no other way
        (`@contextmanager def frozen(model): model.eval(); with torch.no_grad(): yield`); else unknown."""
        nodes = descendants(fn.node.body, stop=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
        yields = [n for n in nodes if type(n) is cst.Yield]
        switches = [n for n in nodes if type(n) is cst.Call
                    and (self._qualname(n.func) or "").rsplit(".", 1)[-1] in _GRAD_SWITCHES]
        off = [w for w in nodes if type(w) is cst.With and any(
            isinstance(i.item, cst.Call) and self._qualname(i.item.func) in K.GRAD_CONTEXTS_OFF and not i.item.args
            for i in w.items)]
        inside = {id(n) for w in off for n in descendants(w.body)}
        if yields and all(id(y) in inside for y in yields) and all(
                any(c is i.item for w in off for i in w.items) for c in switches):
            return GradMode.OFF
        return GradMode.UNKNOWN

    def _switches_grad(self, fn: FunctionInfo) -> bool:
        return not self.facts_of(fn.node).all_names.isdisjoint(_GRAD_SWITCHES)

    def _with(self, node: cst.With) -> None:
        mode = None
        for item in node.items:
            self._eval(item.item)
            m = self.grad_mode_of(item.item)
            if m is not None:
                mode = m
            if item.asname is not None:
                self._assign(item.asname.name, UNKNOWN if m is None else NUMBER, item.item)
        if mode is None:
            self._block(node.body)
            return
        frame = self.frame
        at = next((i.item for i in node.items if self.grad_mode_of(i.item)), None)
        outer = (frame.inference, frame.inert)
        if self._is_inference(at):
            frame.inference = at if mode is GradMode.OFF else None  # `inference_mode(False)` leaves inference mode
        elif frame.inference is not None and mode is not GradMode.OFF:
            # `torch.enable_grad()` inside `torch.inference_mode()`: grad mode is on, yet nothing is recorded
            frame.inert, mode, at = at, GradMode.OFF, frame.inference
        frame.modes.append(mode)
        frame.mode_nodes.append(at)
        try:
            self._block(node.body)
        finally:
            frame.modes.pop()
            frame.mode_nodes.pop()
            frame.inference, frame.inert = outer

    def _is_inference(self, switch: Optional[cst.BaseExpression]) -> bool:
        """Is this `with` item or decorator `torch.inference_mode(...)`? Only it undoes itself:
        `torch.enable_grad()` inside `torch.inference_mode()` records nothing."""
        if switch is None:
            return False
        func = switch.func if isinstance(switch, cst.Call) else switch
        return self._qualname(func) == "torch.inference_mode"

    def _off_why(self, node: cst.CSTNode) -> Evidence:
        """Why what `node` computes with grad off has no graph: the block that turned grad off, or, in a
        function every call of which runs with grad off, the call (`test_step` called inside `torch.no_grad()`)."""
        frame, fn = self.frame, self.function
        at = frame.mode_nodes[-1]
        if frame.inert is not None and at is frame.inference:
            return Evidence(at, f"`{self._short(frame.inert)}` does not undo `{self._short(at)}`")
        if at is None and fn is not None and fn.decorated_mode is None and fn.off_call is not None:
            call, outer = fn.off_call
            return Evidence(call, f"`{fn.name}` is called " + (f"inside `{self._short(outer)}`" if outer is not None
                                                                  else "with grad off"))
        outside = self.outside_of(fn) if at is None and fn is not None and fn.off_call is None else None
        if outside is not None and outside.mode is GradMode.OFF:
            return Evidence(fn.node.name, f"`{fn.name}` is {outside.why}", elsewhere=True, placed=False)
        switch = "torch.inference_mode()" if frame.inference is not None else "torch.no_grad()"
        return Evidence(node, f"computed inside `{switch}`")

    def grad_proved_on(self) -> bool:
        """Is grad mode on here for certain - module-level code, a function that trains, or one every
        call of which in this file runs with grad on - rather than on only for want of a caller we can
        see (a model's `generate()`, called from another file, perhaps under `torch.no_grad()`)?"""
        if self.frame.mode is not GradMode.ON:
            return False
        return self.function is None or self._on_in(self.function, set())

    def proved_by_other_files(self) -> Optional[Outside]:
        """The other files' calls, when only they prove grad is on here for certain (see
        `grad_proved_on`): their `why` is "called with grad on: sample.py line 9, in `main()`"."""
        fn = self.function
        if fn is None or self.frame.mode is not GradMode.ON or fn.decorated_mode is GradMode.ON \
                or self._backpropagates(fn):
            return None
        outside = self.outside_of(fn, "proved")
        return outside if outside is not None and outside.proved else None

    def _backpropagates(self, fn: FunctionInfo) -> bool:
        """Any `.backward()` or autograd call in the function (Uses.backpropagates): the scan of its
        uses is made only for code that names one (asked of every function that calls another file's)."""
        if self.facts_of(fn.node).all_names.isdisjoint(_BACKWARD_NAMES):
            return False
        return self._scope_uses(fn.node).backpropagates

    def _on_in(self, fn: FunctionInfo, seen: set) -> bool:
        if fn.decorated_mode is GradMode.ON or self._backpropagates(fn):
            return True  # a function that trains runs with grad on
        outside = self.outside_of(fn, "proved")
        if outside is not None and outside.mode is not None:
            return outside.proved  # every call in the other files of the project runs with grad on for certain
        if not fn.call_sites or fn.call_modes != {GradMode.ON} or fn in seen:
            return False
        seen.add(fn)
        # every caller of the file runs with grad on for certain (module-level code does)
        return all(self._on_in(c, seen) for c in fn.callers) if fn.callers else fn.called_at_top
