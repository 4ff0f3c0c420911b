# source: https://github.com/DequanWang/tent/blob/7d236b42a3020f488a75d041f31a3f4ef4a521ea/tent.py
# label: lookalike GG103
# effect: no_grad_arrived
# note: test-time adaptation: the "test" forward is trained - its entropy is back-propagated into the BatchNorm affine parameters, under @torch.enable_grad() inside the caller's no_grad accuracy loop
from copy import deepcopy

import torch
import torch.nn as nn


class Tent(nn.Module):
    """Tent adapts a model by entropy minimization during testing."""

    def __init__(self, model, optimizer, steps=1, episodic=False):
        super().__init__()
        self.model = model
        self.optimizer = optimizer
        self.steps = steps
        self.episodic = episodic
        self.model_state = deepcopy(model.state_dict())
        self.optimizer_state = deepcopy(optimizer.state_dict())

    def forward(self, x):
        if self.episodic:
            self.reset()
        for _ in range(self.steps):
            outputs = forward_and_adapt(x, self.model, self.optimizer)
        return outputs

    def reset(self):
        self.model.load_state_dict(self.model_state, strict=True)
        self.optimizer.load_state_dict(self.optimizer_state)


def softmax_entropy(x: torch.Tensor) -> torch.Tensor:
    """Entropy of softmax distribution from logits."""
    return -(x.softmax(1) * x.log_softmax(1)).sum(1)


@torch.enable_grad()  # ensure grads in possible no grad context for testing
def forward_and_adapt(x, model, optimizer):
    outputs = model(x)
    loss = softmax_entropy(outputs).mean(0)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return outputs


def collect_params(model):
    params, names = [], []
    for nm, m in model.named_modules():
        if isinstance(m, nn.BatchNorm1d):
            for np_, p in m.named_parameters():
                if np_ in ['weight', 'bias']:
                    params.append(p)
                    names.append(f"{nm}.{np_}")
    return params, names


def configure_model(model):
    model.train()
    model.requires_grad_(False)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.requires_grad_(True)
            m.track_running_stats = False
            m.running_mean = None
            m.running_var = None
    return model


def clean_accuracy(model, batches):
    acc = 0.
    n = 0
    with torch.no_grad():
        for x, y in batches:
            output = model(x)
            acc += (output.max(1)[1] == y).float().sum()
            n += y.shape[0]
    return acc.item() / n


def observe():
    from corpus.oracle import grad_arrivals

    base = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 3))
    model = configure_model(base)
    params, _ = collect_params(model)
    arrived = grad_arrivals(params)
    tented = Tent(model, torch.optim.SGD(params, lr=1e-3, momentum=0.9))
    clean_accuracy(tented, [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(2)])
    return {"arrived": arrived}
