# source: https://cheesebytes.com/cave/deep-supervision
# label: lookalike GG101
# effect: activations_alive
# note: every side head's loss kept in a list and summed with sum(genexpr) into the loss that is back-propagated
import torch
from torch import nn


class DeeplySupervisedNet(nn.Module):
    def __init__(self, width=8, depth=3, n_classes=3):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth))
        self.heads = nn.ModuleList(nn.Linear(width, n_classes) for _ in range(depth))

    def forward(self, x):
        outputs = []
        for block, head in zip(self.blocks, self.heads):
            x = block(x)
            outputs.append(head(x))
        return outputs


def train_step(model, x, y, optimizer, criterion, aux_weights):
    optimizer.zero_grad()
    side_losses = []
    for out in model(x):
        side_losses.append(criterion(out, y))
    loss = sum(w * l for w, l in zip(aux_weights, side_losses))
    loss.backward()
    optimizer.step()
    return side_losses


def observe():
    model = DeeplySupervisedNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    kept = train_step(model, torch.randn(4, 8), torch.randint(0, 3, (4,)), opt, nn.CrossEntropyLoss(), [0.3, 0.3, 1.0])
    return {"kept": kept}
