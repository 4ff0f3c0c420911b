"""The extension's TypeScript unit tests (node's test runner, `vscode` mocked):
settings resolution, interpreter choice, command wiring, the install helpers."""

from __future__ import annotations

import re
import subprocess

from conftest import REPO


def test_typescript_unit_tests(node_toolchain):
    proc = subprocess.run(
        ["npm", "test", "--silent"],
        cwd=REPO,
        env=node_toolchain,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    passed = re.search(r"^ℹ pass (\d+)$", out, re.M)
    failed = re.search(r"^ℹ fail (\d+)$", out, re.M)
    assert failed is not None and failed.group(1) == "0", out
    # Every test() in client/src/test ran (none silently dropped by a load error).
    declared = sum(len(re.findall(r"^test\(", p.read_text(), re.M)) for p in (REPO / "client" / "src" / "test").glob("*.test.ts"))
    assert passed is not None and int(passed.group(1)) == declared, out
