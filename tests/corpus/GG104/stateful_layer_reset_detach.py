# source: https://github.com/synsense/sinabs/issues/5
# label: lookalike GG104
# effect: raises "Trying to backward through the graph a second time"
# note: the fix: reset_states() zeroes each buffer and detach_()es it, so every batch's v_mem starts with no graph
import torch
from torch import nn


class StatefulLayer(nn.Module):
    def __init__(self, state_names):
        super().__init__()
        for name in state_names:
            self.register_buffer(name, torch.zeros(0))

    def is_state_initialised(self):
        return all(buffer.numel() > 0 for buffer in self.buffers())

    def init_state_with_shape(self, shape):
        for name, _ in list(self.named_buffers()):
            self.register_buffer(name, torch.zeros(shape))

    def reset_states(self, randomize=False):
        """Reset the state/buffers in a layer."""
        if self.is_state_initialised():
            for buffer in self.buffers():
                if randomize:
                    torch.nn.init.uniform_(buffer).detach_()
                else:
                    buffer.zero_().detach_()


class LIF(StatefulLayer):
    def __init__(self, alpha=0.9, threshold=1.0):
        super().__init__(["v_mem"])
        self.alpha, self.threshold = alpha, threshold

    def forward(self, x):
        if not self.is_state_initialised() or self.v_mem.shape != x[:, 0].shape:
            self.init_state_with_shape(x[:, 0].shape)
        spikes = []
        for t in range(x.shape[1]):
            self.v_mem = self.alpha * self.v_mem + x[:, t]
            spk = torch.sigmoid(4 * (self.v_mem - self.threshold))
            self.v_mem = self.v_mem - spk * self.threshold
            spikes.append(spk)
        return torch.stack(spikes, 1)


def observe():
    model = nn.Sequential(nn.Linear(5, 4), LIF())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x, target = torch.rand(2, 6, 5), torch.rand(2, 6, 4)
        model[1].reset_states()
        opt.zero_grad()
        nn.functional.mse_loss(model(x), target).backward()
        opt.step()
    return {}
