# source: https://github.com/loudinthecloud/pytorch-ntm/issues/16
# label: lookalike GG104
# effect: raises "Trying to backward through the graph a second time"
# note: the NTM memory is rewritten from a graph inside forward's write() on purpose (BPTT over one sequence), and init_sequence() rebuilds it from the buffer before every batch
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
        self.prev_mem = self.memory
        erase = torch.matmul(w.unsqueeze(-1), e.unsqueeze(1))
        add = torch.matmul(w.unsqueeze(-1), a.unsqueeze(1))
        self.memory = self.prev_mem * (1 - erase) + add


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
        self.state = (torch.zeros(batch_size, self.controller_size), torch.zeros(batch_size, self.controller_size))
        self.prev_read = torch.zeros(batch_size, self.M)

    def forward(self, x):
        h, c = self.controller(torch.cat([x, self.prev_read], dim=1), self.state)
        w = F.softmax(self.addressing(h), dim=1)
        e, a = self.erase_add(h).chunk(2, dim=1)
        self.memory.write(w, torch.sigmoid(e), a)
        self.prev_read = self.memory.read(w)
        self.state = (h, c)
        return torch.sigmoid(self.fc(torch.cat([h, self.prev_read], dim=1)))


def train_batch(net, optimizer, criterion, X, Y):
    optimizer.zero_grad()
    inp_seq_len, batch_size = X.size(0), X.size(1)
    net.init_sequence(batch_size)
    for i in range(inp_seq_len):
        net(X[i])
    y_out = torch.stack([net(torch.zeros(batch_size, X.size(2))) for _ in range(Y.size(0))])
    loss = criterion(y_out, Y)
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    net = NTM()
    opt = torch.optim.RMSprop(net.parameters(), lr=1e-4, momentum=0.9)
    for _ in range(3):
        X = torch.randint(0, 2, (3, 2, 4)).float()
        train_batch(net, opt, nn.BCELoss(), X, X.clone())
    return {}
