# source: https://github.com/pytorch/pytorch/issues/6990
# label: GG201 19
# effect: raises "modified by an inplace operation"
# note: the pseudo-labels are a detach() of the softmax probabilities, then thresholded in place: the write also zeroes `probs`, which the entropy term still reads and softmax saved for backward (zou3519's example in the issue: out.detach().zero_() changes out, and backward raises)
import torch
import torch.nn as nn
import torch.nn.functional as F


class SharpenedConsistencyLoss(nn.Module):
    def __init__(self, threshold=0.3, entropy_weight=0.1):
        super().__init__()
        self.threshold = threshold
        self.entropy_weight = entropy_weight

    def forward(self, logits_weak, logits_strong):
        probs = torch.softmax(logits_weak, dim=1)
        targets = probs.detach()
        targets[targets < self.threshold] = 0.0
        targets = targets / targets.sum(dim=1, keepdim=True).clamp_min(1e-8)
        entropy = -(probs * torch.log(probs + 1e-8)).sum(dim=1).mean()
        consistency = -(targets * F.log_softmax(logits_strong, dim=1)).sum(dim=1).mean()
        return consistency + self.entropy_weight * entropy


def train_step(model, criterion, optimizer, weak_batch, strong_batch):
    optimizer.zero_grad()
    loss = criterion(model(weak_batch), model(strong_batch))
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    model = nn.Linear(6, 4)
    x = torch.randn(8, 6)
    train_step(model, SharpenedConsistencyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), x, x + 0.1)
    return {}
