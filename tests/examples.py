"""Every VALID / INVALID example of every rule, as pytest parameters."""

from __future__ import annotations

import pytest

from gradguard.rules import all_rules


def examples(kind: str):
    params = []
    for rule in all_rules():
        for i, ex in enumerate(getattr(rule, kind)):
            params.append(pytest.param(rule, ex, id=f"{rule.code}-{kind.lower()}-{i}"))
    return params


VALID = examples("VALID")
INVALID = examples("INVALID")
