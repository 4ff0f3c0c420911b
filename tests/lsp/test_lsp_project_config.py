"""The project's configuration file (pyproject.toml / gradguard.toml) in the editor:
found from each document's path, overridden by the editor's settings; a bad
file is named in one message, the defaults are used, and the server keeps working."""

from __future__ import annotations

import pytest
from lsprotocol import types

from lsp_harness import Client, initialize, uri_for
from test_lsp_diagnostics import TRAIN

pytestmark = pytest.mark.asyncio

Severity = types.DiagnosticSeverity


async def test_pyproject_settings_apply_to_documents_below_it(client: Client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nselect = ["GG101"]\nseverity = { GG101 = "info" }\n')
    (tmp_path / "pkg").mkdir()
    await initialize(client)
    uri = uri_for(tmp_path / "pkg")
    client.open(uri, TRAIN)
    found = await client.diagnostics_for(uri)
    assert [(d.code, d.severity) for d in found] == [("GG101", Severity.Information)] * 2
    assert client.messages == []


async def test_editor_settings_override_the_project_file(client: Client, tmp_path):
    (tmp_path / "gradguard.toml").write_text('severity = { GG101 = "info" }\n')
    await initialize(client, configuration={"select": ["GG101"], "severity": {"GG101": "warning"}})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    assert [d.severity for d in await client.diagnostics_for(uri)] == [Severity.Warning] * 2


async def test_per_file_ignores_and_exclude(client: Client, tmp_path):
    (tmp_path / "gradguard.toml").write_text(
        'select = ["GG101"]\nexclude = ["generated"]\n[per-file-ignores]\n"eval_*.py" = ["GG101"]\n'
    )
    (tmp_path / "generated").mkdir()
    await initialize(client)
    train, skipped, excluded = uri_for(tmp_path), uri_for(tmp_path, "eval_loop.py"), uri_for(tmp_path / "generated")
    for uri in (train, skipped, excluded):
        client.open(uri, TRAIN)
    assert [d.code for d in await client.diagnostics_for(train)] == ["GG101", "GG101"]
    assert await client.diagnostics_for(skipped) == []
    assert await client.diagnostics_for(excluded) == []


async def test_a_bad_project_file_is_named_once_and_defaults_used(client: Client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nselect = ["GG101"]\nsevrity = { GG101 = "info" }\n')
    await initialize(client, options={"debounceMs": 0})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    found = await client.diagnostics_for(uri)
    assert sorted({d.code for d in found}) == ["GG101", "GG103"]  # the defaults: every rule
    (message,) = client.messages
    assert message.type == types.MessageType.Warning
    assert message.message == (
        f"GradGuard configuration: {tmp_path / 'pyproject.toml'}: `tool.gradguard.sevrity`: unknown setting "
        "(allowed: select, extend-select, ignore, per-file-ignores, include, extend-include, exclude, extend-exclude, "
        "severity, strict, copy-order, types, python); using the defaults"
    )
    version = client.replace(uri, TRAIN + "\n")
    assert sorted({d.code for d in await client.diagnostics_for(uri, version)}) == ["GG101", "GG103"]
    assert len(client.messages) == 1  # not again on every change
