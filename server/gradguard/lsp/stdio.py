"""Reading the client's messages from a stdin pipe on the event loop itself.

pygls 2.1 reads stdin with blocking reads on a thread pool: three thread round
trips per message (two header lines, then the body), and each hand-back waits
for the GIL, which the analysis thread gives up only every switch interval
(5 ms). A burst of keystrokes spent most of its latency just being read
(bench/soak.py, ten changes sent at once: change-to-diagnostics p50 283 ms on
pygls' reader, 46 ms on this one). The loop's own pipe transport hands over
whatever has arrived in one callback, and every message already buffered is
parsed without another wait.

Only on POSIX, for a pipe or a socket that is not also stdout (VS Code and
Neovim spawn the server on libuv, which gives it one socket per stream): the
transport makes the descriptor non-blocking, which would break blocking writes
to a terminal or a socket that stdout shares. Anything else keeps pygls' reader.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async

# Bounds a header line and how much is buffered before the pipe is paused
# (bodies are read by length, whatever their size).
_LINE_LIMIT = 1 << 20


def reads_on_loop(stdin: BinaryIO, stdout: BinaryIO) -> bool:
    """Whether `stdin` can be read by the event loop without touching `stdout`."""
    if os.name != "posix":
        return False
    try:
        inp, out = os.fstat(stdin.fileno()), os.fstat(stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no descriptor (a test double)
        return False
    separate = (inp.st_dev, inp.st_ino) != (out.st_dev, out.st_ino)
    return separate and (stat.S_ISFIFO(inp.st_mode) or stat.S_ISSOCK(inp.st_mode))


class PipeReader:
    """pygls' AsyncReader (readline, readexactly) on an asyncio stream."""

    def __init__(self, pipe: BinaryIO):
        self._pipe = pipe
        self._stream: asyncio.StreamReader | None = None

    async def _connected(self) -> asyncio.StreamReader:
        if self._stream is None:
            stream = asyncio.StreamReader(limit=_LINE_LIMIT)
            await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), self._pipe)
            self._stream = stream
        return self._stream

    async def readline(self) -> bytes:
        return await (await self._connected()).readline()  # b"" at the end: pygls stops

    async def readexactly(self, n: int) -> bytes:
        try:
            return await (await self._connected()).readexactly(n)
        except asyncio.IncompleteReadError as cut:  # the client went away mid-message
            return cut.partial


def serve(server, stdin: BinaryIO, stdout: BinaryIO, logger) -> None:
    """pygls' `start_io` loop with the pipe reader (the caller checked `reads_on_loop`)."""
    server._stop_event = threading.Event()  # what pygls' shutdown() sets
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(
            run_async(
                stop_event=server._stop_event,
                reader=PipeReader(stdin),
                protocol=server.protocol,
                logger=logger,
                error_handler=server.report_server_error,
            )
        )
    except BrokenPipeError:
        logger.error("Connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
