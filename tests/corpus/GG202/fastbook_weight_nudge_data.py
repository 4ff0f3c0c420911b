# source: https://github.com/fastai/fastbook/pull/471
# label: lookalike GG202
# effect: raises "a view of a leaf Variable that requires grad is being used in an in-place operation"
# note: nudging one weight of a leaf tensor through .data between steps (the book's fix): no graph holds it, nothing to corrupt
import torch


def nudge_first_weight(weights, factor=1.0001):
    """See how the loss reacts to a small change of one parameter."""
    weights[0].data *= factor
    return weights


def observe():
    torch.manual_seed(0)
    weights = torch.randn(3, requires_grad=True)
    nudge_first_weight(weights)
    loss = (weights ** 2).sum()
    loss.backward()
    return {"grad": weights.grad}
