"""Run the real `python -m gradguard` in a temporary directory, as a user would."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def _env(extra: dict | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(extra or {})
    return env


@pytest.fixture
def gradguard(tmp_path: Path):
    """`gradguard("check", "a.py")` -> Run, with cwd set to tmp_path and stdout a pipe."""

    def run(*args: str, env: dict | None = None) -> Run:
        proc = subprocess.run(
            [sys.executable, "-m", "gradguard", *args],
            cwd=tmp_path,
            capture_output=True,
            env=_env(env),
            timeout=120,
        )
        return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    return run


@pytest.fixture
def gradguard_tty(tmp_path: Path):
    """Like `gradguard`, with stdout a pseudo-terminal (stderr stays a pipe)."""

    def run(*args: str, env: dict | None = None) -> Run:
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "gradguard", *args],
            cwd=tmp_path,
            stdout=slave,
            stderr=subprocess.PIPE,
            env=_env(env),
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        stderr = proc.stderr.read().decode()
        proc.stderr.close()
        proc.wait(timeout=120)
        # The terminal turns "\n" into "\r\n" on output.
        return Run(proc.returncode, b"".join(chunks).decode().replace("\r\n", "\n"), stderr)

    return run


@pytest.fixture
def write(tmp_path: Path):
    """`write("pkg/a.py", text)` creates the file (and its directories) under tmp_path, byte for byte."""

    def put(relpath: str, content: str | bytes) -> Path:
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path

    return put


@pytest.fixture
def finding_line():
    """The text line the CLI prints for an Invalid example of GG101, built from the example itself."""

    def line_for(path: str, invalid) -> str:
        from gradguard.rules.gg101_graph_kept_across_iterations import GraphKeptAcrossIterations

        line, col, _, _ = invalid.range
        severity = (invalid.severity or GraphKeptAcrossIterations.severity).value
        return f"{path}:{line}:{col + 1}: {severity}: GG101 {invalid.message}"

    return line_for


@dataclass(frozen=True)
class Program:
    """A small GG101 program of our own, for tests that pin the exact wording of fixes and notes."""

    source: str
    fixed: str  # after --fix
    message: str

    def line(self, path: str) -> str:
        return f"{path}:7:17: error: GG101 {self.message}"


MINE = Program(
    source="""import torch

net = torch.nn.Linear(2, 1)
kept = []
for x in [torch.randn(3, 2)]:
    out = net(x).sum()
    kept.append(out)
""",
    fixed="""import torch

net = torch.nn.Linear(2, 1)
kept = []
for x in [torch.randn(3, 2)]:
    out = net(x).sum()
    kept.append(out.detach())
""",
    message="`out` carries an autograd graph (from `net(x)` on line 6) that is never back-propagated; "
    "storing it in `kept` keeps every saved activation alive across iterations",
)


@pytest.fixture
def mine() -> Program:
    return MINE
