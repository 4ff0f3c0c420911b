"""A notebook cell as IPython runs it (cells.py): its leading indentation removed as
IPython's `leading_empty_lines` and `leading_indent` remove it, positions carried back,
and a cell Python cannot parse left out with why."""

from __future__ import annotations

import pytest

from gradguard.cells import Cell, dedent, join

# (cell, what IPython compiles) - IPython's rule: the first line with code sets the prefix;
# each line that starts with it loses it, the others stay as they are.
CASES = {
    "spaces": ("  x = 1\n  if x:\n      y = 2\n", "x = 1\nif x:\n    y = 2\n"),
    "a_tab": ("\tx = 1\n\ty = 2", "x = 1\ny = 2"),
    "blank_lines_first": ("\n   \n  x = 1\n  y = 2", "\n   \nx = 1\ny = 2"),
    "a_line_without_the_prefix_stays": ("    s = '''a\nb'''\n    t = 1", "s = '''a\nb'''\nt = 1"),
    "no_indentation": ("x = 1\n  # comment", "x = 1\n  # comment"),
    "only_blank": ("\n  \n", "\n  \n"),
}


@pytest.mark.parametrize("name", CASES)
def test_dedent_as_ipython(name):
    cell, ran = CASES[name]
    text, indent = dedent(cell)
    assert text == ran
    # each line lost exactly what `removed` says
    assert [len(a) - len(b) for a, b in zip(cell.split("\n"), text.split("\n"))] == list(indent.removed or [0] * len(text.split("\n")))


def test_an_edit_gets_the_cell_indentation_back():
    cell = "  net.eval()\n  y = net(x)\n  print(y)"
    _, indent = dedent(cell)
    lines = cell.split("\n")
    # a wrap of program line 2 (`y = net(x)`, columns 0-10) in `with torch.no_grad():`
    start, end, text = indent.edit(lines, (2, 0), (2, 10), "with torch.no_grad():\n    y = net(x)")
    assert (start, end, text) == ((2, 2), (2, 12), "with torch.no_grad():\n      y = net(x)")
    # an insertion before program line 1 puts the prefix back before what it pushes down
    start, end, text = indent.edit(lines, (1, 0), (1, 0), "import torch\n")
    assert (start, end, text) == ((1, 2), (1, 2), "import torch\n  ")


def test_a_cell_python_cannot_parse_is_left_out_and_said():
    program = join([Cell("a", 0, "import torch"), Cell("b", 0, "x = (\ny = 1"), Cell("c", 0, "  z = 2")])
    assert program.source == "import torch\n\n\nz = 2\n"  # cell b's two lines kept, blank
    assert program.starts == (1, 2, 4)
    assert program.skipped == ((1, "SyntaxError: '(' was never closed (line 1)"),)
