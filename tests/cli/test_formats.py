"""Output formats through the real CLI: concise, SARIF 2.1.0 (validated against the
official schema), GitHub workflow commands, --statistics; colours only on a
terminal and never with NO_COLOR; the progress bar only on a terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from gradguard import __version__
from gradguard.docs import rule_markdown, url_for
from gradguard.rules import all_rules
from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations as GG101

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def leaky(write, mine) -> None:
    write("a.py", mine.source)
    write("b.py", (EXAMPLES / "train_leaky.py").read_text())


def test_concise_is_one_line_per_finding_even_on_a_terminal(gradguard_tty, write, mine):
    write("a.py", mine.source)
    run = gradguard_tty("check", "--output-format", "concise", "a.py", env={"NO_COLOR": "1"})
    assert run.stdout == f"{mine.line('a.py')}\nFound 1 finding (1 fixable with --fix). 1 file checked.\n"
    assert run.returncode == 1


def test_concise_names_each_findings_severity(gradguard, write):
    """error, warning and info, in the words (and the shape) of a compiler's diagnostics."""
    write("gradguard.toml", 'extend-select = ["GG501"]\n')
    write("a.py", (EXAMPLES / "rnn_leaky.py").read_text())
    run = gradguard("check", "--output-format", "concise", "a.py")
    levels = {line.split(": ")[1] for line in run.stdout.splitlines()[:-1]}
    assert levels == {"error", "warning", "info"}
    assert "a.py:62:20: info: GG501 `draw = probs.clone()` copies `probs`" in run.stdout
    assert "a.py:48:13: error: GG203 `p` is a leaf tensor" in run.stdout
    assert "a.py:43:53: warning: GG102 `hidden` carries" in run.stdout
    assert gradguard("check", "a.py").stdout == run.stdout  # the plain text format, off a terminal


def test_text_on_a_terminal_has_code_frames_and_colours(gradguard_tty, write, mine):
    write("a.py", mine.source)
    run = gradguard_tty("check", "a.py")
    assert "\x1b[31m\x1b[1m^^^\x1b[0m" in run.stdout  # red carets
    plain = gradguard_tty("check", "a.py", env={"NO_COLOR": "1"})
    assert plain.stdout == (
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


def test_no_colour_in_a_pipe(gradguard, write, mine):
    write("a.py", mine.source)
    assert "\x1b[" not in gradguard("check", "a.py").stdout


def test_sarif_result_and_rule_metadata(gradguard, write, mine, tmp_path):
    write("a.py", mine.source)
    run = gradguard("check", "--output-format", "sarif", "a.py")
    assert (run.stderr, run.returncode) == ("", 1)
    log = json.loads(run.stdout)
    jsonschema.validate(log, SCHEMA)
    (sarif_run,) = log["runs"]
    assert log["version"] == "2.1.0"
    assert sarif_run["columnKind"] == "unicodeCodePoints"
    assert sarif_run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.as_uri() + "/"}}
    driver = sarif_run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("gradguard", __version__)
    assert [r["id"] for r in driver["rules"]] == [r.code for r in all_rules()]
    assert driver["rules"][0] == {
        "id": "GG101",
        "name": "graph-kept-across-iterations",
        "shortDescription": {"text": GG101.summary},
        "help": {"text": rule_markdown(GG101), "markdown": rule_markdown(GG101)},
        "defaultConfiguration": {"level": "error"},
        "helpUri": url_for("GG101"),
    }
    where = {"artifactLocation": {"uri": "a.py", "uriBaseId": "%SRCROOT%"}}
    span = {"startLine": 7, "startColumn": 17, "endLine": 7, "endColumn": 20}
    assert sarif_run["results"] == [
        {
            "ruleId": "GG101",
            "ruleIndex": 0,
            "level": "error",
            "message": {"text": mine.message},
            "locations": [{"physicalLocation": {**where, "region": span}}],
            "relatedLocations": [
                {
                    "id": 0,
                    "physicalLocation": {
                        **where,
                        "region": {"startLine": 6, "startColumn": 11, "endLine": 6, "endColumn": 17},
                    },
                    "message": {"text": "the graph is created here"},
                }
            ],
            "fixes": [
                {
                    "description": {"text": "Store `out.detach()` (safe)"},
                    "artifactChanges": [
                        {
                            **where,
                            "replacements": [{"deletedRegion": span, "insertedContent": {"text": "out.detach()"}}],
                        }
                    ],
                },
                {
                    "description": {"text": "Store `out.detach().item()` (unsafe)"},
                    "artifactChanges": [
                        {
                            **where,
                            "replacements": [{"deletedRegion": span, "insertedContent": {"text": "out.detach().item()"}}],
                        }
                    ],
                },
            ],
        }
    ]


def test_sarif_of_a_whole_tree_is_valid(gradguard, write, mine):
    leaky(write, mine)
    write("sub/rnn.py", (EXAMPLES / "rnn_leaky.py").read_text())
    run = gradguard("check", "--output-format", "sarif", "--extend-select", "GG202,GG501")  # info is opt-in
    log = json.loads(run.stdout)
    jsonschema.validate(log, SCHEMA)
    results = log["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results].count("sub/rnn.py") == 11
    assert {r["level"] for r in results} == {"error", "warning", "note"}


def test_sarif_of_nothing_is_a_valid_empty_run(gradguard, write):
    write("clean.py", GG101.VALID[0].code)
    run = gradguard("check", "--output-format", "sarif", "clean.py")
    log = json.loads(run.stdout)
    jsonschema.validate(log, SCHEMA)
    assert (log["runs"][0]["results"], run.returncode) == ([], 0)


def test_an_invalid_log_fails_the_schema():
    # The schema test can fail: a result without a message is not SARIF.
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "GG101"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, SCHEMA)


def test_github_annotations(gradguard, write, mine):
    write("a.py", mine.source)
    write("b.py", "import torch\n\nw = torch.nn.Linear(2, 2).weight\nw.data.zero_()\n")
    run = gradguard("check", "--output-format", "github", "--extend-select", "GG202", "a.py", "b.py")
    assert run.stdout == (
        "::error file=a.py,line=7,col=17,endLine=7,endColumn=20,title=GG101 graph-kept-across-iterations::"
        f"{mine.message}\n"
        "::notice file=b.py,line=4,col=1,endLine=4,endColumn=7,title=GG202 data-attribute::"
        "in-place write through `w.data` is invisible to autograd: if `w` was saved for backward, its gradients "
        "become silently wrong\n"
    )
    assert (run.stderr, run.returncode) == ("", 1)


def test_github_escapes_properties_and_data(gradguard, write, mine):
    write("we,ird:100%.py", mine.source)
    run = gradguard("check", "--output-format", "github", "we,ird:100%.py")
    assert run.stdout.startswith("::error file=we%2Cird%3A100%25.py,line=7,")


def test_github_warning_level(gradguard, write):
    write("a.py", "import torch\n\nx = torch.randn(3, requires_grad=True)\ny = torch.tensor(x)\n")
    assert gradguard("check", "--output-format", "github", "a.py").stdout.startswith("::warning file=a.py,line=4,")


def test_statistics(gradguard, write, mine):
    leaky(write, mine)
    run = gradguard("check", "--statistics")
    assert run.stdout == (
        "3  GG101  [*] graph-kept-across-iterations\n"
        "1  GG103  [*] eval-without-no-grad\n"
        "1  GG401  [*] numpy-on-grad-tensor\n"
        "1  GG402  [*] tensor-copy-construct\n"
        "Found 6 findings (6 fixable with --fix). 2 files checked.\n"
    )
    assert run.returncode == 1


def test_statistics_mark_what_is_not_fixable(gradguard, write):
    write("b.py", "import torch\n\nw = torch.nn.Linear(2, 2).weight\nw.data.zero_()\n")
    write("c.py", "import torch\n\nx = torch.randn(3, requires_grad=True)\ny = torch.tensor(x)\n")
    run = gradguard("check", "--statistics", "--extend-select", "GG202")
    assert run.stdout == (
        "1  GG202  [ ] data-attribute\n"
        "1  GG402  [*] tensor-copy-construct\n"
        "Found 2 findings (1 fixable with --fix, 1 more with --unsafe-fixes). 2 files checked.\n"
    )


def test_statistics_as_json(gradguard, write, mine):
    leaky(write, mine)
    run = gradguard("check", "--statistics", "--output-format", "json", "--select", "GG1")
    assert json.loads(run.stdout) == [
        {"code": "GG101", "name": "graph-kept-across-iterations", "count": 3, "fixable": True},
        {"code": "GG103", "name": "eval-without-no-grad", "count": 1, "fixable": True},
    ]


def _stderr_on_a_terminal(cwd: Path, *args: str) -> tuple[str, str]:
    """Run with stderr a pseudo-terminal (stdout a pipe): (stdout, stderr)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradguard", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=slave, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    stdout = proc.stdout.read().decode()
    proc.stdout.close()
    proc.wait(timeout=120)
    return stdout, b"".join(chunks).decode()


def test_progress_bar_on_a_terminal_only(gradguard, write, tmp_path, mine):
    for i in range(25):
        write(f"m{i:02}.py", "x = 1\n")
    write("z.py", mine.source)
    stdout, stderr = _stderr_on_a_terminal(tmp_path, "check", "--jobs", "1", "--output-format", "concise")
    assert stdout == f"{mine.line('z.py')}\nFound 1 finding (1 fixable with --fix). 26 files checked.\n"
    bars = [part for part in stderr.split("\r\x1b[K") if part]
    assert bars[0] == "Checking [#-----------------------------] 1/26 files"
    assert bars[-1] == "Checking [##############################] 26/26 files"
    assert stderr.endswith("\r\x1b[K")  # erased at the end
    piped = gradguard("check", "--jobs", "1")
    assert piped.stderr == ""


def test_no_progress_bar_for_a_few_files(tmp_path, write, mine):
    write("z.py", mine.source)
    _, stderr = _stderr_on_a_terminal(tmp_path, "check", "z.py")
    assert stderr == ""
