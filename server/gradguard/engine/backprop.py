"""Evidence that flows backwards from a `.backward()`: what a back-propagated value was computed
from carries a graph too, and the callable that made it from data is a model (rules.md, "Evidence
flows both ways").

    scores = scorer(feats).squeeze(-1)        # scorer: a model (its output, from data, has a graph)
    loss = loss_fn(scores, rel)               # scores: carries a graph (the prediction of the loss)
    loss.backward()                           # loss: carries a graph

A syntactic pass over one scope, flow-insensitive like the rest of evidence.py: a name is followed
through every expression it is assigned (`name = ...`, `name += ...`); neutral tensor ops
(`.squeeze`, `.view`, indexing, arithmetic with numbers) keep the chain. Only names the scope
computes are claimed (a parameter in a product may be a float), and the first argument of a loss
function of torch's (`F.mse_loss(pred, y)`), which is the prediction.
"""

from __future__ import annotations

import builtins
from typing import Optional

import libcst as cst

from gradguard.engine import knowledge as K
from gradguard.engine.syntax import place_key
from gradguard.engine.walk import walk

# Tensor methods that return a value carrying the receiver's graph (a view, a copy, a reduction,
# an elementwise function): the chain goes on through them.
_NEUTRAL_METHODS = (
    K.VIEW_METHODS | K.SAME_GRAD_METHODS_RETURN_SELF_KIND | K.SCALAR_REDUCTIONS | K.ELEMENTWISE
    | frozenset("""squeeze unsqueeze softmax log_softmax sigmoid tanh relu exp log mean sum clamp
    clip abs neg pow sqrt float double half to cpu cuda contiguous flatten view reshape""".split())
) - K.NEVER_GRAD_METHODS
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply, cst.Power)
# Broadcasting operators: the result has as many dims as its widest operand, so a 0-dim result
# had 0-dim operands (not `@`: two vectors make a 0-dim product).
_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


class _Defs(cst.CSTVisitor):
    """What each name of one scope (and, in a method, each `self.x`) is assigned (nested scopes
    are their own)."""

    def __init__(self, root: cst.CSTNode):
        self.root = root
        self.defs: dict = {}  # name -> [expressions]
        self.unpacked: set = set()  # names also bound by unpacking or a loop (what `defs` does not hold)
        self.imported: set = set()  # module-level names of the scope's imports are not locals
        self.leaves: set = set()  # names the scope makes a leaf (`x.requires_grad = True`, `x.requires_grad_()`)

    def visit_FunctionDef(self, node) -> bool:
        return node is self.root

    def visit_ClassDef(self, node) -> bool:
        return node is self.root

    def visit_Lambda(self, node) -> bool:
        return False

    def _def(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        key = place_key(target)
        if key is not None and (isinstance(target, cst.Name) or isinstance(self.root, cst.FunctionDef)):
            self.defs.setdefault(key, []).append(value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad":
                self._leaf(t.target.value)
            self._def(t.target, node.value)
            if isinstance(t.target, (cst.Tuple, cst.List)):
                self._unpacked(t.target)

    def visit_For(self, node: cst.For) -> None:
        self._unpacked(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "requires_grad_":
            self._leaf(node.func.value)

    def _leaf(self, expr: cst.BaseExpression) -> None:
        key = place_key(expr)
        if key is not None:
            self.leaves.add(key)

    def _unpacked(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._unpacked(e.value)
        elif isinstance(target, cst.StarredElement):
            self._unpacked(target.value)
        else:
            key = place_key(target)
            if key is not None:
                self.unpacked.add(key)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._def(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._def(node.target, node.value)  # `loss += term`: the sum is computed from the term


def _neutral(node: cst.BaseExpression, libraries: frozenset = frozenset()) -> cst.BaseExpression:
    """`scorer(x).squeeze(-1)[0]` -> `scorer(x)`: what a neutral op was applied to."""
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in _NEUTRAL_METHODS and not _library(node.func.value, libraries | _LIBRARIES):
            node = node.func.value
        else:
            return node


def _library(node: cst.BaseExpression, libraries: frozenset) -> bool:
    """`torch`, `F`, `pd.read_csv`, `Variable`: what the file imports names a library, not a value."""
    key = _dotted(node)
    return key is not None and key.split(".", 1)[0] in libraries


# Python's builtins: `next(it)`, `list(x)`, `zip(a, b)` make no graph of their own.
_BUILTINS = frozenset(dir(builtins))
# Roots of dotted callees that name a library, not a value (`torch.sigmoid(x)`, `F.mse_loss(p, y)`).
_LIBRARIES = frozenset(("torch", "F", "nn", "np", "numpy", "functional", "math"))


def _callable_given(key) -> bool:
    """`model`, `loss_fn`, `self.net`: a callable the code holds (a parameter, a local, an attribute of
    self) - not a method of some object (`self.memory.sample_batch`, `env.step`)."""
    return key is not None and (key.count(".") == 0 or key.startswith("self.") and key.count(".") == 1)


class Chains:
    """The names of one scope that a backward proves carry a graph, and the callables it proves are
    models: key -> the `.backward()` (or autograd call) that proves it."""

    def __init__(self, root: cst.CSTNode, seeds: dict, params: frozenset, imported: frozenset = frozenset()):
        self.libraries = _LIBRARIES | _BUILTINS | imported
        finder = _Defs(root)
        walk(root, finder)
        self.defs = finder.defs
        self.leaves = finder.leaves
        self.unpacked = finder.unpacked
        self.params = params
        self.graphs: dict = {}
        self.models: dict = {}
        self.zero_dim: dict = {}  # name -> the `.backward()` that proves it 0-dim
        self.losses: dict = {}  # callables given a prediction and a target -> (that call, the backward of its result)
        for key, proof in seeds.items():
            if "." not in key or key.startswith("self.") and key in self.defs:
                for expr in self.defs.get(key, ()):
                    self._expr(expr, proof)
            if not proof.args and _dotted(proof.func) == f"{key}.backward":
                self._zero_dim(key, proof)

    def _zero_dim(self, key: str, proof: cst.Call) -> None:
        """`loss = loss_triplet + 0.001 * loss_embedd; loss.backward()`: PyTorch creates the gradient
        implicitly only for one element, and a broadcast result has as many dims as its widest term.
        Claimed only for terms that a callable the code holds computed (`criterion(d_a, d_b, t)`), not
        for what a tensor op shaped (`klds.sum(1).mean(0, True)` is a 1-element vector: `[0]` works),
        and only for names bound once in the scope: the claim holds for the value every use reads."""
        defs = self.defs.get(key, ())
        if len(defs) != 1 or key in self.unpacked:
            return
        todo = [defs[0]]
        while todo:
            e = todo.pop()
            if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, _ELEMENTWISE):
                todo += [e.left, e.right]
            elif isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
                todo.append(e.expression)
            elif isinstance(e, cst.Name) and e.value not in self.zero_dim and e.value not in self.unpacked \
                    and len(self.defs.get(e.value, ())) == 1:
                d = self.defs[e.value][0]
                if isinstance(d, (cst.BinaryOperation, cst.UnaryOperation)):
                    todo.append(d)  # `total = main + aux; loss = total + reg`
                elif isinstance(d, cst.Call) and _callable_given(_dotted(d.func)) \
                        and not _library(d.func, self.libraries):
                    self.zero_dim[e.value] = proof

    def _name(self, name: str, proof: cst.Call, prediction: bool = False) -> None:
        """`name` carries a graph: a name this scope computes, or a loss's prediction."""
        if name in self.graphs or not (prediction and name in self.params or self._computedplace_key(name, frozenset())):
            return
        self.graphs[name] = proof
        for expr in self.defs.get(name, ()):
            self._expr(expr, proof)

    def _expr(self, expr: cst.BaseExpression, proof: cst.Call) -> None:
        expr = _neutral(expr, self.libraries)
        key = place_key(expr)
        if key is not None and (isinstance(expr, cst.Name) or key in self.defs):
            self._name(key, proof)
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
            self._expr(expr.left, proof)
            self._expr(expr.right, proof)
        elif isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            self._expr(expr.expression, proof)
        elif isinstance(expr, cst.Call):
            self._call(expr, proof)

    def _call(self, call: cst.Call, proof: cst.Call) -> None:
        key = _dotted(call.func)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if key is None or not args:
            return
        root, last = key.split(".", 1)[0], key.rsplit(".", 1)[-1]
        if root in self.libraries:
            if last in K.FUNCTIONAL_LOSSES:  # `F.mse_loss(pred, y)`: the prediction has the graph
                first = _neutral(args[0], self.libraries)
                key = place_key(first)
                if key is not None and (isinstance(first, cst.Name) or key in self.defs):
                    self._name(key, proof, prediction=True)
                else:
                    self._expr(first, proof)
            elif last in ("cat", "stack", "sum", "mean"):
                for a in args:
                    self._expr(a, proof)
            return
        # A callable the code was given: a loss of a computed prediction (`loss_fn(scores, rel)`: a
        # prediction and a target), or a model applied to data (`scorer(feats)`), whose output has a
        # graph of its own. A method of an object (`self.memory.sample()`, `env.step(action)`) may compute
        # anything from its one argument: nothing is claimed through it; with a prediction and a target
        # (`losses.compute_loss(outputs, targets, lengths)`) it is a loss.
        if not _callable_given(key) and len(args) < 2:
            return
        first = _neutral(args[0], self.libraries)
        given = key in self.params or key.startswith("self.")  # a model or a loss the code was handed
        if (len(args) >= 2 or not given) and self._computed(first):  # (a helper of the file passes it on)
            if key in self.params and len(args) >= 2 and self._predicted(first, frozenset()):
                self.losses.setdefault(key, (call, proof))  # differentiable in its prediction: a loss, whatever its name
            self._expr(first, proof)
        elif _callable_given(key) and (key in self.params or key.startswith("self.")):
            self.models.setdefault(key, call)

    def _predicted(self, expr: cst.BaseExpression, seen: frozenset) -> bool:
        """A model's output, through neutral ops only (`net(X)`, `out = net(x).squeeze(-1)`): no cut on the
        way (`torch.from_numpy(pred.detach().numpy())` is data, whatever computed it)."""
        expr = _neutral(expr, self.libraries)
        if isinstance(expr, cst.Call):
            return _callable_given(_dotted(expr.func)) and not _library(expr.func, self.libraries)
        key = place_key(expr)
        if key is not None and key in self.leaves:
            return False  # made a leaf by the code (`feats.requires_grad = True`): what it is given trains on it
        return key is not None and key not in seen and any(self._predicted(d, seen | {key}) for d in self.defs.get(key, ()))

    def _computedplace_key(self, key: str, seen: frozenset) -> bool:
        return key not in seen and any(self._computed(d, seen | {key}) for d in self.defs.get(key, ()))

    def _computed(self, expr: cst.BaseExpression, seen: frozenset = frozenset()) -> bool:
        """Was this computed in the scope by something that may make a graph (a callable's call,
        arithmetic on such a result), not data it was given (`batch["x"].to(device)`)?"""
        expr = _neutral(expr, self.libraries)
        key = place_key(expr)
        if key is not None and (isinstance(expr, cst.Name) or key in self.defs):
            return self._computedplace_key(key, seen)
        if isinstance(expr, cst.BinaryOperation):
            return self._computed(expr.left, seen) or self._computed(expr.right, seen)
        if isinstance(expr, cst.Call):
            if _library(expr.func, self.libraries):
                return any(self._computed(a.value, seen) for a in expr.args)
            if _callable_given(_dotted(expr.func)):
                return True  # `model(x)`, `self.net(x)`
            # a method of a computed value (`pred.detach().cpu().numpy()`), not of data (`loader.next()`)
            return isinstance(expr.func, cst.Attribute) and self._computed(expr.func.value, seen)
        return False
