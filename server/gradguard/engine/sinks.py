"""Where graphs end: the non-differentiable uses of values that carry a graph (rules.md, GG103:
"what decides is where the outputs go").

A use of a value whose graph identities (`Value.origins`) include a model call is recorded as a
*sink* (`.item()`, `.tolist()`, `.numpy()`, `.detach()`, `argmax`, a comparison, `float()`,
`print`, string formatting, a NumPy function, a logger's or a plotter's method) or as an *escape*
(a callable the analysis cannot see, which may train on it). A forward whose outputs reach sinks,
and no backward, escape or caller that may train on them, is an evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from gradguard.engine.values import Grad

# Methods of loggers, progress bars, writers and plots: what they are given is looked at, not trained on.
SINK_METHODS = frozenset(
    """add_scalar add_scalars add_image add_images add_histogram add_figure add_text add_video add_audio
    add_embedding add_pr_curve info debug warning error critical write set_description set_postfix
    imshow plot scatter hist bar savefig imsave""".split()
)
# Library namespaces whose functions look at tensors without training on them.
SINK_LIBRARIES = ("numpy.", "matplotlib.", "PIL.", "cv2.", "torchvision.utils.save_image", "torchvision.utils.make_grid",
                  "sklearn.", "scipy.", "pandas.", "wandb.", "imageio.", "logging.")
# What a notebook cell's last expression is: IPython shows its value (a look at it, as `print` is).
DISPLAYED = "the cell's displayed value"
# Builtins that turn a tensor into a Python value or text.
SINK_BUILTINS = frozenset("float int bool str repr print format round".split())  # (`list(x)` keeps the graphs)


@dataclass(frozen=True, eq=False)
class Use:
    """A use of graph-carrying values: where, their graph identities, and what it was."""

    node: cst.CSTNode
    origins: frozenset
    what: str  # "`.item()`", "`print`", "`np.mean`"
    function: Optional[object]  # the FunctionInfo it happened in
    after_cut: bool = False  # reached only through a cut (`save_image(fake.detach())`)


class Sinks:
    """The walk's record of sinks and escapes (FlowAnalysis.sinks, FlowAnalysis.escapes)."""

    def _sink(self, node: cst.CSTNode, values, what: str) -> None:
        # (`save_image(fake.detach())`: the graph cut on the way ends here too)
        direct = frozenset().union(*(v.origins for v in values if v.grad is not Grad.NO))
        cut = frozenset().union(*(self.cut_from.get(c.node, ()) for v in values for c in v.cuts))
        if direct:
            self.sinks.append(Use(node, direct, what, self.function))
        if cut - direct:
            self.sinks.append(Use(node, cut - direct, what, self.function, after_cut=True))

    def _escape(self, node: cst.CSTNode, values, what: str) -> None:
        origins = frozenset().union(*(v.origins for v in values if v.grad is not Grad.NO))
        if origins:
            self.escapes.append(Use(node, origins, what, self.function))

    def _opaque_call(self, node: cst.Call, args: list, receiver=None) -> None:
        """A call the analysis cannot see into: a logger's or plotter's method looks at its arguments
        (a sink); anything else may train on them (an escape)."""
        values = [v for _, v in args] + ([receiver] if receiver is not None else [])
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name in SINK_METHODS:
            self._sink(node, values, f"`.{name}()`" if isinstance(func, cst.Attribute) else f"`{name}()`")
        else:
            self._escape(node, values, f"`{name}()`")
