"""The benchmark corpus: the `.py` files of pinned PyPI wheels of real PyTorch code.

Wheels are fetched with `pip download --no-deps --only-binary=:all:` into
`bench/.corpus/wheels/` and only their `.py` members are unpacked, into
`bench/.corpus/<name>-<version>/`. Both are reused when present, so only the
first run needs the network. `bench/.corpus/` is git-ignored.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
DEFAULT_ROOT = HERE / ".corpus"

# Pinned so that figures from different runs compare. torchvision is held at
# 0.29.1 because this machine's pip constraints cap it there.
PACKAGES: dict[str, str] = {
    "transformers": "5.25.0",
    "diffusers": "0.42.1",
    "timm": "1.0.31",
    "torchvision": "0.29.1",
    "lightning": "2.6.6",
    "accelerate": "1.16.0",
}

_DONE = ".unpacked"  # marker written once a wheel is fully unpacked


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    directory: Path  # where its .py files are


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _norm(name: str) -> str:
    return name.lower().replace("-", "_")


def _find_wheel(wheels: Path, name: str, version: str) -> Path | None:
    # {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl
    for whl in sorted(wheels.glob("*.whl")):
        parts = whl.name.split("-")
        if len(parts) >= 5 and _norm(parts[0]) == _norm(name) and parts[1] == version:
            return whl
    return None


def _download(wheels: Path, name: str, version: str) -> Path | None:
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "-q", "-d", str(wheels), f"{name}=={version}",
    ]
    _log(f"fetching {name}=={version} ...")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        _log(f"SKIP {name}=={version}: pip download failed:\n  {tail}")
        return None
    whl = _find_wheel(wheels, name, version)
    if whl is None:
        _log(f"SKIP {name}=={version}: pip download gave no matching wheel in {wheels}")
    return whl


def _unpack(whl: Path, dest: Path) -> int:
    """Unpack the wheel's .py members into dest; returns how many."""
    dest.mkdir(parents=True, exist_ok=True)
    count = 0
    with zipfile.ZipFile(whl) as zf:
        for info in zf.infolist():
            if info.is_dir() or not info.filename.endswith(".py"):
                continue
            rel = PurePosixPath(info.filename)
            if rel.is_absolute() or ".." in rel.parts:
                continue
            target = dest.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            count += 1
    (dest / _DONE).write_text(f"{whl.name}\n{count}\n")
    return count


def ensure(names: list[str] | None = None, root: Path = DEFAULT_ROOT) -> list[Package]:
    """Fetch and unpack the pinned packages (or the named subset); skip what cannot be had."""
    wanted = names or list(PACKAGES)
    unknown = [n for n in wanted if n not in PACKAGES]
    if unknown:
        raise SystemExit(f"unknown package(s) {', '.join(unknown)}; known: {', '.join(PACKAGES)}")
    got = []
    for name in wanted:
        version = PACKAGES[name]
        dest = root / f"{name}-{version}"
        if not (dest / _DONE).exists():
            whl = _find_wheel(root / "wheels", name, version) or _download(root / "wheels", name, version)
            if whl is None:
                continue
            try:
                n = _unpack(whl, dest)
            except (zipfile.BadZipFile, OSError) as e:
                _log(f"SKIP {name}=={version}: cannot unpack {whl.name}: {e}")
                continue
            _log(f"unpacked {n} .py files of {whl.name} into {dest}")
        got.append(Package(name, version, dest))
    return got


def python_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if p.is_file())
