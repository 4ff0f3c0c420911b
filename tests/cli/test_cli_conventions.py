"""The command-line conventions users bring from ruff and flake8: stdin, --exit-zero,
--fail-on, -q/-s, --output-file, --exit-non-zero-on-fix, and `lsp --stdio`."""

from __future__ import annotations

import json
import subprocess
import sys

LEAK = """import torch

net = torch.nn.Linear(2, 1)
kept = []
for x in [torch.randn(3, 2)]:
    out = net(x).sum()
    kept.append(out)
"""
LEAK_LINE = (
    "a.py:7:17: error: GG101 `out` carries an autograd graph (from `net(x)` on line 6) that is never back-propagated; "
    "storing it in `kept` keeps every saved activation alive across iterations"
)
# Only an info finding (GG202's sanctioned weight clipping, selected by name): reported, and by
# default it fails nothing.
INFO_ONLY = """import torch

net = torch.nn.Linear(2, 1)
for p in net.parameters():
    p.data.clamp_(-0.01, 0.01)
"""
INFO_LINE = (
    "b.py:5:5: info: GG202 in-place write through `p.data` is invisible to autograd: if `p` was saved for backward, "
    "its gradients become silently wrong"
)


def stdin_run(tmp_path, stdin: str, *args: str):
    proc = subprocess.run(
        [sys.executable, "-m", "gradguard", *args], cwd=tmp_path, input=stdin.encode(), capture_output=True, timeout=120
    )
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_stdin_with_a_filename(tmp_path):
    code, out, err = stdin_run(tmp_path, LEAK, "check", "-", "--stdin-filename", "a.py")
    assert (code, out, err) == (1, f"{LEAK_LINE}\nFound 1 finding (1 fixable with --fix). 1 file checked.\n", "")


def test_stdin_without_a_filename_is_called_dash(tmp_path):
    code, out, _ = stdin_run(tmp_path, LEAK, "check", "-", "-q")
    assert (code, out) == (1, LEAK_LINE.replace("a.py", "-", 1) + "\n")


def test_stdin_fix_prints_the_fixed_code_and_the_rest_on_stderr(tmp_path):
    code, out, err = stdin_run(tmp_path, LEAK, "check", "-", "--stdin-filename", "a.py", "--fix")
    assert out == LEAK.replace("kept.append(out)", "kept.append(out.detach())")
    assert (code, err) == (0, "Fixed 1 finding. 1 file checked.\n")


def test_stdin_fix_of_code_that_does_not_parse_gives_it_back_unchanged(tmp_path):
    code, out, err = stdin_run(tmp_path, "import torch\ndef f(:\n", "check", "-", "--fix")
    assert (code, out) == (2, "import torch\ndef f(:\n")
    assert err == "-:2:7: error: SyntaxError: invalid syntax\n"


def test_stdin_diff(tmp_path):
    code, out, _ = stdin_run(tmp_path, LEAK, "check", "-", "--stdin-filename", "a.py", "--diff")
    assert code == 0
    assert "-    kept.append(out)\n+    kept.append(out.detach())\n" in out


def test_stdin_takes_the_configuration_of_its_filename(tmp_path, write):
    write("pyproject.toml", '[tool.gradguard]\nignore = ["GG101"]\n')
    code, out, _ = stdin_run(tmp_path, LEAK, "check", "-", "--stdin-filename", "a.py")
    assert (code, out) == (0, "All checks passed! 1 file checked.\n")


def test_dash_among_other_paths_is_a_usage_error(gradguard, write):
    write("a.py", LEAK)
    run = gradguard("check", "a.py", "-")
    assert run.returncode == 2
    assert "`-` (read stdin) must be the only path" in run.stderr


def test_exit_zero_reports_and_succeeds(gradguard, write):
    write("a.py", LEAK)
    run = gradguard("check", "a.py", "--exit-zero")
    assert (run.returncode, run.stdout) == (0, f"{LEAK_LINE}\nFound 1 finding (1 fixable with --fix). 1 file checked.\n")


def test_info_findings_do_not_fail_unless_asked(gradguard, write):
    write("b.py", INFO_ONLY)
    run = gradguard("check", "b.py", "--extend-select", "GG202", "-q")
    assert (run.returncode, run.stdout) == (0, INFO_LINE + "\n")
    assert gradguard("check", "b.py", "--extend-select", "GG202", "--fail-on", "info").returncode == 1


def test_fail_on_error_lets_warnings_pass(gradguard, write):
    write("a.py", LEAK.replace("    kept.append(out)\n", "    out.backward()\n    kept.append(out)\n"))
    run = gradguard("check", "a.py", "--output-format", "json")
    assert [f["severity"] for f in json.loads(run.stdout)] == ["warning"]
    assert run.returncode == 1
    assert gradguard("check", "a.py", "--fail-on", "error").returncode == 0


def test_quiet_prints_only_the_findings_and_silent_nothing(gradguard, write):
    write("a.py", LEAK)
    quiet = gradguard("check", "a.py", "-q")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (1, LEAK_LINE + "\n", "")
    silent = gradguard("check", "a.py", "--silent")
    assert (silent.returncode, silent.stdout, silent.stderr) == (1, "", "")


def test_output_file_gets_the_report(gradguard, write, tmp_path):
    write("a.py", LEAK)
    run = gradguard("check", "a.py", "--output-format", "json", "--output-file", "report.json")
    assert (run.returncode, run.stdout) == (1, "")
    assert [f["code"] for f in json.loads((tmp_path / "report.json").read_text())] == ["GG101"]


def test_exit_non_zero_on_fix(gradguard, write, tmp_path):
    write("a.py", LEAK)
    assert gradguard("check", "a.py", "--fix").returncode == 0  # fixed: nothing left
    write("a.py", LEAK)
    run = gradguard("check", "a.py", "--fix", "--exit-non-zero-on-fix")
    assert (run.returncode, run.stdout) == (1, "Fixed 1 finding. 1 file checked.\n")
    assert "kept.append(out.detach())" in (tmp_path / "a.py").read_text()


def test_lsp_accepts_stdio(tmp_path):
    """Many editor configurations start a server with `--stdio`: it answers initialize."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    message = f"Content-Length: {len(body)}\r\n\r\n{body}".encode()
    exit_ = json.dumps({"jsonrpc": "2.0", "method": "exit"})
    message += f"Content-Length: {len(exit_)}\r\n\r\n{exit_}".encode()
    proc = subprocess.run(
        [sys.executable, "-m", "gradguard", "lsp", "--stdio"], input=message, capture_output=True, timeout=60, cwd=tmp_path
    )
    header, _, rest = proc.stdout.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.startswith(b"Content-Length"))
    answer = json.loads(rest[:length])
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "gradguard"


STALE = """import torch

net = torch.nn.Linear(2, 1)
kept = []
for x in [torch.randn(3, 2)]:
    out = net(x).sum()
    kept.append(out.item())  # noqa: GG101
    out.backward()  # gradguard: ignore[GG3O2] - typo
"""


def test_unused_and_unknown_noqa_are_reported_when_selected(gradguard, write):
    write("c.py", STALE)
    assert gradguard("check", "c.py", "-q").stdout == ""  # opt-in, like ruff's RUF100
    run = gradguard("check", "c.py", "--extend-select", "GG901", "--fail-on", "info")
    assert (run.returncode, run.stdout) == (
        1,
        "c.py:7:30: info: GG901 unused `# noqa` directive: GG101 reports nothing on this line\n"
        "c.py:8:21: info: GG901 unused `# gradguard: ignore` directive: GG3O2 is not a GradGuard rule\n"
        "Found 2 findings (2 fixable with --fix). 1 file checked.\n",
    )


def test_fix_removes_unused_noqa_and_keeps_the_reason(gradguard, write, tmp_path):
    write("c.py", STALE)
    run = gradguard("check", "c.py", "--extend-select", "GG901", "--fix")
    assert run.returncode == 0, run.stdout
    assert (tmp_path / "c.py").read_text() == STALE.replace("  # noqa: GG101", "").replace(
        "# gradguard: ignore[GG3O2] - typo", "# typo"
    )
    assert gradguard("check", "c.py", "--extend-select", "GG901", "--fail-on", "info").returncode == 0
