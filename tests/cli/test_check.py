"""`gradguard check`: text and JSON output, rule selection, bad files, exit codes."""

from __future__ import annotations

import json
import os

import pytest

from gradguard import __version__
from gradguard.engine import parse
from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations as GG101

CLEAN = GG101.VALID[0].code
BAD = GG101.INVALID[1]  # a training loop: GG101 alone (INVALID[0] is an eval loop, GG103 too)


def test_clean_file(gradguard, write):
    write("clean.py", CLEAN)
    run = gradguard("check", "clean.py")
    assert (run.stdout, run.stderr, run.returncode) == ("All checks passed! 1 file checked.\n", "", 0)


def test_finding_line_and_summary(gradguard, write, finding_line):
    write("bad.py", BAD.code)
    run = gradguard("check", "bad.py")
    assert run.stdout == f"{finding_line('bad.py', BAD)}\nFound 1 finding (1 fixable with --fix). 1 file checked.\n"
    assert (run.stderr, run.returncode) == ("", 1)


@pytest.mark.parametrize("index", range(len(GG101.INVALID)))
def test_every_invalid_example_is_reported_where_it_says(gradguard, write, finding_line, index):
    invalid = GG101.INVALID[index]
    write("ex.py", invalid.code)
    strict = ["--strict"] if invalid.settings.get("strict") else []
    run = gradguard("check", "ex.py", "--jobs", "1", "--select", "GG101", *strict)  # eval loops draw GG103 too
    assert run.stdout.splitlines()[0] == finding_line("ex.py", invalid)
    assert run.returncode == 1


def test_several_findings_are_counted(gradguard, write, finding_line):
    write("a.py", GG101.INVALID[1].code)
    write("b.py", GG101.INVALID[3].code)
    run = gradguard("check", "--select", "GG101", "b.py", "a.py")  # output follows the sorted paths
    assert run.stdout == (
        f"{finding_line('a.py', GG101.INVALID[1])}\n"
        f"{finding_line('b.py', GG101.INVALID[3])}\n"
        "Found 2 findings (2 fixable with --fix). 2 files checked.\n"
    )


def test_json_output(gradguard, write, mine):
    write("a.py", mine.source)
    run = gradguard("check", "--output-format", "json", "a.py")
    assert run.returncode == 1
    assert run.stderr == ""
    span = {"line": 7, "column": 17, "end_line": 7, "end_column": 20}
    assert json.loads(run.stdout) == [
        {
            "code": "GG101",
            "name": "graph-kept-across-iterations",
            "severity": "error",
            "path": "a.py",
            **span,
            "message": mine.message,
            "related": [
                {"line": 6, "column": 11, "end_line": 6, "end_column": 17, "message": "the graph is created here"}
            ],
            "fixes": [
                {"title": "Store `out.detach()`", "safety": "safe", "edits": [{**span, "new_text": "out.detach()"}]},
                {
                    "title": "Store `out.detach().item()`",
                    "safety": "unsafe",
                    "edits": [{**span, "new_text": "out.detach().item()"}],
                },
            ],
        }
    ]


def test_json_keys_are_in_schema_order(gradguard, write, mine):
    write("a.py", mine.source)
    (finding,) = json.loads(gradguard("check", "--output-format", "json", "a.py").stdout)
    assert list(finding) == [
        "code",
        "name",
        "severity",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "message",
        "related",
        "fixes",
    ]


def test_json_clean_is_an_empty_array(gradguard, write):
    write("clean.py", CLEAN)
    run = gradguard("check", "--output-format", "json", "clean.py")
    assert (json.loads(run.stdout), run.stderr, run.returncode) == ([], "", 0)


def test_columns_count_code_points(gradguard, write):
    # Two-byte and four-byte UTF-8 characters before the finding on its line.
    source = BAD.code.replace("    losses.append(loss)", "    é = '😀'; losses.append(loss)")
    assert source != BAD.code
    write("u.py", source)
    (finding,) = json.loads(gradguard("check", "--output-format", "json", "u.py").stdout)
    prefix = "    é = '😀'; losses.append("
    assert (finding["column"], finding["end_column"]) == (len(prefix) + 1, len(prefix) + 5)


@pytest.mark.parametrize(
    ("args", "found"),
    [
        (["--select", "GG1"], True),
        (["--select", "gg101"], True),
        (["--select", "GG4,GG1"], True),
        (["--select", "GG4", "--select", "GG10"], True),
        (["--select", "GG4"], False),
        (["--ignore", "GG1"], False),
        (["--ignore", "GG101"], False),
        (["--select", "GG", "--ignore", "GG10"], False),
        (["--select", "GG101", "--ignore", "GG1"], True),  # the longer prefix wins
        (["--ignore", "GG4,GG1"], False),
    ],
)
def test_select_and_ignore(gradguard, write, finding_line, args, found):
    write("bad.py", BAD.code)
    run = gradguard("check", *args, "bad.py")
    if found:
        assert run.stdout.splitlines()[0] == finding_line("bad.py", BAD)
        assert run.returncode == 1
    else:
        assert (run.stdout, run.returncode) == ("All checks passed! 1 file checked.\n", 0)


def test_unknown_selector_is_a_usage_error(gradguard, write):
    write("bad.py", BAD.code)
    run = gradguard("check", "--select", "GG1,XY9", "bad.py")
    assert run.returncode == 2
    assert run.stdout == ""
    assert "no rule code starts with XY9" in run.stderr


@pytest.mark.parametrize(
    "args", [["--output-format", "xml"], ["--jobs", "0"], ["--copy-order", "sideways"], ["--nope"]]
)
def test_bad_options_are_usage_errors(gradguard, write, args):
    write("clean.py", CLEAN)
    run = gradguard("check", *args, "clean.py")
    assert (run.stdout, run.returncode) == ("", 2)
    assert "Usage:" in run.stderr


def test_copy_order_reaches_the_engine(gradguard, write):
    # GG402's fix makes a copy, in the order --copy-order asks for.
    write("c.py", "import torch\n\nx = torch.randn(3, requires_grad=True)\ny = torch.tensor(x)\n")
    default = json.loads(gradguard("check", "--output-format", "json", "c.py").stdout)
    swapped = json.loads(gradguard("check", "--output-format", "json", "--copy-order", "detach-clone", "c.py").stdout)
    assert default[0]["fixes"][0]["edits"][0]["new_text"] == "x.clone().detach()"
    assert swapped[0]["fixes"][0]["edits"][0]["new_text"] == "x.detach().clone()"


def test_syntax_error_next_to_a_good_file(gradguard, write, mine):
    broken = "import torch\nx = (\n"
    write("a.py", mine.source)
    write("syn.py", broken)
    err = parse(broken)
    run = gradguard("check", ".")
    assert run.stderr == f"syn.py:{err.line}:{err.column + 1}: error: SyntaxError: {err.message}\n"
    assert run.stdout == f"{mine.line('a.py')}\nFound 1 finding (1 fixable with --fix); 1 file had errors. 2 files checked.\n"
    assert run.returncode == 2


def test_syntax_error_alone_is_not_all_clear(gradguard, write):
    write("syn.py", "import torch\nx = (\n")
    run = gradguard("check", "syn.py")
    assert (run.stdout, run.returncode) == ("No findings, but 1 file had errors. 1 file checked.\n", 2)


def test_invalid_utf8_is_reported_and_others_still_checked(gradguard, write, mine):
    write("a.py", mine.source)
    write("bad.py", b'import torch\nx = "\xff"\n')
    run = gradguard("check", ".")
    assert run.stderr == "bad.py: error: not valid UTF-8: invalid start byte (byte 0xff at line 2, column 6)\n"
    assert run.stdout.startswith(f"{mine.line('a.py')}\n")
    assert run.returncode == 2


def test_bom_is_not_part_of_the_first_line(gradguard, write, finding_line):
    write("bom.py", b"\xef\xbb\xbf" + BAD.code.encode())
    run = gradguard("check", "bom.py")
    assert run.stdout.splitlines()[0] == finding_line("bom.py", BAD)


def test_crlf_positions_match_lf(gradguard, write, finding_line):
    write("crlf.py", BAD.code.replace("\n", "\r\n"))
    run = gradguard("check", "crlf.py")
    assert run.stdout.splitlines()[0] == finding_line("crlf.py", BAD)


def test_missing_path(gradguard, write):
    write("clean.py", CLEAN)
    run = gradguard("check", "missing.py", "clean.py")
    assert run.stderr == "missing.py: error: No such file or directory\n"
    assert (run.stdout, run.returncode) == ("All checks passed! 1 file checked.\n", 2)


def test_unreadable_file(gradguard, write, tmp_path):
    write("clean.py", CLEAN)
    os.symlink("nowhere.py", tmp_path / "gone.py")  # listed by the walk, cannot be opened
    run = gradguard("check", ".")
    assert run.stderr == "gone.py: error: No such file or directory\n"
    assert (run.stdout, run.returncode) == ("No findings, but 1 file had errors. 2 files checked.\n", 2)


def test_no_files_found(gradguard, tmp_path):
    (tmp_path / "empty").mkdir()
    run = gradguard("check", "empty")
    assert (run.stdout, run.returncode) == ("", 0)
    assert run.stderr == "warning: No Python files found under the given paths.\n"
    assert gradguard("check", "--output-format", "json", "empty").stdout == "[]\n"


def test_default_path_is_the_current_directory(gradguard, write, mine):
    write("a.py", mine.source)
    assert gradguard("check").stdout.splitlines()[0] == mine.line("a.py")


def test_files_without_torch_are_clean(gradguard, write):
    write("plain.py", "losses = []\nfor x in range(3):\n    losses.append(x)\n")
    assert gradguard("check", "plain.py").stdout == "All checks passed! 1 file checked.\n"


def test_noqa_suppresses(gradguard, write, mine):
    write("a.py", mine.source.replace("kept.append(out)", "kept.append(out)  # noqa: GG101"))
    assert gradguard("check", "a.py").returncode == 0


def test_jobs_give_the_same_output_as_a_serial_run(gradguard, write):
    defaults = [invalid for invalid in GG101.INVALID if not invalid.settings]  # a strict one needs --strict
    for i, invalid in enumerate(defaults):
        write(f"pkg/m{i}.py", invalid.code)
    for i, valid in enumerate(GG101.VALID[:3]):
        write(f"pkg/ok{i}.py", valid.code)
    write("pkg/sub/syn.py", "import torch\ndef f(:\n")
    write("pkg/sub/latin.py", b"import torch\n# caf\xe9\n")
    for fmt in ("text", "json"):
        serial = gradguard("check", "--jobs", "1", "--output-format", fmt, "pkg")
        assert serial.returncode == 2
        for jobs in ("2", "3"):
            parallel = gradguard("check", "--jobs", jobs, "--output-format", fmt, "pkg")
            assert (parallel.stdout, parallel.stderr, parallel.returncode) == (
                serial.stdout,
                serial.stderr,
                serial.returncode,
            )
    assert serial.stdout.count('"code": "GG101"') == len(defaults)


def test_version(gradguard):
    run = gradguard("--version")
    assert (run.stdout, run.returncode) == (f"gradguard {__version__}\n", 0)


def test_code_frame_on_a_terminal(gradguard_tty, write, mine):
    write("a.py", mine.source)
    run = gradguard_tty("check", "a.py", env={"NO_COLOR": "1"})
    assert run.returncode == 1
    assert run.stdout == (
        f"{mine.line('a.py')}\n"
        "  |\n"
        "5 | for x in [torch.randn(3, 2)]:\n"
        "6 |     out = net(x).sum()\n"
        "7 |     kept.append(out)\n"
        "  |                 ^^^\n"
        "  |\n"
        "  = note: the graph is created here (line 6)\n"
        "  = help: Store `out.detach()`\n"
        "\n"
        "Found 1 finding (1 fixable with --fix). 1 file checked.\n"
    )


def test_colour_only_on_a_terminal_without_no_color(gradguard, gradguard_tty, write, mine):
    write("a.py", mine.source)
    assert "\x1b[" in gradguard_tty("check", "a.py").stdout
    assert "\x1b[" not in gradguard_tty("check", "a.py", env={"NO_COLOR": "1"}).stdout
    assert "\x1b[" not in gradguard("check", "a.py").stdout


def test_json_on_a_terminal_is_still_plain_json(gradguard_tty, write, mine):
    write("a.py", mine.source)
    run = gradguard_tty("check", "--output-format", "json", "a.py")
    assert json.loads(run.stdout)[0]["message"] == mine.message
