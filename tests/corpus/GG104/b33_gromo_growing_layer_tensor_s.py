# source: https://github.com/growingnet/gromo/issues/137
# label: GG104 21
# effect: graph_grows
# note: the growing layer accumulates the second-moment statistic of its input in forward() with grad on; its input is the previous layer's activation, so every batch's addition stays in the graph of tensor_s, which the next call reads and extends (the issue: updates of the tensors have requires_grad=True)
import torch
import torch.nn as nn
import torch.nn.functional as F


class LinearGrowingModule(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.layer = nn.Linear(in_features, out_features)
        self.store_input = False
        self.tensor_s = torch.zeros(in_features + 1, in_features + 1)
        self.samples = 0

    def forward(self, x):
        if self.store_input:
            x_ext = torch.cat([x, x.new_ones(x.shape[0], 1)], dim=1)
            self.tensor_s = self.tensor_s + x_ext.T @ x_ext
            self.samples += x.shape[0]
        return self.layer(x)

    def covariance(self):
        return self.tensor_s / max(self.samples, 1)


class GrowingMLP(nn.Module):
    def __init__(self, in_features=5, hidden=8, out_features=3):
        super().__init__()
        self.first = LinearGrowingModule(in_features, hidden)
        self.second = LinearGrowingModule(hidden, out_features)

    def forward(self, x):
        return self.second(F.relu(self.first(x)))


def train_with_statistics(model, loader, optimizer):
    model.second.store_input = True
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    model.second.store_input = False
    return model.second.covariance()


def observe():
    from corpus.oracle import graph_size

    model = GrowingMLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sizes = []
    for _ in range(3):
        train_with_statistics(model, [(torch.randn(4, 5), torch.randint(0, 3, (4,)))], optimizer)
        sizes.append(graph_size(model.second.tensor_s))
    return {"sizes": sizes}
