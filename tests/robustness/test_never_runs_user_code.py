"""GradGuard reads code, never runs it: a workspace whose every module writes a
marker file when imported or run is checked, fixed, opened, hovered and fixed in
the editor, with the type layer on; no marker ever appears.

It exercises whatever reads the workspace (the engine today; the jedi type layer
once `types: true` turns it on, and the CLI's `--types` once that flag exists)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
from lsp_harness import Client, apply, edits_of, initialize, server_config  # noqa: E402

SIDE_EFFECT = "import pathlib; pathlib.Path({marker!r}).joinpath({name!r}).write_text('ran')\n"

MODULES = {
    "train.py": """
        import torch
        from torch import nn

        from helpers import make_model
        import data

        model = nn.Linear(3, 1)
        spare = make_model()
        losses = []
        for x in data.batches():
            loss = model(x).sum()
            loss.backward()
            losses.append(loss)
        frozen = model(x).detach()
        """,
    "helpers.py": """
        from torch import nn

        def make_model():
            return nn.Linear(3, 1)
        """,
    "data.py": """
        import torch

        def batches():
            return [torch.randn(2, 3)]
        """,
    "pkg/__init__.py": "",
    "pkg/torch_utils.py": "import torch\n",
    "conftest.py": "",
    "setup.py": "",
    "sitecustomize.py": "",
    "torch.py": "",  # a module shadowing torch in the workspace: jedi must not import it either
}


@pytest.fixture
def workspace(tmp_path):
    root, marker = tmp_path / "ws", tmp_path / "markers"
    marker.mkdir()
    for name, body in MODULES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SIDE_EFFECT.format(marker=str(marker), name=name.replace("/", ".")) + textwrap.dedent(body))
    return root, marker


def gradguard(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gradguard", *args], cwd=root, capture_output=True, text=True, timeout=300
    )


def test_the_cli_never_imports_the_checked_code(workspace):
    root, marker = workspace
    types_flag = ["--types"] if "--types" in gradguard(root, "check", "--help").stdout else []
    assert gradguard(root, "check", *types_flag, ".").returncode == 1  # the finding in train.py
    fixed = gradguard(root, "check", *types_flag, "--fix", ".")
    assert fixed.returncode == 0, fixed.stderr
    assert "losses.append(loss.detach())" in (root / "train.py").read_text()
    assert sorted(p.name for p in marker.iterdir()) == []
    # The control: importing a module does leave its marker.
    subprocess.run([sys.executable, "-c", "import pkg"], cwd=root, check=True)
    assert sorted(p.name for p in marker.iterdir()) == ["pkg.__init__.py"]


@pytest_lsp.fixture(config=server_config())
async def editor(lsp_client: Client):
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_server_never_imports_the_open_code(editor: Client, workspace):
    root, marker = workspace
    await initialize(editor, options={"types": True, "debounceMs": 0}, root=root)
    uri = (root / "train.py").as_uri()
    text = (root / "train.py").read_text()
    editor.open(uri, text)
    (finding,) = [d for d in await editor.diagnostics_for(uri) if d.code == "GG101"]
    for needle in ("detach", "make_model", "batches", "backward", "nn"):
        line = next(n for n, t in enumerate(text.split("\n")) if needle in t and not t.startswith("import pathlib"))
        await editor.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, text.split("\n")[line].index(needle)))
        )
    actions = await editor.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), finding.range, types.CodeActionContext([finding]))
    )
    fix = next(a for a in actions if a.title.startswith("Store"))
    new_text = apply(text, edits_of(fix.edit, uri))
    version = editor.replace(uri, new_text)
    assert [d for d in await editor.diagnostics_for(uri, version) if d.code == "GG101"] == []
    (root / "train.py").write_text(new_text)
    editor.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    for other in ("helpers.py", "data.py", "pkg/torch_utils.py"):
        path = root / other
        editor.open(path.as_uri(), path.read_text())
        await editor.diagnostics_for(path.as_uri())
    assert sorted(p.name for p in marker.iterdir()) == []
