# source: https://github.com/loudinthecloud/pytorch-ntm/issues/16
# label: GG104 26
# effect: raises "Trying to backward through the graph a second time"
# note: the same NTM trained with init_sequence() called once before the loop: write() keeps rewriting self.memory from the last batch's graph
import torch
import torch.nn.functional as F
from torch import nn


class NTMMemory(nn.Module):
    def __init__(self, N, M):
        super().__init__()
        self.N, self.M = N, M
        self.register_buffer("mem_bias", torch.full((N, M), 1e-6))

    def reset(self, batch_size):
        self.batch_size = batch_size
        self.memory = self.mem_bias.clone().repeat(batch_size, 1, 1)

    def read(self, w):
        return torch.matmul(w.unsqueeze(1), self.memory).squeeze(1)

    def write(self, w, e, a):
        erase = torch.matmul(w.unsqueeze(-1), e.unsqueeze(1))
        add = torch.matmul(w.unsqueeze(-1), a.unsqueeze(1))
        self.memory = self.memory * (1 - erase) + add


class NTM(nn.Module):
    def __init__(self, num_inputs=4, num_outputs=4, controller_size=12, N=6, M=5):
        super().__init__()
        self.memory = NTMMemory(N, M)
        self.controller = nn.LSTMCell(num_inputs + M, controller_size)
        self.addressing = nn.Linear(controller_size, N)
        self.erase_add = nn.Linear(controller_size, 2 * M)
        self.fc = nn.Linear(controller_size + M, num_outputs)
        self.controller_size, self.M = controller_size, M

    def init_sequence(self, batch_size):
        self.memory.reset(batch_size)

    def forward(self, x):
        batch_size = x.size(0)
        state = (torch.zeros(batch_size, self.controller_size), torch.zeros(batch_size, self.controller_size))
        h, c = self.controller(torch.cat([x, torch.zeros(batch_size, self.M)], dim=1), state)
        w = F.softmax(self.addressing(h), dim=1)
        e, a = self.erase_add(h).chunk(2, dim=1)
        self.memory.write(w, torch.sigmoid(e), a)
        return torch.sigmoid(self.fc(torch.cat([h, self.memory.read(w)], dim=1)))


def train(net, optimizer, criterion, batches, batch_size):
    net.init_sequence(batch_size)
    for X, Y in batches:
        optimizer.zero_grad()
        y_out = torch.stack([net(X[i]) for i in range(X.size(0))])
        loss = criterion(y_out, Y)
        loss.backward()
        optimizer.step()


def observe():
    net = NTM()
    batches = []
    for _ in range(3):
        X = torch.randint(0, 2, (3, 2, 4)).float()
        batches.append((X, X.clone()))
    train(net, torch.optim.RMSprop(net.parameters(), lr=1e-4, momentum=0.9), nn.BCELoss(), batches, 2)
    return {}
