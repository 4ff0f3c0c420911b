"""generator: the producer inside the anchor's loop turned into a generator the loop consumes.

    for x, y in loader:                        def produce(model, loader):
        optimizer.zero_grad()                      for x, y in loader:
        out = model(x)              ->                 yield (x, y), model(x)
        ...                                    ...
                                               for (x, y), out in produce(model, loader):
                                                   optimizer.zero_grad()
                                                   ...

The producer is the first statement of the loop's body that assigns a model call's result (a
callable the file holds: a parameter, a variable, `self.net`), preceded by nothing but
`.zero_grad()` calls, and reading only the loop's target and names the loop never rebinds - so
the generator, which computes it when the loop asks for the next item, computes the same value.
The loop is the innermost `for` around the anchor that has one. The generator is defined before
the top-level statement holding the function (a method where it reads `self`). Where the anchor
is the producer, its line is the `yield` and the consuming `for` counts as well.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from transforms.edits import Helper, apply, call_comment, grouped, model_calls, statement
from transforms.subject import NotApplicable, Outcome, Subject, walk


def variants(subject: Subject) -> list[Outcome]:
    try:
        return [Outcome("", code=generated(subject))]
    except NotApplicable as e:
        return [Outcome("", reason=str(e))]


def generated(subject: Subject) -> str:
    s = subject.anchor
    function = subject.function_of(s)
    if function is None:
        raise NotApplicable("the statement is not in a function")
    loops = [loop for loop in subject.loops_around(s, function) if isinstance(loop, cst.For) and not loop.asynchronous]
    if not loops:
        raise NotApplicable("the statement is in no for loop")
    for loop in loops:
        producer = _producer(subject, loop)
        if producer is not None:
            break
    else:
        raise NotApplicable("no producer at the top of the loop")
    assign = producer.body[0]
    targets = {n.value for n in walk(loop.target) if isinstance(n, cst.Name)}
    reads = [r for r in subject.local_reads(loop.iter, function) + subject.local_reads(assign.value, function)
             if r not in targets]
    helper = Helper(subject, function, list(dict.fromkeys(reads)), "produce")
    produced = f"{grouped(subject, loop.target)}, {grouped(subject, assign.value)}"
    definition = statement(subject, f"{helper.signature()}\n    for {subject.module.code_for_node(loop.target)} in "
                                    f"{subject.module.code_for_node(loop.iter)}:\n        yield {produced}\n")
    if producer is s:  # the anchor's marker goes with the value to the yield
        inner = definition.body.body[0]
        line = inner.body.body[0].with_changes(trailing_whitespace=s.trailing_whitespace)
        definition = definition.deep_replace(inner.body.body[0], line)
    header = statement(subject, f"for {grouped(subject, loop.target)}, {grouped(subject, assign.targets[0].target)} in "
                                f"{helper.call()}:\n    pass\n")
    replace, before, after = helper.placed(definition, after=False)

    def consume(node: cst.For) -> cst.For:
        block = node.body if node.body.body else node.body.with_changes(body=[statement(subject, "pass\n")])
        if producer is s:
            block = block.with_changes(header=call_comment())
        return node.with_changes(target=header.target, iter=header.iter, body=block)

    replace[loop] = consume
    replace[producer] = cst.RemovalSentinel.REMOVE
    return apply(subject, replace, before, after)


def _producer(subject: Subject, loop: cst.For) -> Optional[cst.SimpleStatementLine]:
    """The statement of the loop's body that produces the loop's value (see the module docstring)."""
    rebound = {n.value for n in walk(loop.body) if isinstance(n, cst.Name) and _bound_here(subject, n)}
    targets = {n.value for n in walk(loop.target) if isinstance(n, cst.Name)}
    for line in loop.body.body:
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        small = line.body[0]
        if _zero_grad(small):
            continue
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and model_calls(subject, small.value)):
            return None
        if not all(isinstance(n, cst.Name) for n in _elements(small.targets[0].target)):
            return None
        reads = {n.value for n in walk(small.value) if isinstance(n, cst.Name)}
        if reads & (rebound - targets) or any(isinstance(n, (cst.Yield, cst.Await, cst.NamedExpr))
                                              for n in walk(small.value)):
            return None
        return line
    return None


def _bound_here(subject: Subject, name: cst.Name) -> bool:
    scope = subject.scopes.get(name)
    return scope is not None and name.value in scope.assignments and \
        any(a.node is name for a in scope.assignments[name.value])


def _zero_grad(small: cst.BaseSmallStatement) -> bool:
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
        isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == "zero_grad"


def _elements(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            yield from _elements(e.value)
    else:
        yield target

