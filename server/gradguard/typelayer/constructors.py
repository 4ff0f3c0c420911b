"""Classes are not instances: jedi types a parameter annotated `Model: nn.Module` as an
nn.Module *instance*, but code that calls it and then calls what the call returned
(`model = Model(envs)` then `model(x)`, or `model.eval()`) uses it as the class. Such a
call constructs a module; only calling the instance is a forward."""

from __future__ import annotations

import libcst as cst

from gradguard.engine import evidence
from gradguard.engine.values import Kind, Value


class _Constructions(cst.CSTVisitor):
    """(scope node, callee Name node, target name) for each `target = Callee(...)` under a scope."""

    def __init__(self, callees: set):
        self.callees = callees
        self.scopes: list = []
        self.found: list = []

    def visit_Module(self, node) -> None:
        self.scopes.append(node)

    def visit_FunctionDef(self, node) -> None:
        self.scopes.append(node)

    def leave_FunctionDef(self, node) -> None:
        self.scopes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        call = node.value
        if (
            isinstance(call, cst.Call)
            and id(call.func) in self.callees
            and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
        ):
            self.found.append((self.scopes[-1], call.func, node.targets[0].target.value))


def as_classes(module: cst.Module, facts: dict) -> dict:
    """`facts` (node -> Value) with each module *instance* that is called to make an object
    used as a module turned into the class of that module."""
    instances = {id(node): node for node, v in facts.items() if v.kind is Kind.MODULE and isinstance(node, cst.Name)}
    if not instances:
        return facts
    visitor = _Constructions(set(instances))
    module.visit(visitor)
    if not visitor.found:
        return facts
    uses: dict = {}
    out = dict(facts)
    for scope, callee, target in visitor.found:
        found = uses.get(id(scope))
        if found is None:
            found = uses[id(scope)] = evidence.uses_of(scope)
        if target in found.called or found.module_evidence(target) is not None:
            instance = facts[callee]
            out[callee] = Value(kind=Kind.CLASS, grad=instance.grad, item=instance.but(why=None), why=instance.why)
    return out
