"""The editor's `gradguard` settings, typed and checked.

They come from `initializationOptions` (flat, or under a `gradguard` key) and
from `workspace/configuration` (section `gradguard`), the latter winning key by
key. A bad key or value never stops the server: it is named in a problem
message and its default is used; the other keys still apply.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from gradguard.config import EXCLUDED, ConfigError, Resolver
from gradguard.findings import Severity
from gradguard.rules import all_rules
from gradguard.settings import COPY_ORDERS, Settings

SECTION = "gradguard"
DEFAULT_DEBOUNCE_MS = 300


@dataclass(frozen=True)
class Options:
    enable: bool = True
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    types: bool = False  # the jedi type layer refines diagnostics and hovers (opt-in: it costs a subprocess)
    interpreter: Optional[str] = None  # the Python whose packages jedi reads; None: the server's
    project: bool = True  # each file told how the rest of its project calls it (the CLI's --no-project: off)
    # Engine settings the editor set explicitly (field name -> value); the rest
    # come from the project (see `project_settings`).
    engine: dict[str, Any] = field(default_factory=dict)

    def settings(self, project: Settings) -> Settings:
        """The engine settings for a document: the project's, overridden by the editor's."""
        return dataclasses.replace(project, **self.engine) if self.engine else project


def project_settings(path: Optional[str]) -> Settings:
    """The settings a file's project gives: the nearest gradguard.toml or `[tool.gradguard]`
    above it, as the CLI finds them. `path` is the
    document's file path (None for unsaved buffers: the defaults). An excluded file gets
    `EXCLUDED`, which the editor's settings do not override. A bad file raises
    `ConfigError`, whose text names the file, the key and what is allowed."""
    if path is None:
        return Settings()
    return Resolver().for_path(path).settings_for(path, honour_exclude=True)


def effective(opts: Options) -> dict[str, Any]:
    """The settings the server works with, in the editor's terms (the manifest's keys and
    values; `select: []` is every rule): for a file whose project sets nothing."""
    engine = opts.settings(Settings())
    return {
        "enable": opts.enable,
        "debounceMs": opts.debounce_ms,
        "types": opts.types,
        "project": opts.project,
        "select": [] if engine.select == Settings().select else list(engine.select),
        "ignore": list(engine.ignore),
        "severity": {code: level.value for code, level in engine.severity.items()},
        "strict": engine.strict,
        "copyOrder": engine.copy_order,
    }


__all__ = ["EXCLUDED", "ConfigError", "Options", "effective", "merged", "parse", "project_settings"]


class Problem(ValueError):
    pass


def _bool(value):
    if not isinstance(value, bool):
        raise Problem(f"expected true or false, got {value!r}")
    return value


def _codes(value):
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise Problem(f"expected a list of rule codes or prefixes such as [\"GG1\", \"GG401\"], got {value!r}")
    known = [r.code for r in all_rules()]
    codes = tuple(v.strip().upper() for v in value)
    unknown = [c for c in codes if not any(k.startswith(c) for k in known)]
    if unknown:
        raise Problem(f"{', '.join(unknown)} matches no rule (known: {', '.join(known)})")
    return codes


def _severities(value):
    if not isinstance(value, dict):
        raise Problem(f"expected an object such as {{\"GG101\": \"warning\"}}, got {value!r}")
    known = {r.code for r in all_rules()}
    levels = {s.value: s for s in Severity}
    out = {}
    for code, level in value.items():
        if code.upper() not in known:
            raise Problem(f"{code} is not a rule code")
        if level not in levels:
            raise Problem(f"{code}: expected one of {', '.join(levels)}, got {level!r}")
        out[code.upper()] = levels[level]
    return out


def _copy_order(value):
    if value not in COPY_ORDERS:
        raise Problem(f"expected one of {', '.join(repr(o) for o in COPY_ORDERS)}, got {value!r}")
    return value


def _interpreter(value):
    if not isinstance(value, str) or not value.strip():
        raise Problem(f"expected the path of a Python interpreter, got {value!r}")
    return value.strip()


def _debounce(value):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 60_000:
        raise Problem(f"expected a number of milliseconds from 0 to 60000, got {value!r}")
    return value


# key -> (where it goes, field name, parser)
_KEYS: dict[str, tuple[str, str, Callable[[Any], Any]]] = {
    "enable": ("server", "enable", _bool),
    "debounceMs": ("server", "debounce_ms", _debounce),
    "types": ("server", "types", _bool),
    "interpreter": ("server", "interpreter", _interpreter),
    "project": ("server", "project", _bool),
    "select": ("engine", "select", _codes),
    "ignore": ("engine", "ignore", _codes),
    "severity": ("engine", "severity", _severities),
    "strict": ("engine", "strict", _bool),
    "copyOrder": ("engine", "copy_order", _copy_order),
}


def merged(initialization: Any, configuration: Any) -> Any:
    """initializationOptions overridden, key by key, by the workspace/configuration section."""
    if isinstance(initialization, dict) and isinstance(initialization.get(SECTION), dict):
        initialization = initialization[SECTION]
    if configuration is None:
        return initialization
    if isinstance(initialization, dict) and isinstance(configuration, dict):
        return {**initialization, **configuration}
    return configuration


def parse(raw: Any) -> tuple[Options, list[str]]:
    """Options from the client's JSON, and one problem text per bad key."""
    if raw is None:
        return Options(), []
    if not isinstance(raw, dict):
        return Options(), [f"`{SECTION}` settings must be an object, got {raw!r}; using the defaults"]
    server: dict[str, Any] = {}
    engine: dict[str, Any] = {}
    problems = []
    for key, value in raw.items():
        if key not in _KEYS:
            problems.append(f"unknown setting `{SECTION}.{key}` (known: {', '.join(_KEYS)})")
            continue
        if value is None:  # the client's way of saying "not set"
            continue
        where, name, check = _KEYS[key]
        try:
            (server if where == "server" else engine)[name] = check(value)
        except Problem as e:
            problems.append(f"invalid setting `{SECTION}.{key}`: {e}; using the default")
    return Options(**server, engine=engine), problems
