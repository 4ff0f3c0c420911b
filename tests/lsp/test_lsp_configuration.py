"""Settings from initializationOptions and workspace/configuration; bad keys are
named in a message, their defaults used, and the server keeps working."""

from __future__ import annotations

import pytest
from lsprotocol import types

from lsp_harness import Client, initialize, uri_for
from test_lsp_diagnostics import TRAIN

pytestmark = pytest.mark.asyncio

Severity = types.DiagnosticSeverity


def did_save(client: Client, uri: str) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


async def test_per_rule_severity_from_initialization_options(client: Client, tmp_path):
    await initialize(client, options={"select": ["GG101"], "severity": {"GG101": "info"}, "debounceMs": 0})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    assert [d.severity for d in await client.diagnostics_for(uri)] == [Severity.Information] * 2


async def test_nested_initialization_options(client: Client, tmp_path):
    await initialize(client, options={"gradguard": {"select": ["GG101"], "severity": {"GG101": "warning"}}})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    assert [d.severity for d in await client.diagnostics_for(uri)] == [Severity.Warning] * 2


async def test_workspace_configuration_overrides_initialization_options(client: Client, tmp_path):
    await initialize(client, configuration={"severity": {"GG101": "warning"}})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    assert [d.severity for d in await client.diagnostics_for(uri)] == [Severity.Warning] * 2
    assert client.messages == []


async def test_invalid_settings_are_named_and_defaults_used(client: Client, tmp_path):
    await initialize(
        client,
        configuration={"copyOrder": "sideways", "debounceMs": "fast", "bogus": 1, "severity": {"GG101": "loud"}},
    )
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    (message,) = await client.wait_until(lambda: client.messages, "the settings message")
    assert message.type == types.MessageType.Warning
    assert message.message == (
        "GradGuard settings: "
        "invalid setting `gradguard.debounceMs`: expected a number of milliseconds from 0 to 60000, got 'fast'; "
        "using the default; "
        "invalid setting `gradguard.copyOrder`: expected one of 'clone-detach', 'detach-clone', got 'sideways'; "
        "using the default; "
        "unknown setting `gradguard.bogus` (known: enable, debounceMs, types, interpreter, project, select, ignore, severity, strict, copyOrder); "
        "invalid setting `gradguard.severity`: GG101: expected one of error, warning, info, got 'loud'; "
        "using the default"
    )
    # The valid keys (select GG101 from initializationOptions) still apply; the server works.
    assert [d.severity for d in await client.diagnostics_for(uri)] == [Severity.Error, Severity.Warning]


async def test_unknown_rule_codes_are_reported(client: Client, tmp_path):
    await initialize(client, options={"select": ["GG101"], "ignore": ["GG999"], "debounceMs": 0})
    (message,) = await client.wait_until(lambda: client.messages, "the settings message")
    assert "invalid setting `gradguard.ignore`: GG999 matches no rule" in message.message


async def test_settings_that_are_not_an_object(client: Client, tmp_path):
    await initialize(client, options=None, configuration=["GG101"])
    (message,) = await client.wait_until(lambda: client.messages, "the settings message")
    assert message.message == "GradGuard settings: `gradguard` settings must be an object, got ['GG101']; using the defaults"


async def test_did_change_configuration_republishes(client: Client, tmp_path):
    await initialize(client, configuration={})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    assert len(await client.diagnostics_for(uri)) == 2
    client.set_configuration({"ignore": ["GG101"]}, section="gradguard")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await client.wait_until(lambda: len(client.publishes(uri)) == 2, "the re-publish")
    assert client.publishes(uri)[1].diagnostics == []
    assert client.publishes(uri)[1].version == 1


async def test_pushed_configuration_without_workspace_configuration(client: Client, tmp_path):
    await initialize(client, configurable=False)
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    assert len(await client.diagnostics_for(uri)) == 2
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"gradguard": {"select": ["GG101"], "enable": False}})
    )
    await client.wait_until(lambda: len(client.publishes(uri)) == 2, "the clearing publish")
    assert client.publishes(uri)[1].diagnostics == []


async def test_debounce_ms_delays_analysis_until_save(client: Client, tmp_path):
    await initialize(client, options={"select": ["GG101"], "debounceMs": 60000})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)  # open and save analyse at once
    await client.diagnostics_for(uri)
    version = client.replace(uri, TRAIN.replace("val_losses.append(loss)", "val_losses.append(loss.item())"))
    did_save(client, uri)
    assert len(await client.diagnostics_for(uri, version)) == 1
    assert [p.version for p in client.publishes(uri)] == [1, version]


async def test_disabled_publishes_nothing(client: Client, tmp_path):
    await initialize(client, options={"enable": False})
    uri = uri_for(tmp_path)
    client.open(uri, TRAIN)
    assert await client.diagnostics_for(uri) == []


async def test_what_vs_code_sends_when_nothing_is_set_gives_the_manifest_defaults(client: Client, tmp_path):
    # client/src/common/settings.ts sends this when the user set nothing (its unit test pins it):
    # null for every key the project may decide, the manifest's default for the type layer.
    import json
    from pathlib import Path

    sent = {"enable": None, "debounceMs": None, "select": None, "ignore": None, "severity": None, "strict": None,
            "copyOrder": None, "types": True, "project": None}
    await initialize(client, options=sent)
    logged = await client.wait_until(
        lambda: [m for m in client.log_messages if m.message.startswith("GradGuard settings: ")], "the settings log")
    effective = json.loads(logged[0].message.removeprefix("GradGuard settings: "))
    manifest = json.loads((Path(__file__).resolve().parents[2] / "package.json").read_text(encoding="utf-8"))
    defaults = {key.removeprefix("gradguard."): spec["default"]
                for key, spec in manifest["contributes"]["configuration"]["properties"].items()
                if key.removeprefix("gradguard.") in effective}
    assert set(defaults) == set(effective)
    assert effective == defaults
