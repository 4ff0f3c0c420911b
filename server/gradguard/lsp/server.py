"""The GradGuard language server: LSP messages in, engine calls out.

Handlers stay thin: scheduling and state live in `session`, the translation of
findings in `diagnostics`, code actions in `actions`, hover texts in `hover`.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, Optional

from lsprotocol import types
from pygls.exceptions import FeatureNotificationError, JsonRpcException, JsonRpcInvalidParams, JsonRpcParseError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from gradguard import __version__
from gradguard.findings import Position, Range
from gradguard.lsp import actions, hover, stdio
from gradguard.lsp.session import Session

# Every cell, Markdown ones too: the server analyses the Python code cells, and counts all
# cells as VS Code and the CLI do ("cell 3" is the notebook's third cell, whatever its kind).
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithNotebook(notebook="jupyter-notebook")],
    save=True,
)

_ANSWERED = object()  # a request already answered with an error while it was read


class Protocol(LanguageServerProtocol):
    """Two mends of pygls 2.1:
    - JSON-RPC's error answers where it only shows a message: a request whose params
      do not fit its method gets InvalidParams (else the client waits forever);
    - it files the future of every notification handler (each `didChange`, under a
      fresh uuid) in `_request_futures` and only ever removes those of requests: one
      future per keystroke, +37% RSS over 10,000 edits (bench/soak.py)."""

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        def done(future):
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def structure_message(self, data: dict) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "method" not in data or "id" not in data:
                raise  # a notification: nothing to answer (reported in report_server_error)
            msg_id = data["id"]
            valid_id = isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool)
            self._send_response(msg_id if valid_id else None, None, error.to_response_error())
            return _ANSWERED

    def handle_message(self, message) -> None:
        if message is not _ANSWERED:
            super().handle_message(message)


class Server(LanguageServer):
    def start_io(self, stdin=None, stdout=None) -> None:
        """Serve over stdio; a stdin pipe or socket is read on the event loop (see `stdio`)."""
        stdin, stdout = stdin or sys.stdin.buffer, stdout or sys.stdout.buffer
        if stdio.reads_on_loop(stdin, stdout):
            stdio.serve(self, stdin, stdout, logging.getLogger(__name__))
        else:
            super().start_io(stdin, stdout)

    def report_server_error(self, error: Exception, source) -> None:
        """A body that is not JSON gets ParseError (with the null id JSON-RPC asks for);
        a notification that does not fit its method or cannot be applied is ignored, as
        the protocol says, with a line in the log rather than a pop-up."""
        if isinstance(error, json.JSONDecodeError):
            parse_error = {"code": JsonRpcParseError.CODE, "message": f"{JsonRpcParseError.MESSAGE}: {error}"}
            self.protocol._send_data({"jsonrpc": "2.0", "id": None, "error": parse_error})
        elif isinstance(error, JsonRpcInvalidParams):
            self._log_ignored("a notification with invalid params")
        elif source is FeatureNotificationError:  # e.g. a change to a document never opened
            self._log_ignored(f"a notification it could not apply ({error})")
        else:
            super().report_server_error(error, source)

    def _log_ignored(self, what: str) -> None:
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=f"GradGuard ignored {what}"))


server = Server(
    "gradguard",
    __version__,
    text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
    notebook_document_sync=NOTEBOOK_SYNC,
    protocol_cls=Protocol,
)
session = Session(server)


# -------------------------------------------------------------------- lifecycle
@server.feature(types.INITIALIZE)
def initialize(ls: LanguageServer, params: types.InitializeParams) -> None:
    """Keep the initializationOptions until the client's configuration is read too."""
    session.initialization = params.initialization_options


@server.feature(types.INITIALIZED)
async def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
    """Read the configuration; analyses wait for it."""
    await session.load_configuration()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: LanguageServer, params: types.DidChangeConfigurationParams) -> None:
    """Re-read the settings and re-publish every open document."""
    if session.client_has("workspace.configuration"):
        await session.load_configuration()
    else:
        pushed = params.settings.get("gradguard") if isinstance(params.settings, dict) else None
        session.configure(session.initialization if pushed is None else pushed)
    session.schedule_all()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: LanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
    """Read the Python files changed on disk again (what they call of the others may have changed)."""
    session.indexer.files_changed([change.uri for change in params.changes])


# -------------------------------------------------------------------- text documents
@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """Analyse a newly opened document at once."""
    session.open_texts.add(params.text_document.uri)
    session.schedule(params.text_document.uri, now=True)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """Re-analyse after the debounce delay."""
    session.schedule(session.key_for(params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    """Re-analyse at once (asking the type layer everything again)."""
    session.saved(session.key_for(params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """Clear the document's diagnostics."""
    session.open_texts.discard(params.text_document.uri)
    session.close(params.text_document.uri)


# -------------------------------------------------------------------- notebooks
@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: LanguageServer, params: types.DidOpenNotebookDocumentParams) -> None:
    """Analyse the notebook's cells together at once."""
    session.schedule(params.notebook_document.uri, now=True)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: LanguageServer, params: types.DidChangeNotebookDocumentParams) -> None:
    """Re-analyse the whole notebook after the debounce delay."""
    session.schedule(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: LanguageServer, params: types.DidSaveNotebookDocumentParams) -> None:
    """Re-analyse at once (asking the type layer everything again)."""
    session.saved(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: LanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
    """Clear every cell's diagnostics."""
    session.close(params.notebook_document.uri)


# -------------------------------------------------------------------- features
@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL]),
)
async def code_action(ls: LanguageServer, params: types.CodeActionParams) -> Optional[list[types.CodeAction]]:
    """Quick fixes from the diagnostics' data; fix-all when asked for source actions."""
    if not session.options.enable:
        return None
    uri, only = params.text_document.uri, params.context.only
    changes = session.document_changes()
    result: list[types.CodeAction] = []
    if actions.wanted(types.CodeActionKind.QuickFix, only):
        for diagnostic in params.context.diagnostics:
            result += actions.quick_fixes(diagnostic, session.version_of, changes)
    if actions.wanted(actions.FIX_ALL, only):
        fix_all = actions.fix_all(await session.fix_all_edits(uri), changes)
        if fix_all is not None:
            result.append(fix_all)
    return result or None


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def on_hover(ls: LanguageServer, params: types.HoverParams) -> Optional[types.Hover]:
    """Facts about the call under the cursor, the receiver's state, and the findings' rules and fixes."""
    uri = params.text_document.uri
    located = session.locate(uri, params.position) if session.options.enable else None
    if located is None:
        return None
    snapshot, _, pos = located
    line = snapshot.program_line(pos.line)
    topic = hover.topic_at(line, pos.column, snapshot.source)
    settings = session.settings_for(snapshot)
    state = None
    if topic is not None:
        state = await session.receiver_state(uri, pos.line, topic.start)
    elif settings.outside or settings.imported:  # on any other name: what another file of the project says it is
        state = await session.receiver_state(uri, pos.line, pos.column, told=True)
    findings = [(str(d.code), actions.fix_titles(d)) for d in session.diagnostics_at(uri, params.position)]
    found = hover.describe(line, pos, topic, state, settings.copy_order, findings)
    if found is None:
        return None
    markdown, span = found
    rng = None
    if span is not None:
        _, rng = snapshot.place(Range(Position(pos.line, span[0]), Position(pos.line, span[1])))
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown), range=rng)


def _answered_before_cancelled(record: logging.LogRecord) -> bool:
    """A `$/cancelRequest` for a request already answered (the answer and the cancel crossed) is
    how LSP works, not a problem: pygls warns about it, and clients show server warnings as errors."""
    return not record.getMessage().startswith("Cancel notification for unknown message id")


def main() -> None:
    """Serve over stdio."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    logging.getLogger("pygls").setLevel(logging.WARNING)  # INFO logs every message
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_answered_before_cancelled)
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() anywhere must not corrupt the protocol stream
    server.start_io(sys.stdin.buffer, stdout)
