"""The type layer: jedi's answers to what syntax cannot tell, fed to the engine.

    first = analyze(source, incremental=inc, ask_types=True)   # syntactic, published first
    better = refine(first, source, oracle, path, incremental=inc)  # None: nothing to refine
"""

from gradguard.typelayer.facts import TypeFact, value_of
from gradguard.typelayer.refine import refine

__all__ = ["TypeFact", "refine", "value_of"]
