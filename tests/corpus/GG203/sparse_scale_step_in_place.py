# source: https://github.com/BaiTheBest/SparseLLM/issues/13
# label: GG203 14
# effect: raises "a leaf Variable that requires grad is being used in an in-place operation"
# note: a hand-written gradient step on a leaf that requires grad, in place and outside no_grad
import torch


def refine_scales(s_batch, inputs, targets, s_learning_rate=0.01, steps=3):
    """Fit per-column scales by gradient descent; s_batch is created with requires_grad=True by the caller."""
    for _ in range(steps):
        pred = inputs * s_batch
        loss_s = ((pred - targets) ** 2).mean()
        loss_s.backward()
        s_batch -= s_learning_rate * s_batch.grad
        s_batch.grad.zero_()
    return s_batch.detach()


def observe():
    torch.manual_seed(0)
    s = torch.ones(4, requires_grad=True)
    return {"s": refine_scales(s, torch.randn(8, 4), torch.randn(8, 4))}
