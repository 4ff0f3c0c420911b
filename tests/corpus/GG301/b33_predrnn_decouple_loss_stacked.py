# source: https://github.com/thuml/predrnn-pytorch/issues/11
# label: lookalike GG301
# effect: no_grad
# note: the maintainers' fix: the per-step decoupling losses are joined with torch.stack, which keeps their graphs, so the shared adapter learns from the decoupling term
import torch
import torch.nn as nn
import torch.nn.functional as F


class SpatioTemporalLSTMCell(nn.Module):
    def __init__(self, in_channel, num_hidden):
        super().__init__()
        self.x_gates = nn.Linear(in_channel, 4 * num_hidden)
        self.h_gates = nn.Linear(num_hidden, 4 * num_hidden)
        self.m_gates = nn.Linear(num_hidden, 3 * num_hidden)
        self.conv_last = nn.Linear(2 * num_hidden, num_hidden)

    def forward(self, x_t, h_t, c_t, m_t):
        i_t, f_t, g_t, o_t = (self.x_gates(x_t) + self.h_gates(h_t)).chunk(4, dim=-1)
        delta_c = torch.sigmoid(i_t) * torch.tanh(g_t)
        c_new = torch.sigmoid(f_t) * c_t + delta_c
        i_m, f_m, g_m = self.m_gates(m_t).chunk(3, dim=-1)
        delta_m = torch.sigmoid(i_m) * torch.tanh(g_m)
        m_new = torch.sigmoid(f_m) * m_t + delta_m
        h_new = torch.sigmoid(o_t) * torch.tanh(self.conv_last(torch.cat([c_new, m_new], dim=-1)))
        return h_new, c_new, m_new, delta_c, delta_m


class RNN(nn.Module):
    def __init__(self, num_layers, num_hidden, frame_channel, decouple_beta=0.1):
        super().__init__()
        self.num_layers = num_layers
        self.num_hidden = num_hidden
        self.decouple_beta = decouple_beta
        self.cell_list = nn.ModuleList(
            [SpatioTemporalLSTMCell(frame_channel if i == 0 else num_hidden, num_hidden) for i in range(num_layers)])
        self.conv_last = nn.Linear(num_hidden, frame_channel, bias=False)
        self.adapter = nn.Linear(num_hidden, num_hidden, bias=False)
        self.MSE_criterion = nn.MSELoss()

    def forward(self, frames):
        batch, total_length, _ = frames.shape
        h_t = [frames.new_zeros(batch, self.num_hidden) for _ in range(self.num_layers)]
        c_t = [frames.new_zeros(batch, self.num_hidden) for _ in range(self.num_layers)]
        delta_c_list = [None] * self.num_layers
        delta_m_list = [None] * self.num_layers
        memory = frames.new_zeros(batch, self.num_hidden)
        next_frames = []
        decouple_loss = []
        for t in range(total_length - 1):
            net = frames[:, t]
            for i in range(self.num_layers):
                inp = net if i == 0 else h_t[i - 1]
                h_t[i], c_t[i], memory, delta_c, delta_m = self.cell_list[i](inp, h_t[i], c_t[i], memory)
                delta_c_list[i] = F.normalize(self.adapter(delta_c), dim=-1)
                delta_m_list[i] = F.normalize(self.adapter(delta_m), dim=-1)
            x_gen = self.conv_last(h_t[self.num_layers - 1])
            next_frames.append(x_gen)
            for i in range(self.num_layers):
                decouple_loss.append(
                    torch.mean(torch.abs(torch.cosine_similarity(delta_c_list[i], delta_m_list[i], dim=-1))))
        decouple_loss = torch.mean(torch.stack(decouple_loss, dim=0))
        next_frames = torch.stack(next_frames, dim=1)
        loss = self.MSE_criterion(next_frames, frames[:, 1:]) + self.decouple_beta * decouple_loss
        return next_frames, loss


def train(model, optimizer, frames):
    optimizer.zero_grad()
    _next_frames, loss = model(frames)
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    model = RNN(num_layers=2, num_hidden=8, frame_channel=4)
    train(model, torch.optim.Adam(model.parameters(), lr=1e-3), torch.randn(3, 5, 4))
    return {"params": list(model.adapter.parameters())}
