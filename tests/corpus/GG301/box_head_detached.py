# source: https://theneuralbase.pages.dev/pytorch/learn/beginner/detach-stopping-gradient-flow/
# label: GG301 24
# effect: no_grad
# note: the box regression loss is computed on a detached prediction: the box head never learns
import torch
import torch.nn.functional as F


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(4, 8)
        self.cls_head = torch.nn.Linear(8, 3)
        self.box_head = torch.nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.cls_head(h), self.box_head(h)


def train_step(model, images, labels, boxes, optimizer):
    model.train()
    logits, box_pred = model(images)
    loss = F.cross_entropy(logits, labels) + F.smooth_l1_loss(box_pred.detach(), boxes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def observe():
    model = Detector()
    train_step(model, torch.randn(2, 4), torch.tensor([0, 1]), torch.randn(2, 4),
               torch.optim.SGD(model.parameters(), lr=0.1))
    return {"params": [model.box_head.weight]}
