"""Semantics-preserving transformations of corpus programs (bench/variants.py runs them).

Each module holds one transformation: `variants(subject) -> list[Outcome]`, given a program whose
anchor statement is marked (subject.py).
"""
