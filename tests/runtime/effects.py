"""Observing with real PyTorch what a rule claims: graphs, saved activations, errors."""

from __future__ import annotations

import torch


def _nodes(t):
    fn = getattr(t, "grad_fn", None)
    seen, stack = set(), [fn] if fn is not None else []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(n for n, _ in node.next_functions)
    return seen


def has_graph(t) -> bool:
    """The value keeps an autograd graph (a grad_fn chain) alive."""
    return isinstance(t, torch.Tensor) and t.grad_fn is not None


def graph_size(t) -> int:
    """Number of autograd nodes reachable from t: grows when graphs pile up."""
    return len(_nodes(t))


def activations_alive(t) -> bool:
    """Some tensor saved for backward in t's graph is still held in memory.

    After backward() the saved tensors are freed and reading one raises
    "Trying to backward through the graph a second time (or directly access
    saved tensors after they have already been freed)".
    """
    for node in _nodes(t):
        for attr in dir(node):
            if not attr.startswith("_saved_"):
                continue
            try:
                value = getattr(node, attr)
            except RuntimeError:
                continue
            if isinstance(value, torch.Tensor):
                return True
    return False
