"""Notebooks through the real CLI: code cells analysed together, findings named by
cell and line, --fix rewriting only the changed cells' sources (every other byte
of the file kept), magics left alone."""

from __future__ import annotations

import json

import nbformat

MODEL = "%matplotlib inline\nimport torch\n\nnet = torch.nn.Linear(2, 1)\nkept = []"
LOOP = "for x in [torch.randn(3, 2)]:\n    out = net(x).sum()\n    kept.append(out)\n"
MESSAGE = (
    "`out` carries an autograd graph (from `net(x)` on line 2 of cell 3) that is never back-propagated; "
    "storing it in `kept` keeps every saved activation alive across iterations"
)


def notebook(*cells, language: str = "python") -> str:
    """A notebook as Jupyter writes one: outputs, execution counts and metadata included."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": language},
        "language_info": {"name": language, "version": "3.11.4"},
        "tags": ["training", "ünïcode"],
    }
    for kind, text in cells:
        if kind == "code":
            cell = nbformat.v4.new_code_cell(text, execution_count=7)
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="epoch 1: 0.25\n")]
        else:
            cell = nbformat.v4.new_markdown_cell(text)
        nb.cells.append(cell)
    return nbformat.writes(nb)


TRAIN = notebook(("code", MODEL), ("markdown", "# Training"), ("code", LOOP))


def test_cells_are_analysed_together_and_named(gradguard, write):
    write("train.ipynb", TRAIN)
    run = gradguard("check", "train.ipynb")
    assert run.stdout == f"train.ipynb:cell 3:3:17: error: GG101 {MESSAGE}\nFound 1 finding (1 fixable with --fix). 1 file checked.\n"
    assert (run.stderr, run.returncode) == ("", 1)


def test_directories_include_notebooks(gradguard, write):
    write("nb/train.ipynb", TRAIN)
    assert gradguard("check", "--output-format", "concise").stdout.startswith("nb/train.ipynb:cell 3:3:17: error: GG101 ")


def test_json_names_the_cell(gradguard, write):
    write("train.ipynb", TRAIN)
    (finding,) = json.loads(gradguard("check", "--output-format", "json", "train.ipynb").stdout)
    span = {"line": 3, "column": 17, "end_line": 3, "end_column": 20}
    assert finding == {
        "code": "GG101",
        "name": "graph-kept-across-iterations",
        "severity": "error",
        "path": "train.ipynb",
        "cell": 3,
        **span,
        "message": MESSAGE,
        "related": [
            {"cell": 3, "line": 2, "column": 11, "end_line": 2, "end_column": 17, "message": "the graph is created here"}
        ],
        "fixes": [
            {"title": "Store `out.detach()`", "safety": "safe", "edits": [{"cell": 3, **span, "new_text": "out.detach()"}]},
            {
                "title": "Store `out.detach().item()`",
                "safety": "unsafe",
                "edits": [{"cell": 3, **span, "new_text": "out.detach().item()"}],
            },
        ],
    }


def test_code_frame_shows_the_cell(gradguard_tty, write):
    write("train.ipynb", TRAIN)
    run = gradguard_tty("check", "train.ipynb", env={"NO_COLOR": "1"})
    assert run.stdout == (
        f"train.ipynb:cell 3:3:17: error: GG101 {MESSAGE}\n"
        "  |\n"
        "1 | for x in [torch.randn(3, 2)]:\n"
        "2 |     out = net(x).sum()\n"
        "3 |     kept.append(out)\n"
        "  |                 ^^^\n"
        "  |\n"
        "  = note: the graph is created here (line 2 of cell 3)\n"
        "  = help: Store `out.detach()`\n"
        "\n"
        "Found 1 finding (1 fixable with --fix). 1 file checked.\n"
    )


def test_fix_rewrites_only_the_changed_cell(gradguard, write, tmp_path):
    path = write("train.ipynb", TRAIN)
    run = gradguard("check", "--fix", "train.ipynb")
    assert (run.stdout, run.returncode) == ("Fixed 1 finding. 1 file checked.\n", 0)
    expected = TRAIN.replace('"    kept.append(out)\\n"', '"    kept.append(out.detach())\\n"')
    assert expected != TRAIN
    assert path.read_text() == expected  # outputs, metadata, layout: byte for byte
    assert nbformat.reads(path.read_text(), as_version=4).cells[0].source == MODEL  # the magic kept


def test_fix_keeps_a_hand_formatted_notebook_byte_for_byte(gradguard, write):
    # Not nbformat's layout: two-space indent, sources as one string, keys in another order.
    text = json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "P"}},
            "cells": [
                {"cell_type": "code", "id": "a1", "metadata": {}, "execution_count": None, "outputs": [], "source": MODEL},
                {
                    "cell_type": "code",
                    "id": "b2",
                    "metadata": {"collapsed": True},
                    "execution_count": 3,
                    "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}],
                    "source": LOOP,
                },
            ],
        },
        indent=2,
        ensure_ascii=True,
    )
    path = write("nb.ipynb", text)
    assert gradguard("check", "--fix", "nb.ipynb").returncode == 0
    assert path.read_text() == text.replace("kept.append(out)\\n", "kept.append(out.detach())\\n")


def test_diff_shows_the_notebook_change_and_writes_nothing(gradguard, write):
    path = write("train.ipynb", TRAIN)
    run = gradguard("check", "--diff", "train.ipynb")
    assert path.read_text() == TRAIN
    assert '-    "    kept.append(out)\\n"\n+    "    kept.append(out.detach())\\n"\n' in run.stdout
    assert (run.stderr, run.returncode) == ("Would fix 1 finding.\n", 1)


def test_a_cell_python_cannot_parse_is_skipped_by_its_number_and_the_others_checked(gradguard, write):
    # Jupyter runs the other cells: so does the analysis, and it says which cell it left out
    write("bad.ipynb", notebook(("code", MODEL), ("code", "x = (\n"), ("markdown", "# Loop"), ("code", LOOP)))
    run = gradguard("check", "bad.ipynb")
    assert run.stderr == "bad.ipynb: warning: cell 2 skipped: SyntaxError: '(' was never closed (line 1)\n"
    assert run.stdout == (f"bad.ipynb:cell 4:3:17: error: GG101 {MESSAGE.replace('cell 3', 'cell 4')}\n"
                          "Found 1 finding (1 fixable with --fix). 1 file checked.\n")
    assert run.returncode == 1


def test_not_a_notebook(gradguard, write):
    write("broken.ipynb", "{not json")
    run = gradguard("check", "broken.ipynb")
    assert run.returncode == 2
    assert run.stderr.startswith("broken.ipynb: error: not a readable notebook: ")


def test_a_notebook_of_another_language_has_no_python(gradguard, write):
    write("r.ipynb", notebook(("code", LOOP), language="R"))
    run = gradguard("check", "r.ipynb")
    assert (run.stdout, run.returncode) == ("All checks passed! 1 file checked.\n", 0)


# A notebook shaped like real ones: a magic as the last line of a cell with no trailing
# newline, `!pip`, a markdown cell, fixes on the last line of one cell and the first line of
# the next, a `%%time` cell, and a fix that would have to rewrite a `%time` line.
REAL = notebook(
    ("code", "import torch\n%matplotlib inline"),
    ("code", "!pip install tqdm\nnet = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\nkept, more = [], []"),
    ("markdown", "## Train"),
    ("code", "loss = net(torch.randn(3, 2)).sum()\nloss.backward()\nopt.step()\nfor x in [torch.randn(3, 2)]:\n    kept.append(net(x).sum())"),
    ("code", "for x in [torch.randn(3, 2)]: more.append(net(x).mean())\nprint(len(more))"),
    ("code", "%%time\nfor x in [torch.randn(3, 2)]:\n    kept.append(net(x).max())\n"),
    ("code", "net.eval()\nfor x in [torch.randn(3, 2)]:\n    y = net(x)\n    %time z = y.argmax()"),
)
REAL_LAST = "net.eval()\nfor x in [torch.randn(3, 2)]:\n    y = net(x)\n    %time z = y.argmax()"
REFUSED = "real.ipynb: warning: cell 7, line 3: GG103 fix not applied: it touches an IPython magic line\n"
GG103_LEFT = (
    "real.ipynb:cell 7:3:9: warning: GG103 `net(x)` runs with grad enabled after `.eval()` on line 1 of cell 7 and its output "
    "never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing (`eval()` does "
    "not disable gradients)\n"
)


def fixed_real() -> str:
    return (
        REAL.replace('"    kept.append(net(x).sum())"', '"    kept.append(net(x).sum().detach())"')
        .replace('more.append(net(x).mean())\\n"', 'more.append(net(x).mean().detach())\\n"')
        .replace('"    kept.append(net(x).max())\\n"', '"    kept.append(net(x).max().detach())\\n"')
    )


def test_fixes_apply_cell_by_cell_and_a_refused_one_is_reported(gradguard, write):
    path = write("real.ipynb", REAL)
    run = gradguard("check", "--fix", "real.ipynb")
    assert run.stderr == REFUSED
    assert (run.stdout, run.returncode) == (GG103_LEFT + "Fixed 3 findings.\nFound 1 finding. 1 file checked.\n", 1)
    assert fixed_real() != REAL and path.read_text() == fixed_real()
    cells = nbformat.reads(path.read_text(), as_version=4).cells
    assert cells[0].source == "import torch\n%matplotlib inline"  # the magic, and no newline added
    again = gradguard("check", "--fix", "real.ipynb")  # applying the fixes twice changes nothing more
    assert (again.stderr, again.returncode) == (REFUSED, 1)
    assert path.read_text() == fixed_real()


def test_diff_of_a_notebook_with_a_refused_fix_says_so(gradguard, write):
    path = write("real.ipynb", REAL)
    run = gradguard("check", "--diff", "real.ipynb")
    assert path.read_text() == REAL
    assert run.stdout.count("\n+    ") == 3 and '+    "    kept.append(net(x).sum().detach())"\n' in run.stdout
    assert (run.stderr, run.returncode) == (REFUSED + "Would fix 3 findings. 1 fix cannot be applied (see above).\n", 1)


def test_diff_when_every_fix_is_refused(gradguard, write):
    only = notebook(("code", "import torch\nnet = torch.nn.Linear(2, 1)"), ("code", REAL_LAST))
    write("real.ipynb", only)
    run = gradguard("check", "--diff", "real.ipynb")
    assert run.stdout == ""
    assert (run.stderr, run.returncode) == (
        "real.ipynb: warning: cell 2, line 3: GG103 fix not applied: it touches an IPython magic line\n"
        "No fixes available: 1 fix cannot be applied (see above).\n",
        1,
    )


def test_diff_of_a_notebook_shaped_like_real_ones_exactly(gradguard, write):
    # Fixes on the last line of cell 4 (no trailing newline) and the first line of cell 5 are
    # separate hunks of their own cells; the cell ending in `%matplotlib inline` and the
    # `!pip` line are untouched; the `%%time` cell's body is fixed.
    write("real.ipynb", REAL)
    run = gradguard("check", "--diff", "real.ipynb")
    assert run.stdout == (
        "--- real.ipynb\n"
        "+++ real.ipynb\n"
        "@@ -67,7 +67,7 @@\n"
        '     "loss.backward()\\n",\n'
        '     "opt.step()\\n",\n'
        '     "for x in [torch.randn(3, 2)]:\\n",\n'
        '-    "    kept.append(net(x).sum())"\n'
        '+    "    kept.append(net(x).sum().detach())"\n'
        "    ]\n"
        "   },\n"
        "   {\n"
        "@@ -85,7 +85,7 @@\n"
        "     }\n"
        "    ],\n"
        '    "source": [\n'
        '-    "for x in [torch.randn(3, 2)]: more.append(net(x).mean())\\n",\n'
        '+    "for x in [torch.randn(3, 2)]: more.append(net(x).mean().detach())\\n",\n'
        '     "print(len(more))"\n'
        "    ]\n"
        "   },\n"
        "@@ -106,7 +106,7 @@\n"
        '    "source": [\n'
        '     "%%time\\n",\n'
        '     "for x in [torch.randn(3, 2)]:\\n",\n'
        '-    "    kept.append(net(x).max())\\n"\n'
        '+    "    kept.append(net(x).max().detach())\\n"\n'
        "    ]\n"
        "   },\n"
        "   {\n"
    )


def test_fixed_real_notebook_keeps_outputs_metadata_and_every_other_cell(gradguard, write):
    path = write("real.ipynb", REAL)
    gradguard("check", "--fix", "real.ipynb")
    before, after = nbformat.reads(REAL, as_version=4), nbformat.reads(path.read_text(), as_version=4)
    assert after.metadata == before.metadata
    assert [(c.cell_type, c.get("outputs"), c.get("execution_count"), c.metadata) for c in after.cells] == [
        (c.cell_type, c.get("outputs"), c.get("execution_count"), c.metadata) for c in before.cells
    ]
    assert [c.source for c in after.cells] == [
        "import torch\n%matplotlib inline",
        "!pip install tqdm\nnet = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\nkept, more = [], []",
        "## Train",
        "loss = net(torch.randn(3, 2)).sum()\nloss.backward()\nopt.step()\nfor x in [torch.randn(3, 2)]:\n"
        "    kept.append(net(x).sum().detach())",
        "for x in [torch.randn(3, 2)]: more.append(net(x).mean().detach())\nprint(len(more))",
        "%%time\nfor x in [torch.randn(3, 2)]:\n    kept.append(net(x).max().detach())\n",
        REAL_LAST,
    ]


# A fix that adds a line (GG102's `h = h.detach()`) above a fix that would rewrite `%time`:
# the refusal is reported once, at the line of the notebook the user is looking at.
SHIFTED = notebook(
    ("code", "import torch\n%matplotlib inline"),
    ("markdown", "## Model"),
    ("code", "net = torch.nn.Linear(2, 1)\nrnn = torch.nn.RNNCell(2, 2)\nopt = torch.optim.SGD(rnn.parameters(), lr=0.1)\n!pip install tqdm"),
    (
        "code",
        "h = torch.zeros(1, 2)\nfor step in range(3):\n    h = rnn(torch.randn(1, 2), h)\n    loss = h.sum()\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\nnet.eval()\nfor x in [torch.randn(3, 2)]:\n"
        "    y = net(x)\n    %time z = y.argmax()",
    ),
)
SHIFTED_FIXED = SHIFTED.replace('"for step in range(3):\\n",\n', '"for step in range(3):\\n",\n    "    h = h.detach()\\n",\n')


def test_a_refused_fix_is_reported_once_at_its_line_before_and_after_the_fixes(gradguard, write):
    path = write("shifted.ipynb", SHIFTED)
    diff = gradguard("check", "--diff", "shifted.ipynb")  # the file as read: line 10
    assert diff.stderr == (
        "shifted.ipynb: warning: cell 4, line 10: GG103 fix not applied: it touches an IPython magic line\n"
        "Would fix 1 finding. 1 fix cannot be applied (see above).\n"
    )
    assert '+    "    h = h.detach()\\n",\n' in diff.stdout and path.read_text() == SHIFTED
    refused = "shifted.ipynb: warning: cell 4, line 11: GG103 fix not applied: it touches an IPython magic line\n"
    for _ in range(2):  # the file as written: line 11, where the finding now is; a second run changes nothing
        run = gradguard("check", "--fix", "shifted.ipynb")
        assert run.stderr == refused
        assert run.stdout.startswith("shifted.ipynb:cell 4:11:9: warning: GG103 `net(x)` runs with grad enabled after `.eval()` on line 9 of cell 4")
        assert SHIFTED_FIXED != SHIFTED and path.read_text() == SHIFTED_FIXED
    assert nbformat.reads(path.read_text(), as_version=4).cells[3].source.endswith("    y = net(x)\n    %time z = y.argmax()")


def test_an_evaluation_block_ends_with_its_cell_and_each_cell_is_fixed(gradguard, write):
    # `y = ...` (cell 1) and `z = ...` (cell 3) follow the same `.eval()`, but cells run separately
    # and no `with` can wrap two: GG103 reports one block per cell, each fixed in its own cell (the
    # GG101 fix in cell 1 applies too)
    first = "import torch\nnet = torch.nn.Linear(2, 1)\nlosses = []\nfor x in [torch.randn(3, 2)]:\n" \
        "    loss = net(x).sum()\n    losses.append(loss)\nnet.eval()\ny = net(torch.randn(3, 2))"
    text = notebook(("code", first), ("markdown", "## Evaluation"), ("code", "z = net(torch.randn(3, 2))\nprint(y, z)"))
    path = write("span.ipynb", text)
    run = gradguard("check", "--fix", "span.ipynb")
    assert run.stderr == ""
    assert run.stdout == "Fixed 3 findings. 1 file checked.\n" and run.returncode == 0
    cells = nbformat.reads(path.read_text(), as_version=4).cells
    assert cells[0].source == first.replace("append(loss)", "append(loss.detach())").replace(
        "y = net", "with torch.no_grad():\n    y = net")
    assert cells[2].source == "with torch.no_grad():\n    z = net(torch.randn(3, 2))\nprint(y, z)"


def test_an_edit_leaving_its_cell_is_refused():
    # (the check the CLI and the language server share: a fix never writes across two cells)
    from gradguard.cells import why_not_in_cell

    assert why_not_in_cell(["a = 1"], ["a = 1", "b = 2"], 1, 1, 2) == "it spans two cells"
    assert why_not_in_cell(["a = 1", "b = 2"], ["a = 1", "b = 2"], 1, 1, 2) is None


def test_a_fix_that_cannot_be_made_is_neither_shown_nor_counted_nor_cached_away(gradguard, write, tmp_path):
    write("shifted.ipynb", SHIFTED)
    check = gradguard("check", "shifted.ipynb")
    assert check.stdout.endswith("Found 2 findings (1 fixable with --fix). 1 file checked.\n")  # GG102's; not GG103's
    assert not list((tmp_path / ".gradguard_cache").glob("*.json"))  # nothing cached for it
    found = json.loads(gradguard("check", "--output-format", "json", "shifted.ipynb").stdout)
    assert [(f["code"], [x["title"] for x in f["fixes"]]) for f in found] == [
        ("GG102", ["Insert `h = h.detach()` at the start of the loop body"]),
        ("GG103", []),  # as the language server: a fix that would rewrite `%time` is not offered
    ]
    diff = gradguard("check", "--diff", "shifted.ipynb")  # not answered from the cache: the refusal is said
    assert diff.stderr.startswith("shifted.ipynb: warning: cell 4, line 10: GG103 fix not applied: ")


def test_a_fix_that_waited_for_an_overlapping_one_and_is_no_longer_offered_is_named(gradguard, write):
    # GG103 wraps cell 3's loop in no_grad; GG101's fix inside it waits, and under no_grad
    # `out` has no graph: nothing is left to fix, and the CLI says so.
    evaluation = "net.eval()\nfor x in [torch.randn(3, 2)]:\n    out = net(x)\n    kept.append(out)\n"
    path = write("eval.ipynb", notebook(("code", MODEL), ("markdown", "# Evaluation"), ("code", evaluation)))
    gone = ("fix not applied: it overlaps the fix of the GG103 finding on line {} of cell 3, applied first, and "
            "the code after that fix no longer shows this finding\n")
    diff = gradguard("check", "--diff", "eval.ipynb")
    assert diff.stderr == ("eval.ipynb: warning: cell 3, line 4: GG101 " + gone.format(3)
                           + "Would fix 1 finding. 1 fix cannot be applied (see above).\n")
    run = gradguard("check", "--fix", "eval.ipynb")
    assert run.stderr == "eval.ipynb: warning: cell 3, line 5: GG101 " + gone.format(4)
    assert (run.stdout, run.returncode) == ("Fixed 1 finding. 1 file checked.\n", 0)
    assert nbformat.reads(path.read_text(), as_version=4).cells[2].source == (
        "net.eval()\nwith torch.no_grad():\n    for x in [torch.randn(3, 2)]:\n        out = net(x)\n        kept.append(out)\n")


# Cells whose first line is indented run in Jupyter: IPython removes that indentation from
# every line that has it. They are analysed so, and findings point into the cells as written.
INDENTED = notebook(
    ("code", "  from torch import nn, randn\n  net = nn.Linear(2, 1)\n  kept = []"),
    ("markdown", "# Evaluation"),
    ("code", "\n    net.eval()\n    for x in [randn(3, 2)]:\n        s = '训练😀'; kept.append(net(x))"),
)


def test_indented_cells_are_analysed_as_ipython_runs_them(gradguard, write):
    write("indented.ipynb", INDENTED)
    run = gradguard("check", "indented.ipynb")
    assert run.stdout == (  # `net(x)`: column 32 of the cell as written (8 of its indentation)
        "indented.ipynb:cell 3:4:32: error: GG101 `net(x)` carries an autograd graph that is never back-propagated; "
        "storing it in `kept` keeps every saved activation alive across iterations\n"
        "indented.ipynb:cell 3:4:32: warning: GG103 `net(x)` runs with grad enabled after `.eval()` on line 2 of cell 3 and "
        "its output never reaches a `.backward()`: autograd records the graph and keeps its activations for nothing "
        "(`eval()` does not disable gradients)\n"
        "Found 2 findings (2 fixable with --fix). 1 file checked.\n"
    )
    assert (run.stderr, run.returncode) == ("", 1)


def test_fixes_in_indented_cells_keep_their_indentation(gradguard, write):
    path = write("indented.ipynb", INDENTED)
    run = gradguard("check", "--fix", "indented.ipynb")
    assert (run.stdout, run.stderr, run.returncode) == ("Fixed 2 findings. 1 file checked.\n", "", 0)
    cells = nbformat.reads(path.read_text(), as_version=4).cells
    assert [c.source for c in cells] == [
        "  import torch\n  from torch import nn, randn\n  net = nn.Linear(2, 1)\n  kept = []",  # `import torch` added
        "# Evaluation",
        "\n    net.eval()\n    with torch.no_grad():\n        for x in [randn(3, 2)]:\n"
        "            s = '训练😀'; kept.append(net(x).detach())",
    ]
    assert gradguard("check", "indented.ipynb").stdout == "All checks passed! 1 file checked.\n"


TRAINED = (
    "import torch\nnet = torch.nn.Linear(3, 2)\ncriterion = torch.nn.CrossEntropyLoss()\n"
    "opt = torch.optim.SGD(net.parameters(), lr=0.1)\nx, y = torch.randn(4, 3), torch.tensor([0, 1, 0, 1])\n"
    "for _ in range(2):\n    opt.zero_grad()\n    criterion(net(x), y).backward()\n    opt.step()"
)
SHOWN = "output = net(x)\nloss = criterion(output, y)\n\nloss"


def test_a_cells_displayed_value_is_a_look_at_the_trained_model(gradguard, write):
    # a cell's last expression is shown (IPython displays it): the only use of the loss of a trained
    # model's forward, which built its graph for nothing
    write("shown.ipynb", notebook(("code", TRAINED), ("markdown", "## Loss"), ("code", SHOWN)))
    run = gradguard("check", "--output-format", "concise", "shown.ipynb")
    assert run.stdout == (
        "shown.ipynb:cell 3:1:10: warning: GG103 `net(x)` runs with grad enabled and its outputs reach only the "
        "cell's displayed value (line 4 of cell 3), never a `.backward()`: autograd records the graph and keeps its "
        "activations for nothing\nFound 1 finding (1 fixable with --fix). 1 file checked.\n")
    scope: dict = {}
    exec(TRAINED + "\n" + SHOWN, scope)  # (what the cells run; the runtime truth: the shown loss has a graph)
    assert scope["loss"].requires_grad and scope["loss"].grad_fn is not None


def test_a_value_not_displayed_or_back_propagated_later_or_of_an_untrained_layer_is_no_look(gradguard, write):
    cells = [
        ("code", TRAINED),
        ("code", SHOWN + ";"),  # `;` hides the value
        ("code", SHOWN.replace("\n\nloss", "\nloss\nprint('shown above')")),  # not the cell's last statement
        ("code", SHOWN),
        ("code", "loss.backward()"),  # shown, then back-propagated
        ("code", "layer = torch.nn.Linear(3, 5)\nlayer(x)"),  # a look at a fresh layer, never trained
    ]
    write("looks.ipynb", notebook(*cells))
    run = gradguard("check", "--select", "GG103", "looks.ipynb")
    assert run.stdout == "All checks passed! 1 file checked.\n"
