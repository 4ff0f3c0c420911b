# source: https://github.com/BaiTheBest/SparseLLM/issues/13
# label: GG203 13
# effect: raises "a leaf Variable that requires grad is being used in an in-place operation"
# note: the auxiliary variable s_batch is a leaf made with requires_grad and updated by hand with `-=` after backward, outside no_grad
import torch


def update_s(s, W, inputs, targets, chunk, s_learning_rate=0.1, iters=2):
    s_batch = s[:, chunk].detach().clone().float().requires_grad_(True)
    for _ in range(iters):
        loss_s = ((inputs[:, chunk] @ W - targets[:, chunk] @ W * s_batch.mean()) ** 2).mean() + s_batch.pow(2).mean()
        loss_s.backward()
        s_batch -= s_learning_rate * s_batch.grad
        s_batch.grad.zero_()
    s[:, chunk] = s_batch.detach().to(dtype=s.dtype)
    return s


def observe():
    s = torch.randn(3, 4)
    update_s(s, torch.randn(2, 2), torch.randn(3, 4), torch.randn(3, 4), slice(0, 2))
    return {}
