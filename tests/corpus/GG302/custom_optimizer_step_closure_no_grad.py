# source: https://github.com/Lightning-AI/pytorch-lightning/issues/18222
# label: GG302 41
# effect: raises "element 0 of tensors does not require grad"
# note: the third-party optimizer's step() is decorated with @torch.no_grad() and calls the closure without re-enabling grad, so the loss the closure back-propagates has no graph (the workaround in the thread: torch.set_grad_enabled(True) in the step, or torch's own AdamW)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                beta1, beta2 = group["betas"]
                update = exp_avg.mul(beta1).add(p.grad, alpha=1 - beta1)
                p.add_(torch.sign(update), alpha=-group["lr"])
                exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)
        return loss


def fit(model, batches, optimizer):
    model.train()
    for x, y in batches:
        def closure():
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        optimizer.step(closure)


def observe():
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    fit(model, [(torch.randn(4, 6), torch.randint(0, 3, (4,)))], Lion(model.parameters()))
    return {}
