"""A second analysis of the same parse, with jedi's facts about the names the first one could not type."""

from __future__ import annotations

from typing import Optional

from gradguard.engine import Analysis, Incremental, analyze
from gradguard.settings import Settings
from gradguard.typelayer.facts import value_of


def ask(first: Analysis, source: str, oracle, path: Optional[str]) -> dict:
    """jedi's facts for the first analysis's questions: node -> TypeFact (on the jedi thread)."""
    if not first.type_queries:
        return {}
    answers = oracle.facts(source, path, [(line, col) for line, col, _ in first.type_queries])
    return {node: answers[(line, col)] for line, col, node in first.type_queries if (line, col) in answers}


def reanalyze(
    source: str,
    settings: Optional[Settings],
    types: dict,
    incremental: Incremental,
    *,
    keep_flow: bool = False,
    line_label=None,
    cells: tuple = (),
) -> Optional[Analysis]:
    """The analysis again with `types` (node -> TypeFact of the same parse); None if no fact applies.
    `incremental` must hold that parse (it re-uses it for the same text)."""
    facts = {}
    for node, fact in types.items():
        value = value_of(fact, node)
        if value is not None:
            facts[node] = value
    if not facts:
        return None
    refined = analyze(source, settings, keep_flow=keep_flow, line_label=line_label, incremental=incremental, facts=facts,
                      cells=cells)
    refined.types = types
    return refined


def refine(
    first: Analysis,
    source: str,
    oracle,
    path: Optional[str],
    settings: Optional[Settings] = None,
    *,
    incremental: Incremental,
    keep_flow: bool = False,
    line_label=None,
    cells: tuple = (),
) -> Optional[Analysis]:
    """`ask` then `reanalyze`, on one thread (the CLI)."""
    types = ask(first, source, oracle, path)
    return reanalyze(source, settings, types, incremental, keep_flow=keep_flow, line_label=line_label,
                     cells=cells) if types else None
