"""Project configuration: `[tool.gradguard]` in pyproject.toml, or a standalone gradguard.toml.

A file's configuration is the nearest one found walking up from its directory
(in each directory gradguard.toml wins over pyproject.toml; a pyproject.toml
without a `[tool.gradguard]` table is passed over), as ruff does. Globs in
`exclude`, `extend-exclude` and `per-file-ignores` are relative to the directory
of the file that holds them, and a pattern also matches a bare file or
directory name (`build` excludes every `build/`, `__init__.py` every
`__init__.py`). Every key and value is checked: anything else is a
`ConfigError` naming the file, the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

from gradguard.findings import Severity
from gradguard.rules import all_rules
from gradguard.settings import COPY_ORDERS, Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

STANDALONE = "gradguard.toml"
PYPROJECT = "pyproject.toml"
# Directories never worth walking into (what `exclude` is when a project does not set it).
DEFAULT_EXCLUDE = (
    ".*",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    "__pypackages__",
    "site-packages",
    "build",
    "dist",
)
# Files checked when a directory is walked (what `include` is when a project does not set it);
# an extensionless file whose first line is a Python shebang is checked too (discovery.py).
DEFAULT_INCLUDE = ("*.py", "*.ipynb")


# The settings of an excluded file: no rules (the language server keeps it so whatever the editor selects).
EXCLUDED = Settings(select=())


class ConfigError(ValueError):
    """A configuration file that cannot be used: `str()` names the file, the key and what is allowed."""

    def __init__(self, path: str, key: Optional[str], problem: str):
        self.path, self.key, self.problem = path, key, problem
        super().__init__(f"{path}: `{key}`: {problem}" if key else f"{path}: {problem}")


@dataclass(frozen=True)
class Config:
    """One project's settings, as written (plus the command line's overrides)."""

    path: Optional[str] = None  # the file they come from; None: the defaults
    root: str = "."  # absolute directory the globs are relative to
    select: tuple[str, ...] = ("GG",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, codes), in file order
    include: tuple[str, ...] = DEFAULT_INCLUDE
    extend_include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    strict: bool = False
    copy_order: str = "clone-detach"
    types: bool = False  # refine findings with the jedi type layer (`--types`)
    python: Optional[str] = None  # the interpreter whose packages jedi reads (`--python`); None: GradGuard's own
    _globs: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    def override(self, select=(), extend_select=(), ignore=(), extend_include=(), **values: Any) -> Config:
        """The command line's flags on top of the file: `select` replaces the file's selection
        (and its `extend-select` and `ignore`, as ruff's does); `extend_select`, `ignore` and
        `extend_include` add."""
        changes = {k: v for k, v in values.items() if v is not None}
        changes["extend_include"] = self.extend_include + tuple(extend_include)
        base_extend, base_ignore = self.extend_select, self.ignore
        if select:
            changes["select"], base_extend, base_ignore = tuple(select), (), ()
        changes["extend_select"] = base_extend + tuple(extend_select)
        changes["ignore"] = base_ignore + tuple(ignore)
        return dataclasses.replace(self, **changes)

    def settings_for(self, path: Optional[str] = None, *, honour_exclude: bool = False) -> Settings:
        """The engine settings for one file: with its `per-file-ignores`; with `honour_exclude`
        (the language server, which is handed every file the editor opens), no rules at all
        for an excluded file."""
        ignore = self.ignore
        if path is not None:
            if honour_exclude and self.is_excluded(path, check_parents=True):
                return EXCLUDED
            for pattern, codes in self.per_file_ignores:
                if self._matches(pattern, path):
                    ignore += codes
        return Settings(
            select=self.select + self.extend_select,
            ignore=ignore,
            severity=dict(self.severity),
            strict=self.strict,
            copy_order=self.copy_order,
            types=self.types,
            python=self.python if self.types else None,
        )

    def is_excluded(self, path: str, *, check_parents: bool = False) -> bool:
        """Does `exclude`/`extend-exclude` match the path (or, with check_parents, a directory above it)?"""
        return self.excluded_by(path, check_parents=check_parents) is not None

    def excluded_by(self, path: str, *, check_parents: bool = False) -> Optional[str]:
        """Why the path is excluded (`"build" in exclude (the default)`), or None."""
        if not self.exclude and not self.extend_exclude:
            return None
        path = os.path.abspath(path)
        candidates = [path]
        if check_parents:
            parent = os.path.dirname(path)
            while os.path.dirname(parent) != parent and _inside(parent, self.root):
                candidates.append(parent)
                parent = os.path.dirname(parent)
        for key, patterns in (("exclude", self.exclude), ("extend-exclude", self.extend_exclude)):
            for pattern in patterns:
                if any(self._matches(pattern, c) for c in candidates):
                    return f"{_toml(pattern)} in {key} ({self._origin(key)})"
        return None

    def includes(self, path: str) -> bool:
        """Does `include`/`extend-include` match the file?"""
        return any(self._matches(p, path) for p in self.include + self.extend_include)

    def _origin(self, key: str) -> str:
        """Where a list's value comes from: the default, or the file that sets it."""
        if self.path is None or (key == "exclude" and self.exclude == DEFAULT_EXCLUDE):
            return "the default"
        rel = os.path.relpath(self.path)
        return self.path if rel.startswith("..") else rel

    def _matches(self, pattern: str, path: str) -> bool:
        negated = pattern.startswith("!")
        regex = self._globs.get(pattern)
        if regex is None:
            regex = self._globs[pattern] = _glob_regex(pattern.removeprefix("!"))
        path = os.path.abspath(path)
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        inside = rel != "." and not rel.startswith("../")  # the root itself is no match of `.*`
        found = bool(regex.fullmatch(os.path.basename(path)) or (inside and regex.fullmatch(rel)))
        return found != negated

    def describe(self, path: Optional[str] = None) -> list[str]:
        """The effective configuration as TOML lines (what `gradguard config` prints)."""
        settings = self.settings_for(path)
        lines = [
            f"select = {_toml(list(self.select))}",
            f"extend-select = {_toml(list(self.extend_select))}",
            f"ignore = {_toml(list(self.ignore))}",
            f"include = {_toml(list(self.include))}",
            f"extend-include = {_toml(list(self.extend_include))}",
            f"exclude = {_toml(list(self.exclude))}",
            f"extend-exclude = {_toml(list(self.extend_exclude))}",
            f"strict = {_toml(self.strict)}",
            f"copy-order = {_toml(self.copy_order)}",
            f"types = {_toml(self.types)}",
            *([f"python = {_toml(self.python)}"] if self.python else []),
            "",
            "[severity]",
            *(f"{code} = {_toml(level.value)}" for code, level in self.severity),
            "",
            "[per-file-ignores]",
            *(f"{_toml(pattern)} = {_toml(list(codes))}" for pattern, codes in self.per_file_ignores),
        ]
        where = f"in {path}" if path is not None else "here (before per-file-ignores)"
        return lines + ["", f"# reported {where}:", *reporting(settings)]


def reporting(settings: Settings) -> list[str]:
    """What each rule reports under `settings`, as the engine decides it: a rule that is not
    enabled reports nothing; a severity set for it applies to all its findings; otherwise its
    info findings are opt-in, shown only when it is selected by code or family (`GG501`,
    `GG5`; not by `GG` alone), so an info-only rule (GG501, GG901) reports nothing until then."""
    reported, opt_in, off = [], [], []
    for rule in all_rules():
        code = rule.code
        if not settings.enabled(code):
            off.append(code)
        elif code in settings.severity:
            reported.append(f"#   {code}  {settings.severity[code].value} (its severity setting)")
        else:
            levels = rule.severities or (rule.severity,)
            shown = [s.value for s in levels if s is not Severity.INFO or settings.shows_info(code)]
            if not shown:
                opt_in.append(code)
            elif len(shown) < len(levels):
                reported.append(f"#   {code}  {', '.join(shown)} (info findings opt-in: select {code} by name)")
            else:
                reported.append(f"#   {code}  {', '.join(shown)}")
    lines = reported or ["#   nothing"]
    if opt_in:
        lines.append(f"# opt-in, reporting nothing unless selected by name (`--extend-select {opt_in[0]}`): "
                     + ", ".join(opt_in))
    if off:
        lines.append("# off (not selected, or ignored): " + ", ".join(off))
    return lines


def _inside(path: str, root: str) -> bool:
    """Is `path` strictly below `root`?"""
    rel = os.path.relpath(path, root)
    return rel != "." and not rel.startswith("..")


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _glob_regex(pattern: str) -> re.Pattern:
    """A glob as a regex over `/`-separated paths: `*` and `?` stay within a name, `**`
    crosses directories, `[...]` and `{a,b}` as in ruff's globset."""
    out, i, n = [], 0, len(pattern)
    pattern = pattern.rstrip("/")
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : end]
                out.append("[" + ("^" + body[1:] if body[0] in "!^" else body).replace("\\", "\\\\") + "]")
                i = end + 1
        elif c == "{":
            end = pattern.find("}", i)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                out.append("(?:" + "|".join(_glob_regex(alt).pattern for alt in pattern[i + 1 : end].split(",")) + ")")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out))


# ---------------------------------------------------------------- reading and checking a file
def _known_codes() -> list[str]:
    return [r.code for r in all_rules()]


def _codes(value: Any, problem) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        problem(f'expected a list of rule codes or prefixes such as ["GG1", "GG401"], got {value!r}')
    codes = tuple(v.strip().upper() for v in value)
    unknown = [c for c in codes if not any(k.startswith(c) for k in _known_codes())]
    if unknown:
        problem(f"{', '.join(unknown)} matches no rule (known: {', '.join(_known_codes())})")
    return codes


def _globs(value: Any, problem) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        problem(f'expected a list of glob patterns such as ["build", "tests/data/**"], got {value!r}')
    return tuple(value)


def _bool(value: Any, problem) -> bool:
    if not isinstance(value, bool):
        problem(f"expected true or false, got {value!r}")
    return value


def _python(value: Any, problem) -> str:
    if not isinstance(value, str) or not value.strip():
        problem(f"expected the path of a Python interpreter (or of a virtual environment), got {value!r}")
    return os.path.expanduser(value)


def _copy_order(value: Any, problem) -> str:
    if value not in COPY_ORDERS:
        problem(f"expected one of {', '.join(repr(o) for o in COPY_ORDERS)}, got {value!r}")
    return value


def _severity(value: Any, problem) -> tuple[tuple[str, Severity], ...]:
    if not isinstance(value, dict):
        problem(f'expected a table of rule codes and severities such as {{ GG202 = "warning" }}, got {value!r}')
    levels = {s.value: s for s in Severity}
    out = []
    for code, level in value.items():
        if code.upper() not in _known_codes():
            problem(f"{code} is not a rule code (known: {', '.join(_known_codes())})", code)
        if level not in levels:
            problem(f"expected one of {', '.join(repr(v) for v in levels)}, got {level!r}", code)
        out.append((code.upper(), levels[level]))
    return tuple(out)


def _per_file_ignores(value: Any, problem) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        problem(f'expected a table of globs and rule codes such as {{ "tests/**" = ["GG501"] }}, got {value!r}')
    out = []
    for pattern, codes in value.items():
        out.append((pattern, _codes(codes, lambda text, _key=None, p=pattern: problem(text, _toml(p)))))
    return tuple(out)


# TOML key -> (Config field, parser)
KEYS = {
    "select": ("select", _codes),
    "extend-select": ("extend_select", _codes),
    "ignore": ("ignore", _codes),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "include": ("include", _globs),
    "extend-include": ("extend_include", _globs),
    "exclude": ("exclude", _globs),
    "extend-exclude": ("extend_exclude", _globs),
    "severity": ("severity", _severity),
    "strict": ("strict", _bool),
    "copy-order": ("copy_order", _copy_order),
    "types": ("types", _bool),
    "python": ("python", _python),
}


def parse(table: Any, path: str, prefix: str = "") -> Config:
    """A Config from the table read from `path`; `prefix` is how its keys are named (`tool.gradguard.`)."""
    if not isinstance(table, dict):
        raise ConfigError(path, prefix.rstrip("."), f"expected a table, got {table!r}")
    values = {}
    for key, value in table.items():
        if key not in KEYS:
            allowed = ", ".join(KEYS)
            raise ConfigError(path, prefix + key, f"unknown setting (allowed: {allowed})")
        name, check = KEYS[key]

        def problem(text: str, sub: Optional[str] = None, key=key):
            raise ConfigError(path, prefix + key + (f".{sub}" if sub else ""), text)

        values[name] = check(value, problem)
    root = os.path.dirname(os.path.abspath(path))
    if "python" in values:  # relative to the file that names it, as its globs are
        values["python"] = os.path.normpath(os.path.join(root, values["python"]))
    return Config(path=path, root=root, **values)


@lru_cache(maxsize=256)
def _load(path: str, stamp: tuple[int, int]) -> Optional[Config]:
    """The file's configuration, or None for a pyproject.toml without [tool.gradguard];
    cached until the file changes (its mtime and size are part of the key)."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(path, None, f"not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(path, None, f"cannot be read: {getattr(e, 'strerror', None) or e}") from None
    if os.path.basename(path) == PYPROJECT:
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "gradguard" not in tool:
            return None
        return parse(tool["gradguard"], path, "tool.gradguard.")
    return parse(data, path)


def load(path: str) -> Optional[Config]:
    st = os.stat(path)
    return _load(os.path.abspath(path), (st.st_mtime_ns, st.st_size))


class Resolver:
    """The configuration of every directory, found once per directory and run."""

    def __init__(self, overrides: Optional[dict] = None, cwd: Optional[str] = None):
        self.overrides = overrides or {}
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self._dirs: dict[str, Config] = {}

    def for_path(self, path: str) -> Config:
        path = os.path.abspath(path)
        return self.for_dir(path if os.path.isdir(path) else os.path.dirname(path))

    def for_dir(self, directory: str) -> Config:
        found = self._dirs.get(directory)
        if found is not None:
            return found
        config = None
        for name in (STANDALONE, PYPROJECT):
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                config = load(candidate)
                if config is not None:
                    break
        if config is None:
            parent = os.path.dirname(directory)
            config = self.for_dir(parent) if parent != directory else self.default()
            self._dirs[directory] = config  # already has the overrides
            return config
        config = config.override(**self.overrides) if self.overrides else config
        self._dirs[directory] = config
        return config

    def default(self) -> Config:
        """What applies where no file says otherwise (with the overrides)."""
        base = Config(root=self.cwd)
        return base.override(**self.overrides) if self.overrides else base

