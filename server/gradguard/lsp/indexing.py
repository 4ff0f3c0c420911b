"""Keeping the workspace's projects (projects.py) up to date, in the background.

At start every Python file of the workspace folders is analysed for its calls, one file per
job on the analysis thread (an edit's analysis waits behind one file at most), with
`$/progress` where the client shows it. Then an open document's analysis learns what it
calls from its own text; a file changed on disk and not open is read again when the client
says so (`workspace/didChangeWatchedFiles`). When what a file says of the others changes,
every file's `outside` is recomputed and the open documents whose `outside` changed are
analysed again at once (the edited document has published first; its own debounce was the
wait). A newer edit of any document cancels those runs and its own pending learning: they
are owed, and run again, if what they are told still changed, once that edit's analysis has
learned what it says (the edited document never waits behind another file's re-analysis).
"""

from __future__ import annotations

import asyncio
import logging
import os
import traceback
from typing import Optional

from lsprotocol import types
from pygls.uris import to_fs_path

from gradguard import project as text_index
from gradguard.engine import Incremental, mentions_torch
from gradguard.lsp.documents import Snapshot
from gradguard.lsp.projects import Entry, Project, Projects, digest, entry, examine, outside

log = logging.getLogger(__name__)

PROGRESS_TOKEN = "gradguard/index"
WATCH_ID = "gradguard/python-files"
# A told document's analysis for its own calls starts this long after its publish: an edit sent
# at once (an editor that waits for the diagnostics, the next keystroke already typed) cancels it
# before it holds the analysis thread, which that edit's own analysis would wait behind.
LEARN_GRACE_S = 0.05


class Indexer:
    def __init__(self, session):
        self.session = session
        self.projects: Optional[Projects] = None  # None: the `project` setting is off
        self._indexing: Optional[asyncio.Task] = None
        self._stale: set[str] = set()  # files changed on disk, to read again
        self._reading: Optional[asyncio.Task] = None
        self._watching = False
        self._jobs: set[asyncio.Task] = set()  # kept: the loop holds only weak references to tasks
        self._learning: dict[str, asyncio.Task] = {}  # document -> its pending analysis for its own calls
        self._owed: set[str] = set()  # documents whose re-analysis for the others' calls a newer edit cancelled

    # ---------------------------------------------------------------- settings
    def configure(self, on: bool) -> None:
        """Index the workspace when the setting turns on; forget it when it turns off."""
        if on and self.projects is None:
            self.projects = Projects(self._folders())
            self._indexing = asyncio.ensure_future(self._index(self.projects))
        elif not on and self.projects is not None:
            self.projects = None
            for task in (self._indexing, self._reading):
                if task is not None:
                    task.cancel()
            self._stale.clear()

    def told_of(self, path: Optional[str]) -> tuple[dict, dict]:
        """For a document's file: how the other files call it (symbol -> Outside), what the functions
        it calls of other files build or keep (target -> Keeps | Builds)."""
        return self.projects.told_of(path) if self.projects is not None and path is not None else ({}, {})

    def torch_code(self, path: Optional[str]) -> bool:
        """Is a document's file analysed as torch code though it never mentions torch (Settings.torch_code)?"""
        return self.projects is not None and path is not None and self.projects.torch_code(path)

    def neighbours_of(self, path: Optional[str], text: Optional[str] = None) -> tuple:
        """`Settings.neighbours` for a document's file: the classes of other modules its `text` works with."""
        return self.projects.neighbours_of(path, text) if self.projects is not None and path is not None else ()

    def wants_calls(self, snapshot: Snapshot, told: tuple) -> bool:
        """The document's own analysis can give its calls: a project file told nothing."""
        return not told and self._project_file(snapshot) is not None

    # ---------------------------------------------------------------- open documents
    def learn(self, snapshot: Snapshot, calls: Optional[list], summaries: Optional[dict], incremental: Incremental) -> None:
        """What an open document, just analysed and published, now calls of the others: from its
        analysis (`calls`) or, when other files' calls shaped that one, from an analysis of its
        own for its calls alone (no rule runs: ~40% of a full analysis), on the analysis thread
        after LEARN_GRACE_S; a newer edit of the document cancels it (see `edited`)."""
        projects, path = self.projects, self._project_file(snapshot)
        if path is None or projects.known(path, digest(snapshot.source)):
            self.pay()
        elif calls is not None and not _torchless_caller(snapshot.source):
            self._learned(projects, path, entry(path, snapshot.source, calls, summaries), snapshot)
        else:
            self._forget_learning(snapshot.key)
            task = self._learning[snapshot.key] = asyncio.ensure_future(self._learn(projects, path, snapshot, incremental))
            task.add_done_callback(lambda done: self._learning.pop(snapshot.key, None) if self._learning.get(snapshot.key)
                                   is done else None)

    async def _learn(self, projects: Projects, path: str, snapshot: Snapshot, incremental: Incremental) -> None:
        await asyncio.sleep(LEARN_GRACE_S)
        settings = self.session.file_settings(path)
        new = await self.session.worker.run(examine, path, snapshot.source, settings, incremental)
        if projects is self.projects and self.session.current_version(snapshot.key) == snapshot.version:
            self._learned(projects, path, new, snapshot)
        # (else edited since, or closed: that edit's run, or the close, learns and pays what is owed)

    def _learned(self, projects: Projects, path: str, new: Entry, snapshot: Snapshot) -> None:
        """Keep a document's new entry; its project's `outside` recomputed if what it says of the
        other files changed (said in the log: a dependent not re-analysed is not forgotten)."""
        changed = projects.learn(path, new)
        shown = os.path.relpath(path, projects.project(path).root)
        self.session.log(types.MessageType.Log, f"GradGuard: {shown} v{snapshot.version}: what it says of the other files "
                         + ("changed" if changed is not None else "is unchanged"))
        self._settle(changed)

    def edited(self, key: str) -> None:
        """A document is analysed again for its own sake (an edit, an open, a save): its pending
        learning is cancelled, and so are the runs other documents had for what it said before -
        owed until what it says now is learned."""
        self._forget_learning(key)
        for other in self.session.following - {key}:
            self.session.cancel(other)
            self._owed.add(other)

    def pay(self) -> None:
        """Run the owed documents again, if what they are told is not what their last analysis had."""
        owed, self._owed = self._owed, set()
        for key in owed:
            if key in self.session.open_texts:
                self.session.schedule(key, if_changed=True)

    def _forget_learning(self, key: str) -> None:
        task = self._learning.pop(key, None)
        if task is not None:
            task.cancel()

    def closed(self, uri: str) -> None:
        """A closed buffer: the file on disk is the truth again."""
        self._forget_learning(uri)
        self.files_changed([uri])
        self.pay()

    # ---------------------------------------------------------------- the disk
    def files_changed(self, uris: list[str]) -> None:
        """Read these files again, after the debounce delay (one task reads every file changed meanwhile)."""
        if self.projects is None:
            return
        self._stale.update(os.path.abspath(to_fs_path(u)) for u in uris if u.startswith("file:") and u.endswith(".py"))
        if self._stale and (self._reading is None or self._reading.done()):
            self._reading = asyncio.ensure_future(self._read_stale(self.projects))

    async def _read_stale(self, projects: Projects) -> None:
        await asyncio.sleep(self.session.options.debounce_ms / 1000)
        touched = set()
        while self._stale:
            path = self._stale.pop()
            if self._buffer(path) is None and (path in self._entries(projects, path) or projects.admits(path)):
                touched.add(await self._read(projects, path))
        for project in touched:
            self._settle(project)

    def _entries(self, projects: Projects, path: str) -> dict:
        found = projects.project(path)
        return found.entries if found is not None else {}

    async def _read(self, projects: Projects, path: str) -> Optional[Project]:
        """A file's entry from its open buffer, else from the disk (analysed only if its text changed);
        its project when what it says of the others changed."""
        text = self._buffer(path)
        if text is None:
            text = await asyncio.to_thread(_disk_text, path)
            if text is None:
                return projects.forget(path)
        if projects.known(path, digest(text)):
            return None
        new = await self.session.worker.run(examine, path, text, self.session.file_settings(path))
        now = self._buffer(path)
        if now is not None and digest(now) != new.digest:
            return None  # edited meanwhile: the document's own analysis tells
        return projects.learn(path, new)

    # ---------------------------------------------------------------- start
    async def _index(self, projects: Projects) -> None:
        try:
            await self.session.configured.wait()
            if not projects.folders:  # no workspace folder (a file opened alone): no project to index
                projects.ready = True
                return
            await self._watch()
            members = await asyncio.to_thread(projects.members)
            progress = await self._progress(len(members))
            for done, (_, path) in enumerate(members, 1):
                await self._read(projects, path)
                progress(done)
            changed: set = set()
            for project in list(projects.by_root.values()):
                changed |= project.settled(await self.session.worker.run(outside, project.root, dict(project.entries)))
            projects.ready = True
            progress(None)
            roots = ", ".join(sorted(projects.by_root)) or "no Python files"
            self.session.log(types.MessageType.Log, f"GradGuard indexed {len(members)} Python files (projects: {roots})")
            self._reschedule(changed)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - each file is then analysed alone, as with the setting off
            log.exception("indexing failed")
            self.session.log(types.MessageType.Error, "GradGuard could not index the workspace; files are analysed alone")

    async def _progress(self, total: int):
        """A function reporting `done` of `total` files (None: the end); silent where the client
        shows no progress."""
        if not total or not self.session.client_has("window.work_done_progress"):
            return lambda done: None
        progress = self.session.server.work_done_progress
        try:
            await progress.create_async(PROGRESS_TOKEN)
        except Exception as e:  # noqa: BLE001 - no progress shown, the indexing goes on
            self.session.log(types.MessageType.Log, f"GradGuard: no progress shown ({e!r})")
            return lambda done: None
        progress.begin(PROGRESS_TOKEN, types.WorkDoneProgressBegin(title="GradGuard: indexing", percentage=0,
                                                                   message=f"0/{total} files"))
        shown = [0]

        def report(done: Optional[int]) -> None:
            if done is None:
                progress.end(PROGRESS_TOKEN, types.WorkDoneProgressEnd(message=f"{total} files"))
                progress.tokens.pop(PROGRESS_TOKEN, None)
            elif (percent := done * 100 // total) > shown[0]:  # at most 100 reports
                shown[0] = percent
                progress.report(PROGRESS_TOKEN, types.WorkDoneProgressReport(percentage=percent, message=f"{done}/{total} files"))

        return report

    async def _watch(self) -> None:
        """Ask the client to tell of Python files changed on disk (once; where it lets a server ask)."""
        if self._watching or not self.session.client_has("workspace.did_change_watched_files.dynamic_registration"):
            return
        self._watching = True
        watcher = types.FileSystemWatcher(glob_pattern="**/*.py")
        registration = types.Registration(
            id=WATCH_ID,
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher]),
        )
        try:
            await self.session.server.client_register_capability_async(types.RegistrationParams([registration]))
        except Exception as e:  # noqa: BLE001 - files changed on disk are then read when opened
            self.session.log(types.MessageType.Log, f"GradGuard: the client does not watch files for it ({e!r})")

    # ---------------------------------------------------------------- helpers
    def _settle(self, project: Optional[Project]) -> None:
        """Recompute the project's `outside` in a task of its own (a newer edit cancels the
        document's run, never this), and re-analyse the open documents it changes."""
        if project is not None and self.projects is not None and self.projects.ready:
            self._keep(self._settle_now(self.projects, project))
        else:
            self.pay()

    def _keep(self, job) -> None:
        task = asyncio.ensure_future(job)
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)

    async def _settle_now(self, projects: Projects, project: Project) -> None:
        try:
            found = await self.session.worker.run(outside, project.root, dict(project.entries))
        except Exception:  # noqa: BLE001 - the files keep the `outside` they had
            log.exception("project-wide analysis failed")
            self.session.log(types.MessageType.Error, f"GradGuard: the project's calls could not be gathered:\n{traceback.format_exc()}")
            found = None
        if found is not None and projects is self.projects:  # FIFO on the one thread: the last computed is the newest
            self._reschedule(project.settled(found))
        self.pay()

    def _reschedule(self, paths: set[str]) -> None:
        """Analyse again, at once, the open documents whose `outside` changed."""
        for uri in list(self.session.open_texts):
            if uri.startswith("file:") and os.path.abspath(to_fs_path(uri)) in paths:
                self.session.schedule(uri, if_changed=True)

    def _project_file(self, snapshot: Snapshot) -> Optional[str]:
        path = snapshot.path
        ok = self.projects is not None and path is not None and snapshot.parts[0].uri == snapshot.key
        return os.path.abspath(path) if ok and self.projects.project(path) is not None else None

    def _buffer(self, path: str) -> Optional[str]:
        """An open document's text, if the file is open."""
        for uri in self.session.open_texts:
            if uri.startswith("file:") and os.path.abspath(to_fs_path(uri)) == path:
                return self.session.server.workspace.get_text_document(uri).source
        return None

    def _folders(self) -> list[str]:
        ws = self.session.server.workspace
        folders = [to_fs_path(f.uri) for f in ws.folders.values() if f.uri.startswith("file:")]
        return folders or ([ws.root_path] if ws.root_path else [])


def _disk_text(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def _torchless_caller(text: str) -> bool:
    """A text that never mentions torch but calls a name it imports: its own analysis was skipped,
    so its calls come from `examine` (what it passes the project's torch code)."""
    return not mentions_torch(text) and text_index.calls_imported(text)
