"""Soak: 10,000 edits to one document through the real server over stdio.

    .venv/bin/python bench/soak.py [--edits 10000] [--lines 500] [--wait-every 10]

One file of realistic training code (bench/lsp_latency.py's generator) is opened
and edited like typing: one character per change, a number typed and deleted in
the middle of the file. Every `--wait-every`-th edit waits for its diagnostics
(change-to-diagnostics latency); every 100th is followed by a hover. Prints the
server's RSS after a warm-up (the first 10% of the edits) and at the end, its
growth (target < 10%), and the latencies. A benchmark: it only prints.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_latency import Editor, hover_targets, memory_mb, percentile, training_code  # noqa: E402

from lsprotocol import types  # noqa: E402


async def soak(edits: int, lines: int, wait_every: int) -> None:
    editor = Editor()
    await editor.start()
    text = training_code(lines)
    uri = Path("/tmp/gradguard-soak/train.py").as_uri()
    try:
        await editor.open(uri, text)
        rows = text.split("\n")
        target = next(n for n in range(len(rows) // 2, len(rows)) if "lr=0.0" in rows[n])
        col = rows[target].index("lr=0.0") + len("lr=0.0")
        hovers = hover_targets(text, 20)
        changes_ms, hover_ms = [], []
        warm = None
        start = time.perf_counter()
        for k in range(edits):
            version = k + 2
            # Alternate: type a digit after "lr=0.0<d>", then delete it again.
            typing = k % 2 == 0
            rng = types.Range(types.Position(target, col + 1), types.Position(target, col + 1 if typing else col + 2))
            change = types.TextDocumentContentChangePartial(range=rng, text=str(k % 10) if typing else "")
            waiter = editor.expect(uri, version) if (k + 1) % wait_every == 0 else None
            sent = time.perf_counter()
            editor.client.text_document_did_change(
                types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change])
            )
            if waiter is not None:
                changes_ms.append((await asyncio.wait_for(waiter, 600) - sent) * 1000)
            if (k + 1) % 100 == 0:
                line, character = hovers[(k // 100) % len(hovers)]
                ms, _ = await editor.hover(uri, line, character)
                hover_ms.append(ms)
            if k + 1 == max(1, edits // 10):
                warm = memory_mb(editor.pid)
        elapsed = time.perf_counter() - start
        end = memory_mb(editor.pid)
    finally:
        await editor.stop()

    growth = (end[0] - warm[0]) / warm[0] * 100
    print(f"{edits} edits to a {lines}-line file in {elapsed:.0f} s ({edits / elapsed:.0f} edits/s), "
          f"diagnostics awaited every {wait_every} edits")
    print(f"RSS after warm-up ({max(1, edits // 10)} edits): {warm[0]:.0f} MB; at the end: {end[0]:.0f} MB "
          f"(peak {end[1]:.0f} MB); growth {growth:+.1f}% (target < 10%)")
    print(f"change-to-diagnostics: p50 {statistics.median(changes_ms):.0f} ms, p95 {percentile(changes_ms, 0.95):.0f} ms, "
          f"max {max(changes_ms):.0f} ms ({len(changes_ms)} awaited)")
    if hover_ms:
        print(f"hover: p50 {statistics.median(hover_ms):.1f} ms, p95 {percentile(hover_ms, 0.95):.1f} ms ({len(hover_ms)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=500, help="size of the edited file")
    parser.add_argument("--wait-every", type=int, default=10, help="wait for the diagnostics of every Nth edit")
    args = parser.parse_args()
    asyncio.run(soak(args.edits, args.lines, args.wait_every))


if __name__ == "__main__":
    main()
