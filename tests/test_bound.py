"""Definite assignment (engine/bound.py): is every name a fix's code reads bound where
the code goes? Each case puts `code` before the statement marked `# here`, and the
verdict is checked against running the program with that code in place."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradguard.engine.bound import Bindings, Status, parse_code

BOUND, MAYBE, NEVER = Status.BOUND, Status.MAYBE, Status.NEVER


def marked(module: cst.Module):
    """The statement a `# here` comment line stands above."""
    found = []

    class Find(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node):
            self._check(node)

        def visit_For(self, node):
            self._check(node)

        def visit_FunctionDef(self, node):
            self._check(node)

        def visit_If(self, node):
            self._check(node)

        def _check(self, node):
            lines = node.leading_lines if not isinstance(node, cst.FunctionDef) else (
                *node.leading_lines, *(line for d in node.decorators for line in d.leading_lines))
            if any(line.comment is not None and line.comment.value == "# here" for line in lines):
                found.append(node)

    module.visit(Find())
    (stmt,) = found
    return stmt


def verdict(source: str, code: str, extra=frozenset()) -> dict:
    module = cst.parse_module(textwrap.dedent(source))
    stmt = marked(module)
    new = parse_code(code, "", True)
    return Bindings(module, [id(stmt)]).unbound(stmt, new, [], frozenset(extra))


def inserted(source: str, code: str) -> str:
    """The program with `code` put before the marked statement, at its indentation."""
    lines = textwrap.dedent(source).split("\n")
    i = next(k for k, line in enumerate(lines) if line.strip() == "# here")
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = "\n".join(indent + line for line in code.split("\n"))
    return "\n".join(lines)


def crashes(program: str) -> bool:
    try:
        exec(compile(program, "<test>", "exec"), {})
    except (NameError, UnboundLocalError):
        return True
    return False


# (program, code put before `# here`, expected verdict, does the result crash when run)
CASES = {
    "decoder_hidden_first_bound_later_in_the_loop": ("""
        def train(decoder, batches):
            for x in batches:
                # here
                out, decoder_hidden = decoder(x)
                for t in range(2):
                    out, decoder_hidden = decoder(x, decoder_hidden)

        train(lambda x, h=None: (x, h), [1, 2])
        """, "decoder_hidden = decoder_hidden.detach()", {"decoder_hidden": NEVER}, True),
    "bound_before_the_loop": ("""
        def train(step, batches):
            hidden = 0
            for x in batches:
                # here
                hidden = step(x, hidden)

        train(lambda x, h: x + h, [1, 2])
        """, "hidden = hidden + 0", {}, False),
    "bound_on_one_branch": ("""
        def f(flag):
            if flag:
                h = 1
            # here
            return 0

        f(True)
        f(False)
        """, "h = h + 1", {"h": MAYBE}, True),
    "bound_in_the_try_read_in_the_handler": ("""
        def f():
            try:
                h = int("x")
            except ValueError:
                # here
                pass

        f()
        """, "print(h)", {"h": MAYBE}, True),
    "deleted": ("""
        def f():
            h = 1
            del h
            # here
            return 0

        f()
        """, "print(h)", {"h": NEVER}, True),
    "a_global_read_in_a_function_is_looked_up_when_it_runs": ("""
        def f():
            # here
            return 0

        import math
        f()
        """, "math.sqrt(4)", {}, False),
    "a_module_name_before_its_import": ("""
        x = 0
        # here
        x = 1
        import math
        """, "math.sqrt(4)", {"math": NEVER}, True),
    "a_name_the_module_never_binds": ("""
        def f():
            # here
            return 0

        f()
        """, "print(nowhere)", {"nowhere": NEVER}, True),
    "a_fix_that_binds_a_global_makes_it_local": ("""
        h = 1

        def f():
            # here
            return h

        f()
        """, "h = h + 1", {"h": NEVER}, True),
    "a_comprehension_variable_does_not_leak": ("""
        def f():
            squares = [i * i for i in range(3)]
            # here
            return squares

        f()
        """, "print(i)", {"i": NEVER}, True),
    "a_loop_target_after_the_loop": ("""
        def f(xs):
            for x in xs:
                pass
            # here
            return 0

        f([])
        """, "print(x)", {"x": MAYBE}, True),
    "a_with_target_in_its_body": ("""
        import contextlib

        def f():
            with contextlib.nullcontext(3) as value:
                # here
                pass

        f()
        """, "print(value)", {}, False),
    "an_except_name_is_unbound_after_its_handler": ("""
        def f():
            try:
                raise ValueError
            except ValueError as e:
                pass
            # here
            return 0

        f()
        """, "print(e)", {"e": NEVER}, True),
    "a_while_true_loop_leaves_by_break_only": ("""
        def f():
            while True:
                h = 1
                break
            # here
            return h

        f()
        """, "print(h)", {}, False),
    "a_parameter": ("""
        def f(h):
            # here
            return h

        f(1)
        """, "h = h + 1", {}, False),
    "a_closure": ("""
        def outer():
            h = 1

            def inner():
                # here
                return h

            return inner()

        outer()
        """, "print(h)", {}, False),
    "a_decorator_before_the_import_it_reads": ("""
        x = 0
        # here
        def f():
            return 0

        import functools
        """, "@functools.lru_cache()", {"functools": NEVER}, True),
    "a_decorator_after_the_import": ("""
        import functools

        # here
        def f():
            return 0
        """, "@functools.lru_cache()", {}, False),
    "a_class_body_reads_the_module": ("""
        import math

        class A:
            # here
            x = 1
        """, "y = math.sqrt(4)", {}, False),
    "read_by_the_program_anyway_on_every_path": ("""
        def f(reset):
            if reset:
                h = 0
            # here
            return h + 1

        f(True)
        """, "h = h * 2", {}, False),
    "a_walrus_in_the_test_binds": ("""
        def f(xs):
            if (n := len(xs)) > 1:
                pass
            # here
            return 0

        f([1])
        """, "print(n)", {}, False),
    "a_walrus_right_of_and_may_not_run": ("""
        def f(xs):
            if xs and (n := len(xs)):
                pass
            # here
            return 0

        f([])
        """, "print(n)", {"n": MAYBE}, True),
    "builtins": ("""
        def f(h):
            # here
            return h

        f((1, 2))
        """, "if isinstance(h, tuple):\n    h = tuple(s for s in h)", {}, False),
    "the_fix_imports_what_it_reads": ("""
        def f():
            # here
            return 0

        f()
        """, "import math\nprint(math.pi)", {}, False),
}


@pytest.mark.parametrize("name", CASES)
def test_verdict(name):
    source, code, expected, _ = CASES[name]
    assert verdict(source, code) == expected


@pytest.mark.parametrize("name", CASES)
def test_verdict_matches_running_the_program(name):
    # BOUND: runs; MAYBE and NEVER: the program as written crashes on the path it takes
    source, code, expected, crash = CASES[name]
    assert crashes(inserted(source, code)) is crash
    assert crash is bool(expected)


def test_names_the_same_fix_imports_at_module_level_are_bound():
    source = """
        x = 0
        # here
        x = 1
        """
    assert verdict(source, "print(torch)") == {"torch": NEVER}
    assert verdict(source, "print(torch)", extra={"torch"}) == {}
