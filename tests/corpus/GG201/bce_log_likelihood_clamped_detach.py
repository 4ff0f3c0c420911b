# source: https://github.com/pytorch/pytorch/issues/6990
# label: GG201 13
# effect: raises "one of the variables needed for gradient computation has been modified by an inplace operation"
# note: the probabilities are detached for a logged log-likelihood and clamped in place: the clamp writes into the sigmoid output that sigmoid and the loss saved for backward
import torch
import torch.nn.functional as F


def train_step(model, optimizer, x, y, eps=1e-6):
    optimizer.zero_grad()
    probs = torch.sigmoid(model(x)).squeeze(-1)
    p = probs.detach()
    p.clamp_(eps, 1 - eps)
    log_lik = (y * p.log() + (1 - y) * (1 - p).log()).mean().item()
    loss = F.binary_cross_entropy(probs, y)
    loss.backward()
    optimizer.step()
    return loss.item(), log_lik


def observe():
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,)).float()
    return {"step": train_step(model, optimizer, x, y)}
