"""Bad input on the command line: each bad file is reported (path, reason), the
other files are still checked, the exit status is 2, and `--fix` never writes
a file it could not parse and re-check."""

from __future__ import annotations

import os

import pytest

from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations as GG101

BAD = GG101.INVALID[1]  # one GG101 finding with a safe fix
CLEAN = GG101.VALID[0].code
FINDING = f"good.py:{BAD.range[0]}:{BAD.range[1] + 1}: {(BAD.severity or GG101.severity).value}: GG101 {BAD.message}"

# name -> (bytes, the error line the CLI prints for it)
BROKEN = {
    "syntax.py": (b"import torch\nx = torch.randn(3\n", "syntax.py:2:16: error: SyntaxError: '(' was never closed"),
    "nul.py": (
        b"import torch\nx = torch.randn(3)\x00\n",
        "nul.py:2:19: error: SyntaxError: source code cannot contain a NUL byte",
    ),
    "latin1.py": (
        b'import torch\nname = "\xe9t\xe9"\n',
        "latin1.py: error: not valid UTF-8: invalid continuation byte (byte 0xe9 at line 2, column 9)",
    ),
    "python2.py": (
        b'import torch\nprint "loss", torch.randn(1)\n',
        "python2.py:2:1: error: SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?",
    ),
    "tabs.py": (
        b"import torch\nif True:\n\tx = torch.randn(3)\n        y = 1\n",
        "tabs.py:4:1: error: SyntaxError: inconsistent use of tabs and spaces in indentation",
    ),
}


def snapshot(path):
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_ino


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_bad_file_is_reported_and_the_others_still_checked(gradguard, write, name):
    data, error = BROKEN[name]
    write(name, data)
    write("good.py", BAD.code)
    run = gradguard("check", "--no-cache", "-j", "1", ".")
    assert run.stderr.splitlines() == [error]
    assert run.stdout.splitlines() == [FINDING, "Found 1 finding (1 fixable with --fix); 1 file had errors. 2 files checked."]
    assert run.returncode == 2


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_fix_leaves_a_bad_file_byte_for_byte_and_fixes_the_others(gradguard, write, name):
    data, error = BROKEN[name]
    bad = write(name, data)
    good = write("good.py", BAD.code)
    before = snapshot(bad)
    run = gradguard("check", "--no-cache", "--fix", "-j", "1", ".")
    assert snapshot(bad) == before
    assert good.read_text() == BAD.fixes[0]
    assert run.stderr.splitlines() == [error]
    assert run.returncode == 2


# Files that are fine, in every shape a file can come in: nothing to fix means not touched.
SHAPES = {
    "bom.py": b"\xef\xbb\xbf" + CLEAN.encode(),
    "crlf.py": CLEAN.replace("\n", "\r\n").encode(),
    "mixed.py": CLEAN.replace("\n", "\r\n", 2).replace("\n", "\r", 1).encode(),
    "cr.py": CLEAN.replace("\n", "\r").encode(),
    "tabs.py": b"import torch\nfor step in range(3):\n\tx = torch.randn(3)\n\tprint(x.sum().item())\n",
    "no_newline.py": CLEAN.rstrip("\n").encode(),
    "long_line.py": ("import torch\nx = [" + ", ".join(["torch.randn(3)"] * 5_000) + "]\n").encode(),
    "unicode.py": "import torch\n# 损失 🔥\nx = torch.randn(3)  # é\n".encode(),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_fix_with_nothing_to_fix_leaves_the_file_byte_for_byte(gradguard, write, name):
    path = write(name, SHAPES[name])
    before = snapshot(path)
    run = gradguard("check", "--no-cache", "--fix", name)
    assert (run.stdout, run.stderr, run.returncode) == ("All checks passed! 1 file checked.\n", "", 0)
    assert snapshot(path) == before


def test_fix_replaces_the_file_by_rename_never_in_place(gradguard, write, tmp_path):
    # A hard link made before the fix keeps the old text: the new text went to a new
    # file renamed over the name, so a crash mid-write can never leave half a file.
    path = write("bad.py", BAD.code)
    os.link(path, tmp_path / "link.py")
    path.chmod(0o640)
    gradguard("check", "--no-cache", "--fix", "bad.py")
    assert path.read_text() == BAD.fixes[0]
    assert (tmp_path / "link.py").read_text() == BAD.code
    assert oct(path.stat().st_mode & 0o777) == "0o640"


# A loop whose `loss` is one deep expression: GG101 must still see it kept in `losses`.
LOOP = "import torch\nmodel = torch.nn.Linear(3, 1)\nx = torch.randn(4, 3)\nlosses = []\nfor step in range(3):\n"
KEPT = "GG101 `loss` carries an autograd graph (from `model(x)` on line 6) that is never back-propagated; storing it in `losses` keeps every saved activation alive across iterations"

# name -> (the loop's body, the line of the finding). CPython takes ~3,000 levels;
# walking that deep needs more than Python's default recursion limit of 1,000.
DEEP_VALID = {
    "sum": ("    loss = model(x).sum()" + " + 0" * 2_500 + "\n    losses.append(loss)\n", 7),
    "unary": ("    loss = " + "- " * 2_500 + "model(x).sum()\n    losses.append(loss)\n", 7),
    "calls": ("    loss = model(x)" + ".t()" * 1_200 + ".sum()\n    losses.append(loss)\n", 7),
    "sum_over_lines": ("    loss = (model(x).sum()\n" + "        + 0\n" * 2_500 + "    )\n    losses.append(loss)\n", 2_508),
    "elif": (
        "    loss = model(x).sum()\n    if step == 0:\n        pass\n"
        + "".join(f"    elif step == {i}:\n        pass\n" for i in range(1, 2_500))
        + "    losses.append(loss)\n",
        5_007,
    ),
}


@pytest.mark.parametrize("name", sorted(DEEP_VALID))
def test_valid_code_nested_as_deep_as_python_allows_is_analysed(gradguard, write, name):
    body, line = DEEP_VALID[name]
    write("deep.py", LOOP + body)
    run = gradguard("check", "--no-cache", "deep.py")
    assert (run.stdout.splitlines(), run.stderr, run.returncode) == (
        [f"deep.py:{line}:19: error: {KEPT}", "Found 1 finding (1 fixable with --fix). 1 file checked."], "", 1
    )


# Deeper than CPython allows: libcst's native parser would overflow the C stack
# and kill the process on each of these (SIGSEGV, before the check was widened to
# logical lines and `elif` chains).
DEEP_INVALID = {
    "brackets": "x = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n",
    "sum_over_lines": "y = (x\n" + "    + x\n" * 10_000 + ")\n",
    "sum_over_backslashes": "y = x \\\n" + "    + x \\\n" * 10_000 + "    + x\n",
    "calls_over_lines": "y = (x\n" + "    .t()\n" * 10_000 + ")\n",
    "elif": "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, 10_000)),
}


@pytest.mark.parametrize("name", sorted(DEEP_INVALID))
def test_nesting_deeper_than_python_allows_is_reported_not_a_crash(gradguard, write, name):
    write("deep.py", "import torch\nx = torch.randn(3)\n" + DEEP_INVALID[name])
    write("good.py", BAD.code)
    run = gradguard("check", "--no-cache", ".")
    assert (run.stdout.splitlines()[0], run.stderr, run.returncode) == (
        FINDING, "deep.py: error: too deeply nested to parse\n", 2
    )


def test_valid_code_beyond_libcst_is_reported_as_such_not_as_a_syntax_error(gradguard, write):
    # libcst stops at ~3,000 implicitly concatenated strings; CPython takes them.
    write("strings.py", "import torch\nNAMES = (\n" + "    'a'\n" * 4_000 + ")\n")
    run = gradguard("check", "--no-cache", "strings.py")
    assert (run.stderr, run.returncode) == (
        "strings.py: error: valid Python that libcst cannot parse (parser error: error at 4003:1: expected one of STRING, f\", t\")\n",
        2,
    )


HUGE = "import torch\nBLOB = '" + "x" * (10 * 1024 * 1024) + "'\n"  # mostly one string: quick to make and read


def test_a_10_mb_file_is_reported_and_skipped(gradguard, write):
    write("huge.py", HUGE)
    write("good.py", BAD.code)
    run = gradguard("check", "--no-cache", "-j", "1", ".")
    assert run.stdout.splitlines()[0] == FINDING
    (error,) = run.stderr.splitlines()
    assert error.startswith("huge.py:")
    assert error.endswith("too large to analyse (10.5 million characters; the limit is 2 million)")
    assert run.returncode == 2


def test_a_file_too_large_is_not_called_a_syntax_error(gradguard, write):
    write("huge.py", HUGE)
    (error,) = gradguard("check", "--no-cache", "huge.py").stderr.splitlines()
    assert "SyntaxError" not in error
