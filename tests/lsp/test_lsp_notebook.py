"""Notebooks: the code cells are one program, in order; findings, fixes and
hovers land in the right cell at the right position; magics are blanked."""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest
from lsprotocol import types

from lsp_harness import Client, apply, diag, edits_of, initialize, source
from test_lsp_code_actions import actions_for
from test_lsp_hover import hover

pytestmark = pytest.mark.asyncio

CELLS = [
    (
        types.NotebookCellKind.Code,
        source(
            """
            %matplotlib inline
            import torch
            from torch import nn

            model = nn.Linear(4, 2)
            criterion = nn.CrossEntropyLoss()
            """
        ),
    ),
    (types.NotebookCellKind.Markup, "# Training\nThe loop keeps `torch` tensors.\n"),
    (
        types.NotebookCellKind.Code,
        source(
            """
            !pip install tqdm
            loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
            history = []
            """
        ),
    ),
    (
        types.NotebookCellKind.Code,
        source(
            """
            for x, y in loader:
                %time out = model(x)
                out = model(x)
                loss = criterion(out, y)
                s = "训练😀"; history.append(loss)
            snapshot = out.detach()"""
        ),
    ),
]


def cli_messages(cells, path) -> list[str]:
    """What `gradguard check` says of a notebook file holding these cells."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(text) if kind == types.NotebookCellKind.Code else nbformat.v4.new_markdown_cell(text)
        for kind, text in cells
    ]
    nbformat.write(nb, path)
    proc = subprocess.run([sys.executable, "-m", "gradguard", "check", "--output-format", "json", str(path)],
                          capture_output=True, text=True, check=False)
    return [f["message"] for f in json.loads(proc.stdout)]


class Notebook:
    def __init__(self, client: Client, tmp_path, cells=CELLS):
        self.client = client
        self.path = path = tmp_path / "train.ipynb"
        self.uri = path.as_uri()
        self.kinds = cells
        self.cells = [f"vscode-notebook-cell:{path}#W{i}" for i in range(len(cells))]
        self.texts = {uri: text for uri, (_, text) in zip(self.cells, cells)}
        self.version = 1

    def open(self) -> None:
        self.client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=self.uri,
                    notebook_type="jupyter-notebook",
                    version=self.version,
                    cells=[types.NotebookCell(kind=kind, document=uri) for uri, (kind, _) in zip(self.cells, self.kinds)],
                ),
                cell_text_documents=[
                    types.TextDocumentItem(
                        uri=uri,
                        language_id="python" if kind == types.NotebookCellKind.Code else "markdown",
                        version=1,
                        text=text,
                    )
                    for uri, (kind, text) in zip(self.cells, self.kinds)
                ],
            )
        )

    def edit_cell(self, index: int, text: str, cell_version: int) -> None:
        self.version += 1
        self.texts[self.cells[index]] = text
        self.client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(version=self.version, uri=self.uri),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        text_content=[
                            types.NotebookDocumentCellContentChanges(
                                document=types.VersionedTextDocumentIdentifier(
                                    version=cell_version, uri=self.cells[index]
                                ),
                                changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                            )
                        ]
                    )
                ),
            )
        )

    def delete_cell(self, index: int) -> None:
        self.version += 1
        self.client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(version=self.version, uri=self.uri),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        structure=types.NotebookDocumentCellChangeStructure(
                            array=types.NotebookCellArrayChange(start=index, delete_count=1),
                            did_close=[types.TextDocumentIdentifier(uri=self.cells[index])],
                        )
                    )
                ),
            )
        )

    async def published(self, cell: int, version: int | None = 1, count: int = 1) -> list[types.Diagnostic]:
        uri = self.cells[cell]
        found = await self.client.wait_until(
            lambda: len(ps := [p for p in self.client.publishes(uri) if p.version == version]) >= count and ps[-1],
            f"diagnostics of cell {cell} v{version}",
        )
        return found.diagnostics


@pytest.fixture
def notebook(client: Client, tmp_path) -> Notebook:
    return Notebook(client, tmp_path)


async def test_cells_are_one_program_and_findings_land_in_their_cell(client: Client, notebook: Notebook):
    result = await initialize(client, notebooks=True)
    # Every cell is synchronised (no cell-language filter): VS Code then sends the Markdown
    # cells too, and "cell 4" is the notebook's fourth cell as VS Code numbers it.
    (selector,) = result.capabilities.notebook_document_sync.notebook_selector
    assert (selector.notebook, selector.cells) == ("jupyter-notebook", None)
    notebook.open()
    (finding,) = await notebook.published(3)
    assert finding.range == diag((4, 31, 4, 35))  # `    s = "训练😀"; history.append(`: 30 code points, 31 UTF-16 units
    assert finding.code == "GG101"
    # lines in messages are the cell's own, not the joined program's; cells are counted as
    # the notebook shows them, Markdown too, in the words of `gradguard check`
    assert finding.message.startswith("`loss` carries an autograd graph (from `criterion(out, y)` on line 4 of cell 4)")
    assert finding.message == cli_messages(CELLS, notebook.path)[0]
    assert [(r.location.uri, r.location.range, r.message) for r in finding.related_information] == [
        (notebook.cells[3], diag((3, 11, 3, 28)), "the graph is created here")
    ]
    assert await notebook.published(0) == []
    assert await notebook.published(2) == []
    assert client.publishes(notebook.cells[1]) == []  # the Markdown cell is not Python


async def test_fixes_and_ignore_edit_the_cell(client: Client, notebook: Notebook):
    await initialize(client, notebooks=True)
    notebook.open()
    (finding,) = await notebook.published(3)
    cell = notebook.cells[3]
    store, _, ignore, fix_all = await actions_for(client, cell, [finding])
    text = notebook.texts[cell]
    assert store.edit.document_changes[0].text_document.uri == cell
    assert apply(text, edits_of(store.edit, cell)) == text.replace("history.append(loss)", "history.append(loss.detach())")
    assert apply(text, edits_of(ignore.edit, cell)) == text.replace(
        "history.append(loss)\n", "history.append(loss)  # noqa: GG101\n"
    )
    assert fix_all.kind == "source.fixAll.gradguard"
    assert apply(text, edits_of(fix_all.edit, cell)) == apply(text, edits_of(store.edit, cell))


async def test_editing_a_cell_reanalyses_the_notebook(client: Client, notebook: Notebook):
    await initialize(client, notebooks=True)
    notebook.open()
    await notebook.published(3)
    fixed = notebook.texts[notebook.cells[3]].replace("history.append(loss)", "history.append(loss.item())")
    notebook.edit_cell(3, fixed, cell_version=2)
    assert await notebook.published(3, version=2) == []
    assert await notebook.published(0, version=1, count=2) == []  # every cell is re-published


async def test_hover_in_a_cell_knows_the_other_cells(client: Client, notebook: Notebook):
    await initialize(client, notebooks=True)
    notebook.open()
    await notebook.published(3)
    result = await hover(client, notebook.cells[3], types.Position(line=5, character=17))  # `out.detach`
    assert result.range == diag((5, 15, 5, 21))
    assert result.contents.value.startswith("**`Tensor.detach()`**")
    assert "**Here:** `out` carries an autograd graph: from `model(x)` on line " in result.contents.value


async def test_deleting_a_cell_clears_it(client: Client, notebook: Notebook):
    await initialize(client, notebooks=True)
    notebook.open()
    await notebook.published(3)
    notebook.delete_cell(3)
    assert await notebook.published(3, version=None) == []


async def test_closing_the_notebook_clears_every_cell(client: Client, notebook: Notebook):
    await initialize(client, notebooks=True)
    notebook.open()
    await notebook.published(3)
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=notebook.uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in notebook.cells],
        )
    )
    for cell in (0, 2, 3):
        assert await notebook.published(cell, version=None) == []


# A loop ending a cell without a trailing newline, then a GG103 fix that would have to
# rewrite the `%time` line of the next cell (as `gradguard check --fix` refuses it).
MAGIC_CELLS = [
    (types.NotebookCellKind.Code, "import torch\n%matplotlib inline"),
    (types.NotebookCellKind.Markup, "## Train"),
    (types.NotebookCellKind.Code, "net = torch.nn.Linear(2, 1)\nnet(torch.randn(3, 2)).sum().backward()\nkept = []\nfor x in [torch.randn(3, 2)]:\n    kept.append(net(x).sum())"),
    (types.NotebookCellKind.Code, "net.eval()\nfor x in [torch.randn(3, 2)]:\n    y = net(x)\n    %time z = y.argmax()"),
]


async def test_no_quick_fix_rewrites_a_magic_and_the_neighbouring_cell_keeps_its_own(client: Client, tmp_path):
    await initialize(client, notebooks=True, options={"select": ["GG101", "GG103"], "debounceMs": 0})
    notebook = Notebook(client, tmp_path, MAGIC_CELLS)
    notebook.open()
    (kept,) = await notebook.published(2)
    (evaluation,) = await notebook.published(3)
    assert (kept.code, evaluation.code) == ("GG101", "GG103")
    assert evaluation.data["fixes"] == []  # wrapping the loop would write `pass` over `%time z = y.argmax()`
    cell = notebook.cells[3]
    ignore, fix_all = await actions_for(client, cell, [evaluation])
    assert (ignore.title, fix_all.title) == ("Ignore GG103 on this line", "GradGuard: fix all safe problems")
    assert edits_of(fix_all.edit, cell) == []  # fix-all leaves the magic's cell alone ...
    before = notebook.cells[2]
    text = notebook.texts[before]
    fixed = text.replace("kept.append(net(x).sum())", "kept.append(net(x).sum().detach())")
    assert fixed != text and apply(text, edits_of(fix_all.edit, before)) == fixed  # ... and fixes the cell before it
    store, *_ = await actions_for(client, before, [kept])
    assert apply(text, edits_of(store.edit, before)) == fixed


async def test_fix_all_applies_overlapping_fixes_in_rounds_in_the_cell(client: Client, tmp_path):
    # GG103 wraps cell 3's loop in no_grad; `loss.data[0]` inside it is fixed in the next round
    cells = [
        (types.NotebookCellKind.Code, "import torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\n"
                                      "criterion = nn.CrossEntropyLoss()\ntotal = 0.0\n"),
        (types.NotebookCellKind.Markup, "# Evaluation\n"),
        (types.NotebookCellKind.Code, "model.eval()\nfor x, y in [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]:\n"
                                      "    loss = criterion(model(x), y)\n    total += loss.data[0]\n"),
    ]
    notebook = Notebook(client, tmp_path, cells)
    await initialize(client, notebooks=True, options={"select": ["GG103", "GG202"], "debounceMs": 0})
    notebook.open()
    first, second = await notebook.published(2)
    cell = notebook.cells[2]
    (fix_all,) = await actions_for(client, cell, [], only=["source.fixAll"], at=first.range)
    assert apply(notebook.texts[cell], edits_of(fix_all.edit, cell)) == (
        "model.eval()\nwith torch.no_grad():\n    for x, y in [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]:\n"
        "        loss = criterion(model(x), y)\n        total += loss.item()\n"
    )
    assert [m.message for m in client.log_messages if "fix-all" in m.message] == []


async def test_fix_all_logs_a_cell_fix_not_applied(client: Client, tmp_path):
    cells = [
        (types.NotebookCellKind.Code, "import torch\nnet = torch.nn.Linear(2, 1)\nkept = []\n"),
        (types.NotebookCellKind.Code, "net.eval()\nfor x in [torch.randn(3, 2)]:\n    out = net(x)\n    kept.append(out)\n"),
    ]
    notebook = Notebook(client, tmp_path, cells)
    await initialize(client, notebooks=True, options={"select": ["GG101", "GG103"], "debounceMs": 0})
    notebook.open()
    first, _ = await notebook.published(1)
    cell = notebook.cells[1]
    (fix_all,) = await actions_for(client, cell, [], only=["source.fixAll"], at=first.range)
    assert apply(notebook.texts[cell], edits_of(fix_all.edit, cell)) == (
        "net.eval()\nwith torch.no_grad():\n    for x in [torch.randn(3, 2)]:\n        out = net(x)\n        kept.append(out)\n"
    )
    assert [(m.type, m.message) for m in client.log_messages if "fix-all" in m.message] == [(
        types.MessageType.Warning,
        "GradGuard fix-all, train.ipynb: cell 2, line 5: GG101 fix not applied: it overlaps the fix of the GG103 "
        "finding on line 4 of cell 2, applied first, and the code after that fix no longer shows this finding",
    )]


INDENTED = [
    (types.NotebookCellKind.Code, "  import torch\n  net = torch.nn.Linear(2, 1)\n  kept = []\n"),
    (types.NotebookCellKind.Code,
     "\n    for x in [torch.randn(3, 2)]:\n        s = '训练😀'; kept.append(net(x).sum())\n    first = kept[0].clone()\n"),
]


async def test_an_indented_cell_is_analysed_as_ipython_runs_it(client: Client, tmp_path):
    # IPython removes the indentation of a cell's first line from every line: so does the
    # analysis, and each position is carried back into the cell as written (UTF-16)
    notebook = Notebook(client, tmp_path, INDENTED)
    await initialize(client, notebooks=True)
    notebook.open()
    (finding,) = await notebook.published(1)
    cell = notebook.cells[1]
    text = notebook.texts[cell]
    # `net(x).sum()` after 8 spaces and `s = '训练😀'; kept.append(`: 31 code points, 32 UTF-16 units
    assert finding.range == diag((2, 32, 2, 44))
    assert finding.message == cli_messages(INDENTED, notebook.path)[0]
    assert [(r.location.uri, r.location.range) for r in finding.related_information] == [(cell, diag((2, 32, 2, 38)))]
    store, _, ignore, _ = await actions_for(client, cell, [finding])
    assert apply(text, edits_of(store.edit, cell)) == text.replace("kept.append(net(x).sum())", "kept.append(net(x).sum().detach())")
    assert apply(text, edits_of(ignore.edit, cell)) == text.replace(".sum())\n", ".sum())  # noqa: GG101\n")
    found = await hover(client, cell, types.Position(3, 22))  # on `clone` of `first = kept[0].clone()`
    assert found is not None and found.range == diag((3, 20, 3, 25))


async def test_a_cell_that_does_not_parse_from_the_start_is_skipped_and_the_others_analysed(client: Client, tmp_path):
    notebook = Notebook(client, tmp_path, [INDENTED[0], (types.NotebookCellKind.Code, "print(kept"), INDENTED[1]])
    await initialize(client, notebooks=True)
    notebook.open()
    (finding,) = await notebook.published(2)
    assert finding.range == diag((2, 32, 2, 44))
    assert client.publishes(notebook.cells[1]) == []  # left out, as Jupyter runs the other cells
    logged = await client.wait_until(lambda: [m.message for m in client.log_messages if "skipped" in m.message])
    assert logged == ["train.ipynb v1: cell 2 skipped: SyntaxError: '(' was never closed (line 1)"]


async def test_while_a_cell_is_typed_in_the_last_diagnostics_stay(client: Client, tmp_path):
    notebook = Notebook(client, tmp_path, INDENTED)
    await initialize(client, notebooks=True)
    notebook.open()
    await notebook.published(1)
    notebook.edit_cell(0, "  import torch\n  net = torch.nn.Linear(2, 1\n  kept = []\n", cell_version=2)  # mid-typing
    await client.wait_until(lambda: any("does not parse" in m.message for m in client.log_messages))
    # without cell 1, `net` is unknown and cell 2's finding would vanish: nothing is published
    assert [len(client.publishes(uri)) for uri in notebook.cells] == [1, 1]
    notebook.edit_cell(0, INDENTED[0][1], cell_version=3)
    await notebook.published(1, version=1, count=2)  # parses again: analysed and published
