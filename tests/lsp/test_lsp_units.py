"""The server's pure parts, without a client: position tables, magics, options,
the translation of findings, edits."""

from __future__ import annotations

import pytest
from lsprotocol import types

from gradguard.engine.fixes import apply_edits
from gradguard.findings import Edit, Finding, Fix, Position, Range, Related, Safety, Severity
from gradguard.lsp import actions, diagnostics, notebook, options
from gradguard.lsp.documents import notebook_snapshot, text_snapshot
from gradguard.lsp.positions import UTF8, UTF16, UTF32, LineTable, LineTables
from gradguard.settings import Settings

LINE = 'x = "训练😀"; y = x.detach()'  # `detach` starts at code point 17


@pytest.mark.parametrize(("encoding", "column"), [(UTF16, 18), (UTF8, 24), (UTF32, 17)])
def test_columns_convert_both_ways(encoding, column):
    table = LineTable("import torch\n" + LINE + "\n")
    assert table.to_lsp(Position(2, 17), encoding) == types.Position(1, column)
    assert table.from_lsp(types.Position(1, column), encoding) == Position(2, 17)


def test_a_position_inside_a_surrogate_pair_snaps_past_the_emoji():
    table = LineTable(LINE)
    emoji = LINE.index("😀")
    assert table.from_lsp(types.Position(0, emoji + 1), UTF16) == Position(1, emoji + 1)


def test_crlf_and_positions_past_the_end():
    table = LineTable("a = 1\r\nb = 2\r\n")
    assert table.lines == ["a = 1", "b = 2", ""]
    assert table.to_lsp(Position(9, 0), UTF16) == types.Position(2, 0)
    assert table.from_lsp(types.Position(7, 3), UTF16) == Position(3, 0)


def test_line_tables_are_rebuilt_only_for_a_new_version():
    tables = LineTables()
    first = tables.get("u", 1, "a\nb")
    assert tables.get("u", 1, "a\nb") is first
    assert tables.get("u", 2, "a\nb\nc") is not first


def test_magics_are_blanked_and_lines_kept():
    cell = "%matplotlib inline\nimport torch\n!pip install x \\\n    y\nfor i in r:\n    %time f()\nfiles = !ls\nmodel?\n"
    assert notebook.blank_magics(cell) == "\nimport torch\n\n\nfor i in r:\n    pass\n\n\n"


def test_percent_inside_brackets_and_strings_is_python():
    cell = 'msg = ("a %f"\n       % 3)\ns = """\n%not magic\n"""\n'
    assert notebook.blank_magics(cell) == cell


def test_cell_magics():
    assert notebook.blank_magics("%%bash\necho torch\n") == "\n\n"
    assert notebook.blank_magics("%%time\nx = 1") == "\nx = 1"


def test_joined_cells_start_on_fresh_lines():
    program = notebook.join([notebook.Cell("a", 1, "x = 1"), notebook.Cell("b", 1, "%cd /\ny = 2\n")])
    assert program.source == "x = 1\n\ny = 2\n"
    assert program.starts == (1, 2)


def test_options_parse_and_map_to_settings():
    opts, problems = options.parse(
        {"select": ["gg1"], "ignore": ["GG101"], "severity": {"gg101": "info"}, "strict": True,
         "copyOrder": "detach-clone", "debounceMs": 50, "enable": True}
    )
    assert problems == []
    assert opts.debounce_ms == 50
    assert opts.settings(Settings()) == Settings(
        select=("GG1",), ignore=("GG101",), severity={"GG101": Severity.INFO}, strict=True, copy_order="detach-clone"
    )


def test_editor_options_override_only_what_they_set():
    project = Settings(strict=True, copy_order="detach-clone")
    opts, _ = options.parse({"copyOrder": "clone-detach"})
    assert opts.settings(project) == Settings(strict=True, copy_order="clone-detach")


def test_configuration_wins_key_by_key():
    assert options.merged({"gradguard": {"strict": True, "debounceMs": 5}}, {"debounceMs": 9}) == {
        "strict": True,
        "debounceMs": 9,
    }
    assert options.merged({"strict": True}, None) == {"strict": True}


@pytest.mark.parametrize(
    ("old", "new"),
    [("a\nb\nc", "a\nB\nc"), ("a\nb", "a\nb\nc"), ("a\nb\n", "a\nb\nc\n"), ("x", "y"), ("a\nb\nc\n", "a\nc\n"),
     ("a", "a\n"), ("", "x"), ("a\nb\nc\nd\n", "a\nb\nX\nY\nd\n")],
)
def test_text_change_turns_old_into_new(old, new):
    rng, text = actions.text_change(old, new)
    assert apply_edits(old, [Edit(rng, text)]) == new


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("    losses.append(loss)", "    losses.append(loss)  # noqa: GG101"),
        ("    losses.append(loss)   ", "    losses.append(loss)  # noqa: GG101"),
        ("    losses.append(loss)  # for the plot", "    losses.append(loss)  # for the plot  # noqa: GG101"),
        ("    losses.append(loss)  # noqa: E501", "    losses.append(loss)  # noqa: E501, GG101"),
        ('    log("# noqa: X1", loss)', '    log("# noqa: X1", loss)  # noqa: GG101'),
        ("    f(a,  # noqa: E1", "    f(a,  # noqa: E1, GG101"),
        ("    x = loss + \\", None),
    ],
)
def test_ignore_edit(line, expected):
    edit = actions.ignore_edit(line, "GG101")
    if expected is None:
        assert edit is None
    else:
        start, end, text = edit
        assert line[:start] + text + line[end:] == expected


def _finding(**changes) -> Finding:
    r = Range(Position(2, 4), Position(2, 8))
    base = dict(code="GG101", name="n", severity=Severity.WARNING, message="m", range=r)
    return Finding(**{**base, **changes})


def test_unnecessary_tag_and_doc_link(monkeypatch):
    monkeypatch.setattr(diagnostics, "_href", lambda code: f"https://example.invalid/{code}")
    snapshot = text_snapshot("file:///t.py", 3, "import torch\ny = x.clone()\n", UTF16, LineTables())
    (d,) = diagnostics.diagnostics(snapshot, [_finding(tags=("unnecessary",), severity=Severity.INFO)])["file:///t.py"]
    assert d.tags == [types.DiagnosticTag.Unnecessary]
    assert d.code_description == types.CodeDescription(href="https://example.invalid/GG101")
    assert d.severity == types.DiagnosticSeverity.Information
    assert d.data["ignore"]["version"] == 3


def test_a_fix_straddling_two_cells_is_dropped_but_the_finding_kept():
    class Workspace:
        docs = {"c1": "import torch\nx = (1,\n", "c2": "  2)\n"}

        def get_text_document(self, uri):
            return type("Doc", (), {"language_id": "python", "version": 1, "source": self.docs[uri]})()

    nb = types.NotebookDocument(
        uri="nb", notebook_type="jupyter-notebook", version=1,
        cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for u in ("c1", "c2")],
    )
    snapshot = notebook_snapshot(nb, Workspace(), UTF16, LineTables())
    across = Range(Position(2, 4), Position(3, 4))
    fix = Fix("f", Safety.SAFE, (Edit(across, "(1, 2)"),))
    related = Related(Range(Position(3, 2), Position(3, 3)), "here")
    (d,) = diagnostics.diagnostics(snapshot, [_finding(range=across, fixes=(fix,), related=(related,))])["c1"]
    assert d.range == types.Range(types.Position(1, 4), types.Position(1, 7))  # cut at the cell's end
    assert d.data["fixes"] == []
    assert d.related_information[0].location.uri == "c2"
