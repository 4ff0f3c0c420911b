# source: https://lightning.ai/docs/pytorch/stable/_sources/common/tbptt.rst.txt
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: manual truncated BPTT: each time split is back-propagated, then `hiddens = hiddens.detach()` truncates before the next
import torch
from torch import nn


class ParityRNN(nn.Module):
    def __init__(self, hidden_dim=20):
        super().__init__()
        self.rnn = nn.GRU(1, hidden_dim, batch_first=True)
        self.head = nn.Linear(hidden_dim, 1)

    def forward(self, x, y, hiddens):
        out, hiddens = self.rnn(x, hiddens)
        loss = nn.functional.binary_cross_entropy_with_logits(self.head(out), y)
        return loss, hiddens


def training_step(my_rnn, batch, optimizer, truncated_bptt_steps=4, hidden_dim=20):
    x, y = batch
    hiddens = torch.zeros(1, x.size(0), hidden_dim)
    losses = []
    for x_split, y_split in zip(x.split(truncated_bptt_steps, dim=1), y.split(truncated_bptt_steps, dim=1)):
        optimizer.zero_grad()
        loss, hiddens = my_rnn(x_split, y_split, hiddens)
        loss.backward()
        optimizer.step()
        hiddens = hiddens.detach()
        losses.append(loss.item())
    return sum(losses) / len(losses)


def observe():
    model = ParityRNN()
    x = torch.randint(0, 2, (3, 12, 1)).float()
    y = (x.cumsum(1) % 2)
    training_step(model, (x, y), torch.optim.Adam(model.parameters(), lr=1e-3))
    return {}
