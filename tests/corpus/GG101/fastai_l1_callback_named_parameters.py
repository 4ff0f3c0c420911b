# source: https://forums.fast.ai/t/correct-way-of-incorporating-l1-regularisation/59284
# label: lookalike GG101
# effect: no_grad
# note: the callback's comprehension over named_parameters() builds one |w| sum per weight and adds their sum into the loss of the same step, which is back-propagated: keeping those graphs is what training needs
import torch
import torch.nn as nn


class L1Loss:
    def __init__(self, model, beta=0.2):
        self.model = model
        self.beta = beta

    def on_backward_begin(self, last_loss):
        weights = [torch.abs(v).sum() for k, v in self.model.named_parameters() if not 'bias' in k]
        last_loss = last_loss + self.beta * sum(weights)
        return {'last_loss': last_loss}


def fit(model, batches, loss_func, opt, callbacks):
    for xb, yb in batches:
        loss = loss_func(model(xb), yb)
        for cb in callbacks:
            loss = cb.on_backward_begin(loss)['last_loss']
        opt.zero_grad()
        loss.backward()
        opt.step()


def observe():
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    batches = [(torch.zeros(3, 6), torch.zeros(3, dtype=torch.long))]
    fit(model, batches, nn.CrossEntropyLoss(), opt, [L1Loss(model)])
    return {"params": [model[0].weight]}
