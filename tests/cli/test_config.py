"""Project configuration through the real CLI: pyproject.toml `[tool.gradguard]` and
gradguard.toml, found walking up from each file; bad files are exit 2 with the
file, key and what is allowed; flags override the file; `gradguard config`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradguard.rules import all_rules
from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations as GG101

BAD = GG101.INVALID[1]  # GG101 alone
ALLOWED = "select, extend-select, ignore, per-file-ignores, include, extend-include, exclude, extend-exclude, severity, strict, copy-order, types, python"
# GG101 (line 7) and GG402 (line 8) in one file.
TWO = """import torch

net = torch.nn.Linear(2, 1)
kept = []
for x in [torch.randn(3, 2)]:
    out = net(x).sum()
    kept.append(out)
y = torch.tensor(torch.randn(2, requires_grad=True))
"""


def codes(run) -> list[tuple[str, str]]:
    """(path, code) of each finding in JSON output."""
    return [(f["path"], f["code"]) for f in json.loads(run.stdout)]


def test_pyproject_is_found_walking_up_from_each_file(gradguard, write):
    write("proj/pyproject.toml", '[project]\nname = "x"\n\n[tool.gradguard]\nselect = ["GG402"]\n')
    write("proj/src/deep/a.py", TWO)
    write("other/b.py", TWO)
    run = gradguard("check", "--output-format", "json", "proj", "other")
    assert codes(run) == [("other/b.py", "GG101"), ("other/b.py", "GG402"), ("proj/src/deep/a.py", "GG402")]


def test_pyproject_without_the_table_is_passed_over(gradguard, write):
    write("gradguard.toml", 'ignore = ["GG101"]\n')
    write("pkg/pyproject.toml", '[project]\nname = "pkg"\n')
    write("pkg/a.py", TWO)
    assert codes(gradguard("check", "--output-format", "json", "pkg")) == [("pkg/a.py", "GG402")]


def test_gradguard_toml_wins_over_pyproject_in_the_same_directory(gradguard, write):
    write("pyproject.toml", '[tool.gradguard]\nselect = ["GG101"]\n')
    write("gradguard.toml", 'select = ["GG402"]\n')
    write("a.py", TWO)
    assert codes(gradguard("check", "--output-format", "json", "a.py")) == [("a.py", "GG402")]


def test_the_nearest_file_wins(gradguard, write):
    write("gradguard.toml", 'select = ["GG402"]\n')
    write("sub/gradguard.toml", 'select = ["GG101"]\n')
    write("a.py", TWO)
    write("sub/b.py", TWO)
    assert codes(gradguard("check", "--output-format", "json")) == [("a.py", "GG402"), ("sub/b.py", "GG101")]


def test_extend_select_and_ignore(gradguard, write):
    write("gradguard.toml", 'select = ["GG4"]\nextend-select = ["GG101"]\nignore = ["GG40"]\n')
    write("a.py", TWO)
    assert codes(gradguard("check", "--output-format", "json", "a.py")) == [("a.py", "GG101")]


def test_severity_per_rule(gradguard, write):
    write("pyproject.toml", '[tool.gradguard.severity]\nGG101 = "info"\n')
    write("a.py", TWO)
    found = json.loads(gradguard("check", "--output-format", "json", "a.py").stdout)
    assert [(f["code"], f["severity"]) for f in found] == [("GG101", "info"), ("GG402", "warning")]


def test_copy_order_from_the_file(gradguard, write):
    write("gradguard.toml", 'copy-order = "detach-clone"\nselect = ["GG402"]\n')
    write("a.py", TWO)
    (finding,) = json.loads(gradguard("check", "--output-format", "json", "a.py").stdout)
    assert finding["fixes"][0]["edits"][0]["new_text"] == "torch.randn(2, requires_grad=True).detach().clone()"


def test_per_file_ignores_relative_to_the_config_and_by_name(gradguard, write):
    write(
        "proj/pyproject.toml",
        '[tool.gradguard.per-file-ignores]\n"tests/**" = ["GG101"]\n"conftest.py" = ["GG4"]\n"!src/**" = ["GG402"]\n',
    )
    for name in ("proj/tests/unit/t.py", "proj/src/conftest.py", "proj/src/m.py", "proj/tools/x.py"):
        write(name, TWO)
    run = gradguard("check", "--output-format", "json", "proj")
    assert codes(run) == [
        ("proj/src/conftest.py", "GG101"),  # conftest.py anywhere: GG4 ignored
        ("proj/src/m.py", "GG101"),
        ("proj/src/m.py", "GG402"),
        ("proj/tools/x.py", "GG101"),  # outside src/: GG402 ignored (tests/unit/t.py: GG101 too)
    ]


def test_exclude_and_extend_exclude(gradguard, write):
    write("gradguard.toml", 'extend-exclude = ["generated", "legacy/*.py"]\n')
    for name in ("a.py", "generated/b.py", "legacy/c.py", "legacy/keep/d.py", ".hidden/e.py", "build/f.py"):
        write(name, TWO)
    run = gradguard("check", "--output-format", "json", "--select", "GG402")
    assert codes(run) == [("a.py", "GG402"), ("legacy/keep/d.py", "GG402")]


def test_exclude_replaces_the_defaults(gradguard, write):
    write("gradguard.toml", 'exclude = ["generated"]\n')
    for name in ("build/f.py", "generated/b.py"):
        write(name, TWO)
    run = gradguard("check", "--output-format", "json", "--select", "GG402")
    assert codes(run) == [("build/f.py", "GG402")]


def test_named_files_are_checked_unless_force_exclude(gradguard, write):
    write("gradguard.toml", 'extend-exclude = ["generated"]\n')
    write("generated/b.py", TWO)
    write("a.py", TWO)
    assert codes(gradguard("check", "--output-format", "json", "--select", "GG402", "generated/b.py")) == [
        ("generated/b.py", "GG402")
    ]
    run = gradguard("check", "--output-format", "json", "--select", "GG402", "--force-exclude", "generated/b.py", "a.py")
    assert codes(run) == [("a.py", "GG402")]


def test_force_exclude_of_every_file_is_success(gradguard, write):
    write("gradguard.toml", 'extend-exclude = ["generated"]\n')
    write("generated/b.py", TWO)
    run = gradguard("check", "--force-exclude", "generated/b.py")
    assert (run.stdout, run.stderr, run.returncode) == ("", "warning: No Python files found under the given paths.\n", 0)


def test_flags_override_the_file(gradguard, write):
    write("gradguard.toml", 'select = ["GG101"]\nignore = ["GG402"]\n')
    write("a.py", TWO)
    # --select replaces the file's selection (and its ignore, as ruff's does) ...
    assert codes(gradguard("check", "--output-format", "json", "--select", "GG402", "a.py")) == [("a.py", "GG402")]
    # ... --extend-select and --ignore add to it.
    run = gradguard("check", "--output-format", "json", "--extend-select", "GG402", "a.py")
    assert codes(run) == [("a.py", "GG101")]  # the file's ignore still holds
    assert codes(gradguard("check", "--output-format", "json", "--ignore", "GG101", "a.py")) == []


def test_copy_order_flag_overrides_the_file(gradguard, write):
    write("gradguard.toml", 'copy-order = "detach-clone"\nselect = ["GG402"]\n')
    write("a.py", TWO)
    run = gradguard("check", "--output-format", "json", "--copy-order", "clone-detach", "a.py")
    (finding,) = json.loads(run.stdout)
    assert finding["fixes"][0]["edits"][0]["new_text"] == "torch.randn(2, requires_grad=True).clone().detach()"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "pyproject.toml",
            '[tool.gradguard]\nselct = ["GG1"]\n',
            f"pyproject.toml: error: `tool.gradguard.selct`: unknown setting (allowed: {ALLOWED})",
        ),
        (
            "gradguard.toml",
            'select = "GG1"\n',
            'gradguard.toml: error: `select`: expected a list of rule codes or prefixes such as ["GG1", "GG401"], '
            "got 'GG1'",
        ),
        (
            "gradguard.toml",
            'ignore = ["GG8"]\n',
            "gradguard.toml: error: `ignore`: GG8 matches no rule (known: "
            + ", ".join(r.code for r in all_rules())
            + ")",
        ),
        (
            "pyproject.toml",
            '[tool.gradguard.severity]\nGG101 = "loud"\n',
            "pyproject.toml: error: `tool.gradguard.severity.GG101`: expected one of 'error', 'warning', 'info', "
            "got 'loud'",
        ),
        (
            "gradguard.toml",
            '[severity]\nGG999 = "info"\n',
            "gradguard.toml: error: `severity.GG999`: GG999 is not a rule code (known: "
            + ", ".join(r.code for r in all_rules())
            + ")",
        ),
        (
            "gradguard.toml",
            'strict = "yes"\n',
            "gradguard.toml: error: `strict`: expected true or false, got 'yes'",
        ),
        (
            "gradguard.toml",
            "types = 1\n",
            "gradguard.toml: error: `types`: expected true or false, got 1",
        ),
        (
            "gradguard.toml",
            'copy-order = "sideways"\n',
            "gradguard.toml: error: `copy-order`: expected one of 'clone-detach', 'detach-clone', got 'sideways'",
        ),
        (
            "gradguard.toml",
            '[per-file-ignores]\n"tests/*" = "GG101"\n',
            'gradguard.toml: error: `per-file-ignores."tests/*"`: expected a list of rule codes or prefixes such as '
            "[\"GG1\", \"GG401\"], got 'GG101'",
        ),
        (
            "gradguard.toml",
            "exclude = [1]\n",
            'gradguard.toml: error: `exclude`: expected a list of glob patterns such as ["build", "tests/data/**"], '
            "got [1]",
        ),
        ("gradguard.toml", "select = [\n", None),  # TOML syntax
    ],
)
def test_bad_configuration_is_a_usage_error(gradguard, write, name, text, message):
    write(name, text)
    write("a.py", TWO)
    run = gradguard("check", "a.py")
    assert (run.stdout, run.returncode) == ("", 2)
    if message is None:  # TOML syntax: the parser's own words, after the file's name
        assert run.stderr.startswith(f"{name}: error: not valid TOML: ")
        assert run.stderr.count("\n") == 1
    else:
        assert run.stderr == message + "\n"


def test_a_bad_file_below_is_found_while_walking(gradguard, write):
    write("a.py", TWO)
    write("sub/gradguard.toml", "bogus = 1\n")
    write("sub/b.py", TWO)
    run = gradguard("check", ".")
    assert (run.stdout, run.returncode) == ("", 2)
    assert run.stderr == f"sub/gradguard.toml: error: `bogus`: unknown setting (allowed: {ALLOWED})\n"


def test_config_prints_the_effective_configuration(gradguard, write):
    write(
        "pyproject.toml",
        "[tool.gradguard]\n"
        'select = ["GG1", "GG4"]\n'
        'ignore = ["GG103"]\n'
        "strict = true\n"
        "types = true\n"
        'extend-exclude = ["generated"]\n'
        '[tool.gradguard.severity]\nGG101 = "warning"\n'
        '[tool.gradguard.per-file-ignores]\n"tests/**" = ["GG4"]\n',
    )
    write("tests/test_x.py", TWO)
    run = gradguard("config", "tests/test_x.py")
    assert (run.stderr, run.returncode) == ("", 0)
    assert run.stdout == (
        "# pyproject.toml [tool.gradguard]\n"
        'select = ["GG1", "GG4"]\n'
        "extend-select = []\n"
        'ignore = ["GG103"]\n'
        'include = ["*.py", "*.ipynb"]\n'
        "extend-include = []\n"
        'exclude = [".*", ".venv", "venv", "node_modules", "__pycache__", "__pypackages__", "site-packages", "build", "dist"]\n'
        'extend-exclude = ["generated"]\n'
        "strict = true\n"
        'copy-order = "clone-detach"\n'
        "types = true\n"
        "\n"
        "[severity]\n"
        'GG101 = "warning"\n'
        "\n"
        "[per-file-ignores]\n"
        '"tests/**" = ["GG4"]\n'
        "\n"
        "# reported in tests/test_x.py:\n"
        "#   GG101  warning (its severity setting)\n"
        "#   GG102  warning\n"
        "#   GG104  warning\n"
        "# off (not selected, or ignored): GG103, GG201, GG202, GG203, GG301, GG302, GG303, GG401, GG402, GG501, GG901\n"
    )


def test_config_with_flags_and_without_a_file(gradguard, write):
    run = gradguard("config", "--select", "GG2", "--ignore", "GG203", "--strict", "--copy-order", "detach-clone")
    assert run.stdout == (
        "# defaults (no gradguard.toml or [tool.gradguard] found)\n"
        'select = ["GG2"]\n'
        "extend-select = []\n"
        'ignore = ["GG203"]\n'
        'include = ["*.py", "*.ipynb"]\n'
        "extend-include = []\n"
        'exclude = [".*", ".venv", "venv", "node_modules", "__pycache__", "__pypackages__", "site-packages", "build", "dist"]\n'
        "extend-exclude = []\n"
        "strict = true\n"
        'copy-order = "detach-clone"\n'
        "types = false\n"
        "\n"
        "[severity]\n"
        "\n"
        "[per-file-ignores]\n"
        "\n"
        "# reported here (before per-file-ignores):\n"
        "#   GG201  warning\n"
        "#   GG202  error, warning, info\n"
        "# off (not selected, or ignored): GG101, GG102, GG103, GG104, GG203, GG301, GG302, GG303, GG401, GG402, "
        "GG501, GG901\n"
    )


def test_config_names_a_bad_file(gradguard, write):
    write("gradguard.toml", "strict = 3\n")
    run = gradguard("config")
    assert (run.stdout, run.stderr, run.returncode) == (
        "",
        "gradguard.toml: error: `strict`: expected true or false, got 3\n",
        2,
    )


def test_config_lists_opt_in_rules_as_reporting_nothing_and_check_agrees(gradguard, write):
    """GG501 and GG901 are info-only: enabled by `select = ["GG"]`, yet silent until selected by
    name. `gradguard config` says so, and the leaky examples (which hold both mistakes) agree."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    for name in ("train_leaky.py", "rnn_leaky.py"):
        write(name, (examples / name).read_text())
    shown = gradguard("config", "train_leaky.py").stdout.split("# reported in train_leaky.py:\n")[1]
    assert shown == (
        "#   GG101  error, warning\n"
        "#   GG102  warning\n"
        "#   GG103  warning\n"
        "#   GG104  warning\n"
        "#   GG201  warning\n"
        "#   GG202  error, warning (info findings opt-in: select GG202 by name)\n"
        "#   GG203  error\n"
        "#   GG301  warning\n"
        "#   GG302  error\n"
        "#   GG303  error\n"
        "#   GG401  error, warning\n"
        "#   GG402  warning\n"
        "# opt-in, reporting nothing unless selected by name (`--extend-select GG501`): GG501, GG901\n"
    )
    found = {f["code"] for f in json.loads(gradguard("check", "--output-format", "json", ".").stdout)}
    assert found == {r.code for r in all_rules()} - {"GG501", "GG901"}
    write("gradguard.toml", (examples / "gradguard.toml").read_text())  # extend-select = ["GG501", "GG901"]
    shown = gradguard("config", "train_leaky.py").stdout
    assert shown.endswith("#   GG501  info\n#   GG901  info\n")
    found = {f["code"] for f in json.loads(gradguard("check", "--output-format", "json", ".").stdout)}
    assert found == {r.code for r in all_rules()}


def test_a_severity_setting_shows_an_info_rule(gradguard, write):
    write("gradguard.toml", '[severity]\nGG501 = "warning"\n')
    assert "#   GG501  warning (its severity setting)\n" in gradguard("config").stdout


def test_config_says_what_a_directory_walk_does_with_a_file(gradguard, write):
    write("build/gen.py", "x = 1\n")
    write("tool", "#!/bin/sh\necho hi\n")
    write("train", "#!/usr/bin/env python3\nimport torch\n")
    assert gradguard("config", "build/gen.py").stdout.splitlines()[-1] == (
        '# a directory walk skips it: matches "build" in exclude (the default); '
        "named on the command line, it is checked unless --force-exclude"
    )
    assert gradguard("config", "tool").stdout.splitlines()[-1] == (
        "# a directory walk skips it: no extension and no Python shebang; named on the command line, it is checked"
    )
    assert gradguard("config", "train").stdout.splitlines()[-1].startswith("# opt-in")  # walked and checked
