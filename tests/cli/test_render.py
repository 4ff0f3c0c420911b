"""The text pieces the CLI prints: code frames, summaries, diffs."""

from __future__ import annotations

import dataclasses

from gradguard import render
from gradguard.findings import Edit, Finding, Fix, Position, Range, Related, Safety, Severity


def finding(start, end, fixes=()) -> Finding:
    return Finding("GG101", "x", Severity.ERROR, "msg", Range(Position(*start), Position(*end)), fixes=fixes)


def fix(safety: Safety) -> Fix:
    return Fix("Do it", safety, (Edit(Range(Position(1, 0), Position(1, 1)), "y"),))


def test_carets_follow_tabs_and_wide_characters():
    source = "import torch\nif x:\n\ty = '漢' + loss\n"
    col = source.splitlines()[2].index("loss")
    frame = render.code_frame(source, finding((3, col), (3, col + 4)))
    assert frame[3] == "3 |     y = '漢' + loss"
    assert frame[4] == "  | " + " " * 15 + "^^^^"


def test_multi_line_range_underlines_each_line():
    source = "a = f(\n    1,\n    2)\n"
    frame = render.code_frame(source, finding((1, 4), (3, 6)))
    assert frame == [
        "  |",
        "1 | a = f(",
        "  |     ^^",
        "2 |     1,",
        "  |     ^^",
        "3 |     2)",
        "  |     ^^",
        "  |",
    ]


def test_long_ranges_are_elided():
    source = "".join(f"x{i}\n" for i in range(1, 21))
    frame = render.code_frame(source, finding((2, 0), (19, 3)))
    numbers = [line.split(" |")[0].strip() for line in frame if line[:2].strip().isdigit() or line.startswith("..")]
    assert numbers == ["1", "2", "3", "4", "..", "17", "18", "19", "20"]


def test_help_names_the_first_fix_and_its_safety():
    assert render.code_frame("x\n", finding((1, 0), (1, 1), (fix(Safety.UNSAFE),)))[-1] == "  = help: Do it (unsafe)"
    assert render.code_frame("x\n", finding((1, 0), (1, 1), (fix(Safety.SAFE),)))[-1] == "  = help: Do it"


def test_summaries():
    safe, unsafe, none = (finding((1, 0), (1, 1), f) for f in [(fix(Safety.SAFE),), (fix(Safety.UNSAFE),), ()])
    assert render.summary([], unsafe=False) == ["All checks passed!"]
    assert render.summary([none], unsafe=False) == ["Found 1 finding."]
    assert render.summary([safe, safe, none], unsafe=False) == ["Found 3 findings (2 fixable with --fix)."]
    assert render.summary([safe, unsafe], unsafe=False) == [
        "Found 2 findings (1 fixable with --fix, 1 more with --unsafe-fixes)."
    ]
    assert render.summary([safe, unsafe], unsafe=True) == ["Found 2 findings (2 fixable with --fix)."]
    assert render.summary([], unsafe=False, fixed=3) == ["Fixed 3 findings."]
    assert render.summary([none], unsafe=False, fixed=1) == ["Fixed 1 finding.", "Found 1 finding."]
    assert render.summary([none], unsafe=False, failed=2) == ["Found 1 finding; 2 files had errors."]


def test_summaries_say_how_many_files_were_checked():
    none = finding((1, 0), (1, 1))
    assert render.summary([], unsafe=False, checked=57) == ["All checks passed! 57 files checked."]
    assert render.summary([none], unsafe=False, checked=1) == ["Found 1 finding. 1 file checked."]
    assert render.summary([], unsafe=False, fixed=2, checked=3) == ["Fixed 2 findings. 3 files checked."]
    assert render.summary([], unsafe=False, failed=1, checked=2) == ["No findings, but 1 file had errors. 2 files checked."]


def test_a_finding_line_names_its_severity():
    line = render.finding_line("a.py", finding((3, 4), (3, 8)))
    assert line == "a.py:3:5: error: GG101 msg"
    coloured = render.finding_line("a.py", finding((3, 4), (3, 8)), render.Palette(color=True))
    assert coloured == "\x1b[1ma.py\x1b[0m:3:5: \x1b[31m\x1b[1merror:\x1b[0m \x1b[1mGG101\x1b[0m msg"


def test_diff_of_identical_text_is_empty():
    assert render.unified_diff("a.py", "x\n", "x\n") == ""


def test_a_note_in_another_file_names_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    at = Range(Position(8, 12), Position(8, 12))
    other = Related(at, "`generate()` is called here, with grad on", str(tmp_path / "pkg" / "sample.py"))
    here = Related(Range(Position(1, 0), Position(1, 1)), "requires grad from here")
    frame = render.code_frame("x\n", dataclasses.replace(finding((1, 0), (1, 1)), related=(here, other)))
    assert frame[-2:] == ["  = note: requires grad from here (line 1)",
                          "  = note: `generate()` is called here, with grad on (pkg/sample.py line 8)"]
