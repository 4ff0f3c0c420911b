"""The .vsix as a release artifact: bundled (one client file, no node_modules), small, and its
README's links and images resolve inside the package (the docs it links to are packaged)."""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import PurePosixPath

import pytest

from conftest import REPO

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def packaged(node_toolchain) -> zipfile.ZipFile:
    proc = subprocess.run(["npm", "run", "package", "--silent"], cwd=REPO, env=node_toolchain,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return zipfile.ZipFile(REPO / "gradguard.vsix")


def test_the_client_is_one_bundled_file(packaged):
    names = packaged.namelist()
    assert not [n for n in names if "/node_modules/" in n]
    assert [n for n in names if n.endswith(".js")] == ["extension/out/extension.js"]
    bundle = packaged.read("extension/out/extension.js").decode()
    assert "vscode-languageclient" not in re.findall(r'require\("([^"]+)"\)', bundle)
    assert len(names) < 40, names


def test_every_relative_link_of_the_packaged_readme_and_docs_resolves(packaged):
    names = set(packaged.namelist())
    pages = ["extension/readme.md"] + sorted(n for n in names if n.startswith("extension/docs/") and n.endswith(".md"))
    broken = []
    for page in pages:
        for target in LINK.findall(packaged.read(page).decode("utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # https:, mailto:, an anchor in the page
            path = PurePosixPath(page).parent / target.split("#", 1)[0]
            parts = []
            for part in path.parts:  # normalise `..`
                if part == "..":
                    parts.pop()
                elif part != ".":
                    parts.append(part)
            if "/".join(parts) not in names:
                broken.append(f"{page}: {target}")
    assert pages[1:], "no docs packaged"
    assert broken == []
