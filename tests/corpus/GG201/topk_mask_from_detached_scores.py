# source: https://github.com/pytorch/pytorch/issues/7860
# label: GG201 12
# effect: wrong_grad
# note: a mask shaped like the scores made by zeroing scores.detach(): detach() shares storage (as the issue found, x.detach().zero_() zeroes x), so the loss is computed from the mask, not the scores
import torch


def topk_regression_loss(model, x, targets, k=2):
    """Squared error on the k highest-scoring outputs of each row only."""
    scores = model(x)
    mask = scores.detach()
    mask.zero_()
    mask.scatter_(-1, scores.topk(k, dim=-1).indices, 1.0)
    return (((scores - targets) ** 2) * mask).sum()


def observe():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 5)
    x, targets = torch.randn(3, 4), torch.randn(3, 5)
    topk_regression_loss(model, x, targets).backward()
    got = model.weight.grad.clone()
    model.zero_grad()
    scores = model(x)
    mask = torch.zeros_like(scores).scatter_(-1, scores.topk(2, dim=-1).indices, 1.0)
    (((scores - targets) ** 2) * mask).sum().backward()
    return {"grad": got, "expected": model.weight.grad}
