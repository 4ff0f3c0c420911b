# source: https://github.com/pytorch/vision/pull/5469
# label: lookalike GG201
# effect: changed
# note: the EMA writes through p_ema.detach() under no_grad on purpose (the averaged copy is meant to change); the trained model it reads is left as it is
import copy

import torch


class ExponentialMovingAverage:
    """ema_param = decay * ema_param + (1 - decay) * model_param, for every parameter and buffer."""

    def __init__(self, model, decay=0.999):
        self.module = copy.deepcopy(model)
        self.decay = decay
        self.n_averaged = 0

    @torch.no_grad()
    def update_parameters(self, model):
        for p_ema, p_model in zip(self.module.state_dict().values(), model.state_dict().values()):
            p_model_ = p_model.detach()
            if self.n_averaged == 0:
                p_ema.detach().copy_(p_model_)
            else:
                p_ema.detach().copy_(self.decay * p_ema.detach() + (1 - self.decay) * p_model_)
        self.n_averaged += 1


def train_one_epoch(model, ema, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        ema.update_parameters(model)


def observe():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 3))
    ema = ExponentialMovingAverage(model, decay=0.9)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
    train_one_epoch(model, ema, loader, optimizer, torch.nn.CrossEntropyLoss())
    before = model[0].weight.detach().clone()
    ema.update_parameters(model)
    return {"before": before, "after": model[0].weight.detach()}
