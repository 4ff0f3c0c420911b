"""Helpers for driving the GradGuard server as a subprocess over stdio, driven by pytest-lsp's client.

Tests wait on notifications (`wait_until` wakes on every publish / log /
message), never on sleeps.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable, Optional

import attrs
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, progress, register_lsp_features

SERVER = [sys.executable, "-m", "gradguard.lsp"]
# Only GG101 by default: rules added later must not change these tests' expectations.
OPTIONS = {"select": ["GG101"], "debounceMs": 0}
TIMEOUT_S = 30


class Client(LanguageClient):
    """Records every publish, log and message, and wakes `wait_until` on each."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.event = asyncio.Event()
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.registrations: list[types.Registration] = []

    def notify(self) -> None:
        self.event.set()

    async def wait_until(self, predicate: Callable[[], Any], what: str = "condition") -> Any:
        try:
            async with asyncio.timeout(TIMEOUT_S):
                while not (result := predicate()):
                    self.event.clear()
                    await self.event.wait()
                return result
        except TimeoutError:
            raise AssertionError(
                f"timed out waiting for {what}; published: {[(p.uri.rsplit('/', 1)[-1], p.version) for p in self.published]}"
                f"; logs: {[m.message for m in self.log_messages]}"
            ) from None

    # ------------------------------------------------------------ documents
    def open(self, uri: str, text: str, version: int = 1, language: str = "python") -> None:
        self.texts[uri], self.versions[uri] = text, version
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text))
        )

    def replace(self, uri: str, text: str) -> int:
        """Send the whole new text as one change; returns the new version."""
        self.versions[uri] += 1
        self.texts[uri] = text
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                [types.TextDocumentContentChangeWholeDocument(text)],
            )
        )
        return self.versions[uri]

    async def diagnostics_for(self, uri: str, version: Optional[int] = None) -> list[types.Diagnostic]:
        """Wait for the publish of `version` (default: the current one) and return it."""
        version = self.versions[uri] if version is None else version
        found = await self.wait_until(
            lambda: next((p for p in reversed(self.published) if p.uri == uri and p.version == version), None),
            f"diagnostics of {uri} v{version}",
        )
        return list(found.diagnostics)

    def publishes(self, uri: str) -> list[types.PublishDiagnosticsParams]:
        return [p for p in self.published if p.uri == uri]


def _record_publish(client: Client, params: types.PublishDiagnosticsParams) -> None:
    params.diagnostics = list(params.diagnostics)  # received as a tuple
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)
    client.notify()


def _record_log(client: Client, params: types.LogMessageParams) -> None:
    client.log_messages.append(params)
    client.notify()


def _record_message(client: Client, params: types.ShowMessageParams) -> None:
    client.messages.append(params)
    client.notify()


def _record_progress(client: Client, params: types.ProgressParams) -> None:
    progress(client, params)
    client.notify()


def _record_registration(client: Client, params: types.RegistrationParams) -> None:
    client.registrations += params.registrations
    client.notify()


def make_client() -> Client:
    client = Client(converter_factory=default_converter)
    features = {
        **DEFAULT_CLIENT_FEATURES,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record_publish,
        types.WINDOW_LOG_MESSAGE: _record_log,
        types.WINDOW_SHOW_MESSAGE: _record_message,
        types.PROGRESS: _record_progress,
        types.CLIENT_REGISTER_CAPABILITY: _record_registration,
    }
    register_lsp_features(client, features)
    return client


def capabilities(
    *, encodings: Optional[list[str]] = None, notebooks: bool = False, configuration: bool = True
) -> types.ClientCapabilities:
    """VS Code's capabilities, with the position encodings and notebook support a test needs."""
    caps = client_capabilities("visual-studio-code")
    caps.workspace.configuration = configuration
    if encodings is not None:
        caps.general = attrs.evolve(caps.general, position_encodings=encodings)
    if notebooks:
        caps.notebook_document = types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities()
        )
    return caps


async def initialize(
    client: Client,
    *,
    options: Any = OPTIONS,
    configuration: Any = None,
    encodings: Optional[list[str]] = None,
    notebooks: bool = False,
    configurable: bool = True,
    root: Optional[Path] = None,
) -> types.InitializeResult:
    """initialize + initialized; `configuration` is what the client answers for section `gradguard`."""
    if configuration is not None:
        client.set_configuration(configuration, section="gradguard")
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(encodings=encodings, notebooks=notebooks, configuration=configurable),
            initialization_options=options,
            root_uri=root.as_uri() if root else None,
        )
    )


def server_config(env: Optional[dict[str, str]] = None) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=SERVER, client_factory=make_client, server_env={**os.environ, **env} if env else None
    )


def source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def uri_for(tmp_path: Path, name: str = "train.py") -> str:
    return (tmp_path / name).as_uri()


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to a text, as an editor does."""
    lines = text.split("\n")

    def offset(pos: types.Position) -> int:
        before = sum(len(line) + 1 for line in lines[: pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return before + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return before + len(line)

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_of(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    """The text edits a workspace edit makes to one document."""
    if edit.document_changes:
        return [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    return list((edit.changes or {}).get(uri, []))


def diag(range_: tuple[int, int, int, int]) -> types.Range:
    return types.Range(types.Position(range_[0], range_[1]), types.Position(range_[2], range_[3]))
