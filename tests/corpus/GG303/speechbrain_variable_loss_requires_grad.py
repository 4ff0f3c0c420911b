# source: https://github.com/speechbrain/speechbrain/issues/735
# label: GG303 25
# effect: no_grad_arrived
# note: the objective is computed from hard (argmax) predictions, so it has no graph; wrapping it as Variable(loss, requires_grad=True) silences "element 0 of tensors does not require grad" and the model never learns
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class MaskBrain:
    def __init__(self, modules, optimizer):
        self.modules = modules
        self.optimizer = optimizer

    def compute_forward(self, batch):
        feats = torch.log1p(batch["sig"].abs())
        predict = self.modules["model"](feats)
        return {"predict": predict}

    def compute_objectives(self, predictions, batch):
        hard = F.one_hot(predictions["predict"].argmax(-1), predictions["predict"].size(-1)).float()
        target = F.one_hot(batch["label"], hard.size(-1)).float()
        dice = 1 - (2 * (hard * target).sum() + 1) / (hard.sum() + target.sum() + 1)
        loss = Variable(dice, requires_grad=True)
        return loss

    def fit_batch(self, batch):
        outputs = self.compute_forward(batch)
        loss = self.compute_objectives(outputs, batch)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach()


def observe():
    from corpus.oracle import grad_arrivals

    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
    arrived = grad_arrivals(list(model.parameters()))
    brain = MaskBrain({"model": model}, torch.optim.Adam(model.parameters(), lr=1e-3))
    brain.fit_batch({"sig": torch.randn(4, 10), "label": torch.randint(0, 3, (4,))})
    return {"arrived": arrived}
