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
    assert run.stdout == f"train.ipynb:cell 3:3:17: GG101 {MESSAGE}\nFound 1 finding (1 fixable with --fix).\n"
    assert (run.stderr, run.returncode) == ("", 1)


def test_directories_include_notebooks(gradguard, write):
    write("nb/train.ipynb", TRAIN)
    assert gradguard("check", "--output-format", "concise").stdout.startswith("nb/train.ipynb:cell 3:3:17: GG101 ")


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
        f"train.ipynb:cell 3:3:17: GG101 {MESSAGE}\n"
        "  |\n"
        "1 | for x in [torch.randn(3, 2)]:\n"
        "2 |     out = net(x).sum()\n"
        "3 |     kept.append(out)\n"
        "  |                 ^^^\n"
        "  |\n"
        "  = note: the graph is created here (line 2 of cell 3)\n"
        "  = help: Store `out.detach()`\n"
        "\n"
        "Found 1 finding (1 fixable with --fix).\n"
    )


def test_fix_rewrites_only_the_changed_cell(gradguard, write, tmp_path):
    path = write("train.ipynb", TRAIN)
    run = gradguard("check", "--fix", "train.ipynb")
    assert (run.stdout, run.returncode) == ("Fixed 1 finding.\n", 0)
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


def test_syntax_error_names_the_cell(gradguard, write):
    write("bad.ipynb", notebook(("code", "import torch"), ("code", "x = (\n")))
    run = gradguard("check", "bad.ipynb")
    assert run.returncode == 2
    assert run.stderr.startswith("bad.ipynb: error: SyntaxError in cell 2, line 1: ")


def test_not_a_notebook(gradguard, write):
    write("broken.ipynb", "{not json")
    run = gradguard("check", "broken.ipynb")
    assert run.returncode == 2
    assert run.stderr.startswith("broken.ipynb: error: not a readable notebook: ")


def test_a_notebook_of_another_language_has_no_python(gradguard, write):
    write("r.ipynb", notebook(("code", LOOP), language="R"))
    run = gradguard("check", "r.ipynb")
    assert (run.stdout, run.returncode) == ("All checks passed!\n", 0)


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
    "real.ipynb:cell 7:3:9: GG103 `net(x)` runs with grad enabled after `.eval()` on line 1 of cell 7 and its output "
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
    assert (run.stdout, run.returncode) == (GG103_LEFT + "Fixed 3 findings.\nFound 1 finding (1 fixable with --fix).\n", 1)
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
