"""The workspace's projects as the server keeps them (gradguard/project in an editor).

Per Python file of a project: what it defines and imports (the text index) and the calls it
makes of the other files, each with its grad mode, from an analysis told nothing of its own
callers (as the CLI's first pass: what a file says of the others never depends on what they
say of it, so no edit can set two files re-analysing each other). Entries are kept by content
hash: a file whose text did not change is not analysed again. From them, each file's `outside`
(how the others call it, where they agree) - given to the engine with the file's settings.
An open buffer's text is the truth over the file on disk.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Iterable, Optional

from gradguard import cache
from gradguard import project as text_index
from gradguard.config import ConfigError, Resolver
from gradguard.discovery import discover, is_environment, skipped_file
from gradguard.engine import Incremental, analyze, mentions_torch
from gradguard.project.callers import callees_by_file, outside_by_file
from gradguard.project.index import Module, ProjectIndex, scan
from gradguard.project.neighbours import Shape, neighbours, shape
from gradguard.settings import Settings


def digest(text: str) -> str:
    return cache.content_hash(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Entry:
    """One file as the rest of its project sees it."""

    digest: str  # of the text it was read from
    module: Module  # what it defines, and imports by name
    calls: tuple  # engine.outside.Call: what it calls of the other files, with the grad mode of each
    unread: frozenset  # a file the engine does not analyse (no torch): every name it calls
    parsed: bool = True  # False: its text does not parse (a buffer mid-typing), so it says nothing
    summaries: tuple = ()  # (symbol, engine.outside.Keeps | Builds): what its classes keep, what builds a model
    shape: Shape = Shape()  # its classes' code, for the files that work with them (project/neighbours.py)
    # False: the text never mentions torch; its `calls` (of the names it imports) count only where one
    # leads to a module that does (project.torch_code_users), else its `unread`
    torch: bool = True

    def says(self) -> tuple:
        """What the other files' analyses depend on (not the hash)."""
        return self.module, self.calls, self.unread, self.summaries, self.shape, self.torch


def entry(path: str, text: str, calls: Optional[list], summaries: Optional[dict] = None) -> Entry:
    """The entry of a file from its text and the calls and summaries an analysis of it with
    `export_calls` and no `outside` found (calls None: the text does not parse)."""
    module = scan(os.path.abspath(path), text)
    told = tuple(sorted((summaries or {}).items()))
    if not mentions_torch(text):
        return Entry(digest(text), module, tuple(calls or ()), frozenset(text_index.called_names(text)),
                     parsed=calls is not None, summaries=told, shape=shape(text), torch=False)
    return Entry(digest(text), module, tuple(calls or ()), frozenset(), parsed=calls is not None, summaries=told,
                 shape=shape(text))


def examine(path: str, text: str, settings: Settings, incremental: Optional[Incremental] = None) -> Entry:
    """A file's entry, analysing it (on the analysis thread; `incremental`: an open document's).
    A file that never mentions torch is analysed only for what its classes keep (a meter). No
    rule runs: the calls and summaries are the walk's, what the rules find is not kept (the rules
    are ~60% of an analysis' time)."""
    calls: Optional[list] = []
    summaries: Optional[dict] = None
    alone = dataclasses.replace(settings, outside=(), imported=(), neighbours=(), select=())
    if mentions_torch(text):
        found = analyze(text, alone, incremental=incremental, export_calls=True)
        calls, summaries = (found.calls, found.summaries) if found.error is None else (None, None)
    elif text_index.calls_imported(text):  # no torch, but what it builds may go to the project's torch code
        found = analyze(text, dataclasses.replace(alone, torch_code=True), incremental=incremental, export_calls=True)
        calls, summaries = (found.calls, found.summaries) if found.error is None else (None, None)
    elif "class " in text:
        found = analyze(text, alone, summarize=True)
        summaries = found.summaries if found.error is None else None
    return entry(path, text, calls, summaries)


class Project:
    """One project root: its files' entries and the `outside` they give each file."""

    def __init__(self, root: str):
        self.root = root
        self.entries: dict[str, Entry] = {}  # absolute path -> Entry
        # absolute path -> ({symbol: engine.outside.Outside}, {target: engine.outside.Keeps | Builds | Returns},
        # Settings.neighbours, Settings.torch_code)
        self.outside: dict[str, tuple] = {}
        self._index: Optional[ProjectIndex] = None  # of the entries `outside` was computed from

    def settled(self, found: dict) -> set[str]:
        """Keep every file's new `outside` (from `outside`); the paths whose `outside` changed."""
        changed = {p for p in found.keys() | self.outside.keys() if found.get(p) != self.outside.get(p)}
        self.outside = found
        self._index = None
        return changed

    def neighbours(self, path: str, text: str) -> tuple:
        """`Settings.neighbours` for a file, of those its `outside` offers every class its text can tell
        anything by (project/neighbours.py's `relevant`, as `gradguard check` chooses them)."""
        if self._index is None:
            self._index = ProjectIndex(self.root, {p: e.module for p, e in self.entries.items()})
        if path not in self._index.modules:
            return ()
        return neighbours(self._index, path, text, lambda q: self.entries[q].shape if q in self.entries else None)


def outside(root: str, entries: dict[str, Entry]) -> dict[str, tuple]:
    """Every file's `outside` - how the others call it - and what the functions it calls of
    theirs build or keep, from the entries of its project (off the event loop: it reads every
    call of the project)."""
    index = ProjectIndex(root, {p: e.module for p, e in entries.items()})
    users = text_index.torch_code_users(index, lambda p: p in entries and entries[p].torch, lambda p: entries[p].unread)
    unread = frozenset().union(*(e.unread for p, e in entries.items() if p not in users))
    calls = {p: list(e.calls) for p, e in entries.items() if e.calls and (e.torch or p in users)}
    summaries = {p: dict(e.summaries) for p, e in entries.items() if e.summaries}
    told = outside_by_file(index, calls, unread, summaries)
    uses = callees_by_file(index, calls, summaries)
    # (every class a file may work with: its text is not kept here to choose those it can use)
    near = {p: found for p in entries if (found := neighbours(index, p, None, lambda q: entries[q].shape if q in entries else None))}
    # (a file of `users` never mentions torch: its own analysis runs as in a file that does - Settings.torch_code)
    return {p: (told.get(p, {}), uses.get(p, {}), near.get(p, ()), p in users)
            for p in told.keys() | uses.keys() | near.keys() | users}


class Projects:
    """The projects of the workspace folders. Until the first indexing is over, no file is told
    anything: a caller not yet read could disagree with the ones read so far."""

    def __init__(self, folders: Iterable[str]):
        self.folders = [os.path.abspath(f) for f in folders]
        self.by_root: dict[str, Project] = {}
        self.ready = False
        self._roots: dict[str, Optional[str]] = {}  # directory -> root (markers are looked for once)

    def members(self) -> list[tuple[str, str]]:
        """(root, path) of every Python file of the workspace folders, as `gradguard check`
        would find them (excluded files and directories left out); reads the disk."""
        found = []
        for folder in self.folders:
            for path in discover([folder], Resolver()).files:
                if path.endswith(".py"):
                    path = os.path.abspath(path)
                    found.append((self.root_of(path), path))
        return found

    def admits(self, path: str) -> bool:
        """A file created since the indexing is one of the project's: `gradguard check` of its
        folder would find it (not excluded, not in a virtual environment)."""
        folder = self._folder_of(path)
        if folder is None or not path.endswith(".py"):
            return False
        try:
            if skipped_file(path, Resolver().for_path(path), check_parents=True) is not None:
                return False
        except ConfigError:
            return False
        here = os.path.dirname(path)
        while here != folder and here.startswith(folder + os.sep):
            if is_environment(here):
                return False
            here = os.path.dirname(here)
        return True

    def _folder_of(self, path: str) -> Optional[str]:
        return max((f for f in self.folders if path == f or path.startswith(f + os.sep)), key=len, default=None)

    def root_of(self, path: str) -> Optional[str]:
        """The root of the project a file belongs to: its nearest marker (pyproject.toml, .git,
        ...), else its workspace folder; None for a file outside every folder."""
        here = os.path.dirname(os.path.abspath(path))
        if here not in self._roots:
            folder = self._folder_of(here)
            self._roots[here] = (text_index.root_of(path) or folder) if folder is not None else None
        return self._roots[here]

    def project(self, path: str) -> Optional[Project]:
        """The project of a Python file of the workspace, created when it is the first seen there."""
        if not path.endswith(".py"):
            return None  # notebooks call, nobody imports them: left to the CLI for now
        root = self.root_of(path)
        if root is None:
            return None
        return self.by_root.setdefault(root, Project(root))

    def told_of(self, path: str) -> tuple[dict, dict]:
        """How the rest of its project calls a file (symbol -> Outside), and what the functions it
        calls of other files build or keep (target -> Keeps | Builds)."""
        return self._told(path)[:2]

    def torch_code(self, path: str) -> bool:
        """Is a file that never mentions torch analysed as torch code: it calls the project's torch
        modules (project.torch_code_users), as `gradguard check` analyses it."""
        return self._told(path)[3]

    def neighbours_of(self, path: str, text: Optional[str] = None) -> tuple:
        """`Settings.neighbours` for a file: the classes of other modules it works with - with its
        `text`, only those the text can tell anything by."""
        offered = self._told(path)[2]
        if not offered or text is None:
            return offered
        return self.by_root[self.root_of(path)].neighbours(os.path.abspath(path), text)

    def _told(self, path: str) -> tuple:
        root = self.root_of(path) if self.ready else None
        found = self.by_root[root].outside.get(os.path.abspath(path)) if root in self.by_root else None
        return found or ({}, {}, (), False)

    def learn(self, path: str, new: Entry) -> Optional[Project]:
        """Keep a file's new entry; its project when what the file says of the others changed.
        A text that does not parse keeps the entry of the last one that did."""
        found = self.project(path)
        if found is None:
            return None
        path = os.path.abspath(path)
        old = found.entries.get(path)
        if not new.parsed and old is not None:
            return None
        found.entries[path] = new
        return found if old is None or old.says() != new.says() else None

    def forget(self, path: str) -> Optional[Project]:
        """A file deleted: its project, if it was one of its files."""
        found = self.project(path)
        if found is None or found.entries.pop(os.path.abspath(path), None) is None:
            return None
        return found

    def known(self, path: str, text_digest: str) -> bool:
        """The file's entry was read from this very text."""
        found = self.project(path)
        old = found.entries.get(os.path.abspath(path)) if found is not None else None
        return old is not None and old.digest == text_digest
