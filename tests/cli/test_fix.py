"""`--fix`, `--unsafe-fixes` and `--diff`: what is written, how, and what is left to say."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess

import pytest

from gradguard.engine import analyze
from gradguard.findings import Safety
from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations as GG101

BAD = GG101.INVALID[1]  # a training loop: GG101 alone (INVALID[0] is an eval loop, GG103 too)
# The examples found with the default settings (a strict one needs --strict: see test_check).
DEFAULTS = [invalid for invalid in GG101.INVALID if not invalid.settings]


def _first_fix_safe(invalid) -> bool:
    (finding,) = [f for f in analyze(invalid.code).findings if f.code == GG101.code]
    return bool(finding.fixes) and finding.fixes[0].safety is Safety.SAFE


# what `--fix` writes for each: its first fix where that is safe, else the file as it was (a sum a
# function returns: a caller may back-propagate it, so its detach is unsafe; a tuple of running sums
# has no fix)
EXPECTED = [invalid.fixes[0] if _first_fix_safe(invalid) else invalid.code for invalid in DEFAULTS]
N_SAFE = sum(invalid.fixes[:1] == (text,) for invalid, text in zip(DEFAULTS, EXPECTED))


def snapshot(path):
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_ino


def test_fix_writes_the_first_fix(gradguard, write):
    path = write("bad.py", BAD.code)
    run = gradguard("check", "--fix", "bad.py")
    assert path.read_text() == BAD.fixes[0]
    assert (run.stdout, run.stderr, run.returncode) == ("Fixed 1 finding. 1 file checked.\n", "", 0)


def test_second_fix_changes_nothing(gradguard, write):
    path = write("bad.py", BAD.code)
    gradguard("check", "--fix", "bad.py")
    before = snapshot(path)
    run = gradguard("check", "--fix", "bad.py")
    assert snapshot(path) == before
    assert (run.stdout, run.returncode) == ("All checks passed! 1 file checked.\n", 0)


def test_fix_never_touches_a_clean_file(gradguard, write):
    path = write("clean.py", GG101.VALID[0].code)
    before = snapshot(path)
    gradguard("check", "--fix", "clean.py")
    assert snapshot(path) == before


def test_fix_every_invalid_example(gradguard, write):
    paths = [write(f"ex{i}.py", invalid.code) for i, invalid in enumerate(DEFAULTS)]
    run = gradguard("check", "--fix", "--select", "GG101", ".")
    assert [p.read_text() for p in paths] == EXPECTED
    assert 0 < N_SAFE < len(paths)
    left = len(paths) - N_SAFE
    unsafe = sum(bool(invalid.fixes) for invalid in DEFAULTS) - N_SAFE
    assert (run.stdout.splitlines()[-2:], run.returncode) == ([
        f"Fixed {N_SAFE} findings.",
        f"Found {left} finding{'s' if left > 1 else ''} ({unsafe} fixable with --unsafe-fixes). {len(paths)} files checked.",
    ], 1)


def test_fix_json_reports_what_remains(gradguard, write):
    write("bad.py", BAD.code)
    run = gradguard("check", "--fix", "--output-format", "json", "bad.py")
    assert (json.loads(run.stdout), run.stderr, run.returncode) == ([], "Fixed 1 finding.\n", 0)


def test_unsafe_fixes_apply_the_first_fix_of_any_safety(gradguard, write):
    # GG101 offers the safe `.detach()` first, so it stays the choice; a rule whose first
    # fix is unsafe is covered in test_in_process.py.
    path = write("bad.py", BAD.code)
    run = gradguard("check", "--fix", "--unsafe-fixes", "bad.py")
    assert path.read_text() == BAD.fixes[0]
    assert run.returncode == 0


def test_diff_prints_without_writing(gradguard, write, mine):
    path = write("a.py", mine.source)
    before = snapshot(path)
    run = gradguard("check", "--diff", "a.py")
    assert snapshot(path) == before
    assert run.stdout == (
        "--- a.py\n"
        "+++ a.py\n"
        "@@ -4,4 +4,4 @@\n"
        " kept = []\n"
        " for x in [torch.randn(3, 2)]:\n"
        "     out = net(x).sum()\n"
        "-    kept.append(out)\n"
        "+    kept.append(out.detach())\n"
    )
    assert (run.stderr, run.returncode) == ("Would fix 1 finding.\n", 1)


def test_diff_marks_a_missing_final_newline(gradguard, write, mine):
    write("a.py", mine.source.rstrip("\n"))
    run = gradguard("check", "--diff", "a.py")
    no_newline = "\\ No newline at end of file\n"
    assert run.stdout.endswith(f"-    kept.append(out)\n{no_newline}+    kept.append(out.detach())\n{no_newline}")


def test_diff_wins_over_fix(gradguard, write, mine):
    path = write("a.py", mine.source)
    run = gradguard("check", "--diff", "--fix", "a.py")
    assert path.read_text() == mine.source
    assert run.returncode == 1


def test_diff_with_nothing_to_fix(gradguard, write):
    write("clean.py", GG101.VALID[0].code)
    run = gradguard("check", "--diff", "clean.py")
    assert (run.stdout, run.stderr, run.returncode) == ("", "No fixes available.\n", 0)


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_diff_applies_with_patch(gradguard, write, mine, tmp_path):
    path = write("a.py", mine.source)
    diff = gradguard("check", "--diff", "a.py").stdout
    subprocess.run(["patch", "-s", "-p0"], input=diff.encode(), cwd=tmp_path, check=True)
    assert path.read_text() == mine.fixed


def test_fix_keeps_crlf(gradguard, write):
    path = write("crlf.py", BAD.code.replace("\n", "\r\n"))
    gradguard("check", "--fix", "crlf.py")
    assert path.read_bytes() == BAD.fixes[0].replace("\n", "\r\n").encode()


def test_fix_keeps_mixed_line_endings(gradguard, write, mine):
    source = mine.source.replace("\n", "\r\n", 2)  # only the first two lines end in CRLF
    path = write("mixed.py", source)
    gradguard("check", "--fix", "mixed.py")
    assert path.read_bytes() == mine.fixed.replace("\n", "\r\n", 2).encode()


def test_fix_keeps_the_bom(gradguard, write):
    path = write("bom.py", b"\xef\xbb\xbf" + BAD.code.encode())
    gradguard("check", "--fix", "bom.py")
    assert path.read_bytes() == b"\xef\xbb\xbf" + BAD.fixes[0].encode()


def test_fix_keeps_permissions(gradguard, write):
    path = write("tool.py", BAD.code)
    path.chmod(0o751)
    gradguard("check", "--fix", "tool.py")
    assert path.read_text() == BAD.fixes[0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


def test_fix_through_a_symlink_keeps_the_link(gradguard, write, tmp_path):
    target = write("real/target.py", BAD.code)
    os.symlink("real/target.py", tmp_path / "link.py")
    gradguard("check", "--fix", "link.py")
    assert (tmp_path / "link.py").is_symlink()
    assert target.read_text() == BAD.fixes[0]


def test_fix_leaves_no_temporary_files(gradguard, write, tmp_path):
    write("bad.py", BAD.code)
    gradguard("check", "--fix", "bad.py")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gradguard_cache", "bad.py"]
    gradguard("check", "--fix", "--no-cache", "bad.py")
    (tmp_path / ".gradguard_cache").rename(tmp_path / "kept")  # --no-cache writes none
    gradguard("check", "--fix", "--no-cache", "bad.py")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.py", "kept"]


def test_fix_skips_a_file_that_does_not_parse(gradguard, write):
    broken = BAD.code + "def oops(:\n"
    path = write("broken.py", broken)
    run = gradguard("check", "--fix", "broken.py")
    assert path.read_text() == broken
    assert run.returncode == 2


def test_parallel_fix(gradguard, write):
    paths = [write(f"m{i}.py", invalid.code) for i, invalid in enumerate(DEFAULTS)]
    run = gradguard("check", "--fix", "--select", "GG101", "--jobs", "2", ".")
    assert [p.read_text() for p in paths] == EXPECTED


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_fix_keeps_the_owner(gradguard, write):
    path = write("theirs.py", BAD.code)
    os.chown(path, 12345, 23456)
    gradguard("check", "--fix", "theirs.py")
    assert path.read_text() == BAD.fixes[0]
    assert (path.stat().st_uid, path.stat().st_gid) == (12345, 23456)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write any file")
def test_fix_does_not_replace_a_read_only_file(gradguard, write):
    path = write("ro.py", BAD.code)
    path.chmod(0o444)
    run = gradguard("check", "--fix", "ro.py")
    assert path.read_text() == BAD.code
    assert run.stderr == "ro.py: error: cannot write fixes: Permission denied\n"
    assert run.returncode == 2


# Overlapping fixes: GG103 wraps the loop in `with torch.no_grad():`; the fixes inside it
# wait for the next round, on the wrapped code.
EVAL_LOSS = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
model.eval()
total = 0.0
for x, y in [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]:
    loss = criterion(model(x), y)
    total += loss.data[0]
print(total)
"""
EVAL_LOSS_FIXED = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
model.eval()
total = 0.0
with torch.no_grad():
    for x, y in [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]:
        loss = criterion(model(x), y)
        total += loss.item()
print(total)
"""


def test_a_fix_overlapping_another_is_applied_in_the_next_round(gradguard, write):
    path = write("eval.py", EVAL_LOSS)
    run = gradguard("check", "--fix", "eval.py")
    assert path.read_text() == EVAL_LOSS_FIXED
    assert (run.stdout, run.stderr, run.returncode) == ("Fixed 2 findings. 1 file checked.\n", "", 0)


EVAL_KEPT = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
model.eval()
outputs = []
for x in [torch.randn(3, 4) for _ in range(2)]:
    out = model(x)
    outputs.append(out)
    print(out.data[0])
"""
EVAL_KEPT_FIXED = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
model.eval()
outputs = []
with torch.no_grad():
    for x in [torch.randn(3, 4) for _ in range(2)]:
        out = model(x)
        outputs.append(out)
        print(out.data[0])
"""
NOT_APPLIED = ("warning: {code} fix not applied: it overlaps the fix of the GG103 finding at {at}, applied first, and "
               "the code after that fix no longer shows this finding\n")


def test_fixes_not_applied_are_named_and_not_counted(gradguard, write):
    # Under no_grad `out` has no graph: GG101 and GG202 are gone, their fixes never applied.
    path = write("eval.py", EVAL_KEPT)
    run = gradguard("check", "--fix", "--select", "GG101,GG103,GG202", "eval.py")
    assert path.read_text() == EVAL_KEPT_FIXED
    assert run.stdout == "Fixed 1 finding. 1 file checked.\n"
    assert run.stderr == (  # where the findings were in the file as written
        "eval.py:10:24: " + NOT_APPLIED.format(code="GG101", at="9:15")
        + "eval.py:11:15: " + NOT_APPLIED.format(code="GG202", at="9:15")
    )
    assert run.returncode == 0


def test_diff_names_the_fixes_not_applied_where_they_are_in_the_file_as_read(gradguard, write):
    write("eval.py", EVAL_KEPT)
    run = gradguard("check", "--diff", "--select", "GG101,GG103,GG202", "eval.py")
    assert run.stderr == (
        "eval.py:9:20: " + NOT_APPLIED.format(code="GG101", at="8:11")
        + "eval.py:10:11: " + NOT_APPLIED.format(code="GG202", at="8:11")
        + "Would fix 1 finding. 2 fixes cannot be applied (see above).\n"
    )
    assert run.returncode == 1


def test_stdin_fix_names_the_fixes_not_applied_on_stderr(tmp_path):
    from test_cli_conventions import stdin_run

    code, out, err = stdin_run(tmp_path, EVAL_KEPT, "check", "-", "--stdin-filename", "eval.py", "--fix",
                               "--select", "GG101,GG103,GG202")
    assert (code, out) == (0, EVAL_KEPT_FIXED)
    assert err == ("eval.py:10:24: " + NOT_APPLIED.format(code="GG101", at="9:15")
                   + "eval.py:11:15: " + NOT_APPLIED.format(code="GG202", at="9:15") + "Fixed 1 finding. 1 file checked.\n")
