"""The extension end to end in a real VS Code: code-server 4.139 (VS Code 1.139) in
Debian's Chromium, driven by playwright-core (`e2e/scenario.mjs`).

The .vsix is built by `npm run package` (with GradGuard's wheel inside), installed into a
throw-away profile, and a copy of examples/ is opened with the server's Python set by
`gradguard.interpreter`. Expected texts come from the CLI on the same files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import ARTIFACTS, CHROMIUM, CODE_SERVER, E2E, INSTALL_HINT, NODE_BIN, REPO

EXAMPLES = REPO / "examples"
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli_findings(path: Path) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "gradguard", "check", "--types", "--output-format", "json", str(path)],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout)


def apply_edits(text: str, edits: list[dict]) -> str:
    """The CLI's JSON edits (1-based lines and columns, end exclusive) applied to a text."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    def offset(line, column):
        return offsets[line - 1] + column - 1
    for e in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
        start, end = offset(e["line"], e["column"]), offset(e["end_line"], e["end_column"])
        text = text[:start] + e["new_text"] + text[end:]
    return text


@pytest.fixture(scope="module")
def vsix(node_toolchain) -> Path:
    if not CODE_SERVER.exists() or not CHROMIUM.exists():
        pytest.skip(f"code-server or chromium is missing: {INSTALL_HINT}")
    proc = subprocess.run(["npm", "run", "package", "--silent"], cwd=REPO, env=node_toolchain,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shutil.rmtree(ARTIFACTS, ignore_errors=True)  # this run's screenshots only
    return REPO / "gradguard.vsix"


# As VS Code numbers them: "Cell 4 of 4" counts the Markdown cells too.
NOTEBOOK_CELLS = [
    ("markdown", "# A training loop"),
    ("code", "import torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)\ncriterion = nn.CrossEntropyLoss()\n"
             "loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]\nhistory = []"),
    ("markdown", "The loop keeps each loss for a curve."),
    ("code", "for x, y in loader:\n    loss = criterion(model(x), y)\n    history.append(loss)"),
]


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> None:
    def cell(i, kind, source):
        out = {"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": source.splitlines(keepends=True)}
        return {**out, "execution_count": None, "outputs": []} if kind == "code" else out
    path.write_text(json.dumps({
        "cells": [cell(i, kind, source) for i, (kind, source) in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=1))


def make_workspace(where: Path, interpreter: str) -> Path:
    """A throw-away copy of examples/ (the quick fix and the save write to disk), and a notebook."""
    ws = where / "examples"
    shutil.copytree(EXAMPLES, ws)
    write_notebook(ws / "train.ipynb", NOTEBOOK_CELLS)
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "settings.json").write_text(json.dumps({
        "gradguard.interpreter": interpreter,
        "editor.codeActionsOnSave": {"source.fixAll.gradguard": "explicit"},
    }, indent=2))
    return ws


@pytest.fixture
def code_server(vsix, tmp_path, node_toolchain, request):
    """Starts code-server on a workspace, in its own process group on a free loopback port;
    always stopped (a finalizer), also when the test fails. `trusted=False`: VS Code asks
    whether to trust the folder (workspace trust is on, as in a user's VS Code)."""
    def start(workspace: Path, trusted: bool = True) -> dict:
        return _start(vsix, workspace, tmp_path, node_toolchain, request, trusted)
    return start


def _start(vsix, workspace, tmp_path, node_toolchain, request, trusted) -> dict:
    profile, extensions = tmp_path / "profile", tmp_path / "extensions"
    (profile / "User").mkdir(parents=True)
    (profile / "User" / "settings.json").write_text(json.dumps({
        "chat.disableAIFeatures": True,
        "workbench.startupEditor": "none",
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "workbench.tips.enabled": False,
        "extensions.ignoreRecommendations": True,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
    }, indent=2))
    config = tmp_path / "code-server.yaml"  # without --config it writes one into the home directory
    config.write_text("auth: none\ncert: false\n")
    common = ["--config", str(config), "--user-data-dir", str(profile), "--extensions-dir", str(extensions)]
    install = subprocess.run([str(CODE_SERVER), *common, "--install-extension", str(vsix)], env=node_toolchain,
                             capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert install.returncode == 0 and "was successfully installed" in install.stdout, install.stdout + install.stderr

    port = free_port()
    log_path = tmp_path / "code-server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [str(CODE_SERVER), *common, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}",
         "--disable-telemetry", "--disable-update-check", *(["--disable-workspace-trust"] if trusted else []),
         str(workspace)],
        env={**node_toolchain, "XDG_CACHE_HOME": str(tmp_path / "cache")},  # the rule pages of an installed wheel stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True,  # setsid: its helpers stay in this process group
    )
    request.addfinalizer(lambda: (stop_group(proc), log.close()))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:  # poll /healthz until it answers
        try:
            urllib.request.urlopen(url + "/healthz", timeout=5).read()
            break
        except (urllib.error.URLError, ConnectionError):
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, "code-server did not answer /healthz"
            time.sleep(0.2)  # the poll interval
    return {"url": url, "profile": profile, "workspace": workspace}


def run_scenario(script: str, server: dict) -> dict:
    """Runs e2e/<script> against the page and returns what it observed."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [str(NODE_BIN / "node"), str(E2E / script), server["url"], str(server["workspace"]), str(ARTIFACTS)],
        cwd=E2E, env={**os.environ, "CHROMIUM": str(CHROMIUM)}, capture_output=True, text=True, timeout=1200,
        stdin=subprocess.DEVNULL,
    )
    context = f"\nscenario stderr:\n{proc.stderr}\nextension log:\n{extension_log(server['profile'])}"
    assert proc.returncode == 0, context
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "error" not in seen, seen.get("error", "") + context
    seen["log"] = extension_log(server["profile"])
    return seen


def stop_group(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the main process is gone; its helpers may not be
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return


def extension_log(profile: Path) -> str:
    logs = sorted(profile.glob("logs/*/exthost*/gradguard.gradguard/GradGuard.log"))
    return "\n".join(f"--- {p}\n{p.read_text()}" for p in logs)


def test_vscode_squiggle_problems_hover_quick_fix_and_fix_all(code_server, tmp_path):
    workspace = make_workspace(tmp_path, sys.executable)
    train, rnn = workspace / "train_leaky.py", workspace / "rnn_leaky.py"
    train_text, rnn_text = train.read_text(), rnn.read_text()
    findings = cli_findings(train)
    leak = next(f for f in findings if f["code"] == "GG101" and f["line"] == 47)
    seen = run_scenario("editing.mjs", code_server(workspace))

    # The squiggle on the leaky line: GG101's exact range and severity; every other visible
    # squiggle is a CLI finding too.
    assert {"line": 47, "start": 29, "end": 33, "severity": "warning"} in seen["squiggles"]
    ranges = [{"line": f["line"], "start": f["column"], "end": f["end_column"], "severity": f["severity"]}
              for f in findings if f["line"] == f["end_line"]]
    assert all(s in ranges for s in seen["squiggles"]), seen["squiggles"]

    # The Problems panel: the file's row, then each finding (errors first, then by line) with
    # its evidence rows; the panel shows as many rows as fit.
    rows = problem_rows("train_leaky.py", findings)
    assert seen["problems"] == rows[: len(seen["problems"])]
    assert f"{leak['message']}\ngradguard\nGG101\n[Ln 47, Col 29]" in seen["problems"]
    assert seen["problems"][0] == f"train_leaky.py\n{len(findings)}"  # every finding of the file, info too (GG901)

    # The hover: the diagnostic with its evidence, then the rule in a line and one link to its page
    # (not the whole page), which opens rendered in the Markdown preview, then the fixes.
    assert seen["hover"].startswith(
        f"{leak['message']}gradguard(GG101)\n"
        "train_leaky.py(44, 16): the graph is created here\n"
        "train_leaky.py(45, 9): backward runs here\n\n"
        "GG101 graph-kept-across-iterations (error / warning): A value with an autograd graph is stored past the "
        "loop iteration. GG101 rule page"
    ), seen["hover"]
    assert "What it does" not in seen["hover"]
    # One link to the page (the diagnostic's code is plain text: its link would open the Markdown
    # source); the others go to the evidence, then VS Code's own actions.
    assert seen["hoverLinks"] == [
        "train_leaky.py(44, 16): ", "train_leaky.py(45, 9): ", "GG101 rule page", "View Problem (Alt+F8)", "Quick Fix... (Ctrl+.)",
    ]
    # ... and the fixes, as the quick-fix menu names them (code spans render without backticks).
    fixes = "; or ".join(x["title"] + ("" if x["safety"] == "safe" else " (unsafe)") for x in leak["fixes"])
    assert f"GG101 rule page\n\nFix: {fixes.replace('`', '')}" in seen["hover"], seen["hover"]
    assert seen["rulePreviewTab"].startswith("Preview GG101.md"), seen["rulePreviewTab"]
    assert seen["rulePreview"] == "GG101 graph-kept-across-iterations"  # rendered: the page's heading

    # A hover on a call names torch's public API, never torch._C internals.
    assert "resolves to torch.tensor" in seen["callHover"], seen["callHover"]
    assert "_C" not in seen["callHover"] and "_VariableFunctions" not in seen["callHover"]

    # Ctrl+. lists the finding's fixes (safe one first) and the suppression.
    # An unsafe fix says so in its title (fix-all never applies one).
    titles = [x["title"] + ("" if x["safety"] == "safe" else " (unsafe)") for x in leak["fixes"]]
    assert seen["quickFixes"] == ["Quick Fix", *titles, "Ignore GG101 on this line"]
    assert seen["quickFixes"][1] == "Store `loss.detach()`"
    # Applying the first one changes exactly that range.
    assert seen["quickFixedText"] == apply_edits(train_text, leak["fixes"][0]["edits"])
    assert seen["quickFixedText"].splitlines()[46] == "        epoch_losses.append(loss.detach())  # for the loss curve"

    # "GradGuard: Fix All in File" and fix-all on save write what `gradguard check --fix` writes.
    assert seen["fixAllCommandText"] == cli_fix(tmp_path / "cli-fix-command", "train_leaky.py", seen["quickFixedText"])
    assert "    with torch.no_grad():\n        for images, labels in batches:" in seen["fixAllCommandText"]  # (GG103: the loop)
    assert seen["fixAllOnSaveText"] == cli_fix(tmp_path / "cli-fix-save", "rnn_leaky.py", rnn_text)
    assert seen["fixAllOnSaveText"] != rnn_text

    # `gradguard.ignore: ["GG3"]` written to the workspace settings reaches the running
    # server: the Problems panel keeps only the file's other finding.
    left = [f for f in cli_findings(tmp_path / "cli-fix-save" / "rnn_leaky.py") if not f["code"].startswith("GG3")]
    assert [f["code"] for f in left] == ["GG202", "GG501", "GG501"]  # no safe fix for any (the 2nd GG501: types)
    assert seen["problemsAfterIgnore"] == problem_rows("rnn_leaky.py", left)

    # A Jupyter notebook's code cells are analysed as one program; the finding lands in the last
    # cell, and its message numbers cells as VS Code does (Markdown cells count): "Cell 4 of 4".
    assert seen["notebookProblems"][:3] == [
        "train.ipynb\n1",
        "`loss` carries an autograd graph (from `criterion(model(x), y)` on line 2 of cell 4) that is never"
        " back-propagated; storing it in `history` keeps every saved activation alive across iterations"
        "\ngradguard\nGG101\n[Ln 3, Col 20]",
        "train.ipynb\n[Ln 2, Col 12]\n:\nthe graph is created here",
    ]
    assert seen["notebookCellIndicator"] == "Cell 4 of 4"

    # The language status item: state, whether the type layer is on (the manifest's default), interpreter.
    assert seen["languageStatus"] == f"GradGuard: running · types on\n{sys.executable}\nShow Output"


def problem_rows(name: str, findings: list[dict]) -> list[str]:
    """The Problems panel's rows for one file: its header, then each finding (errors first,
    then by position) followed by its evidence."""
    rows = [f"{name}\n{len(findings)}"]
    for f in sorted(findings, key=lambda f: (SEVERITY_ORDER[f["severity"]], f["line"], f["column"])):
        rows.append(f"{f['message']}\ngradguard\n{f['code']}\n[Ln {f['line']}, Col {f['column']}]")
        rows += [f"{name}\n[Ln {r['line']}, Col {r['column']}]\n:\n{r['message']}" for r in f["related"]]
    return rows


def cli_fix(where: Path, name: str, text: str) -> str:
    where.mkdir()
    shutil.copy(EXAMPLES / "gradguard.toml", where)  # the workspace's configuration (GG501 selected)
    (where / name).write_text(text)
    subprocess.run([sys.executable, "-m", "gradguard", "check", "--fix", str(where / name)], capture_output=True, check=False)
    return (where / name).read_text()


@pytest.fixture
def bare_venv(tmp_path) -> Path:
    """A fresh virtual environment without GradGuard."""
    venv = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import gradguard"], capture_output=True).returncode == 1
    return python


def test_vscode_offers_to_install_gradguard_into_an_environment_of_its_own(code_server, bare_venv, tmp_path):
    workspace = make_workspace(tmp_path, str(bare_venv))
    server = code_server(workspace)
    seen = run_scenario("install.mjs", server)
    own = server["profile"] / "User" / "globalStorage" / "gradguard.gradguard" / "env"
    assert seen["notification"] == (
        f"GradGuard is not installed in {bare_venv}. Install it in an environment of its own ({own}, made with this "
        "interpreter; dependencies from the package index)? Your interpreter stays as it is."
    )
    assert seen["buttons"] == ["Install GradGuard", "Install into this interpreter"]
    # The .vsix's own wheel went into a venv under the extension's storage, made with the selected
    # interpreter; the server runs there and the squiggle appears.
    assert {"line": 47, "start": 29, "end": 33, "severity": "warning"} in seen["squiggles"]
    assert f"-m venv --clear {own}" in seen["log"] and "/bundled/gradguard-0.1.0-py3-none-any.whl" in seen["log"]
    assert "Successfully installed" in seen["log"]
    # The installed wheel carries no docs/: the hover links the rule's page written into the cache,
    # which opens rendered.
    assert "GG101 rule page" in seen["hover"] and seen["rulePreviewTab"].startswith("Preview GG101.md")
    assert seen["rulePreview"] == "GG101 graph-kept-across-iterations"
    assert (tmp_path / "cache" / "gradguard" / "docs" / "0.1.0" / "GG101.md").exists()
    assert f"GradGuard 0.1.0 in the extension's environment {own}; types read {bare_venv}" in seen["log"]
    version = subprocess.run([str(own / "bin" / "python"), "-c", "import gradguard; print(gradguard.__version__)"],
                             capture_output=True, text=True, check=True).stdout
    assert version == "0.1.0\n"
    # The user's interpreter was left alone.
    assert subprocess.run([str(bare_venv), "-c", "import gradguard"], capture_output=True).returncode == 1


def test_vscode_in_restricted_mode_waits_for_trust_then_starts_once(code_server, tmp_path):
    workspace = make_workspace(tmp_path, sys.executable)
    seen = run_scenario("trust.mjs", code_server(workspace, trusted=False))
    # Untrusted: the status item says GradGuard waits; no notification, no interpreter was run.
    assert seen["restrictedStatus"] == (
        "GradGuard: waiting for workspace trust\n"
        "GradGuard runs a Python interpreter: it starts once the folder is trusted\nShow Output"
    )
    assert seen["restrictedToasts"] == []
    # Trusted: the server runs with the workspace's interpreter setting, which now counts.
    assert {"line": 47, "start": 29, "end": 33, "severity": "warning"} in seen["squiggles"]
    assert seen["trustedStatus"] == f"GradGuard: running · types on\n{sys.executable}\nShow Output"
    assert not [t for t in seen["toasts"] if "GradGuard" in t], seen["toasts"]
    # Once, cleanly: one start (trust also reports the interpreter setting changed: no second one),
    # no error, no unreadable object in the log.
    log = seen["log"]
    starts = [line for line in log.splitlines() if ": starting with " in line]
    assert len(starts) == 1 and "Workspace trust granted: starting with " + sys.executable in starts[0], log
    assert "Restricted Mode: GradGuard waits for workspace trust" in log.split(starts[0])[0]
    assert "[object Object]" not in log and "[error]" not in log, log
