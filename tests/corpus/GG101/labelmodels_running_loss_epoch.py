# source: https://github.com/BatsResearch/labelmodels/issues/4
# label: GG101 41
# effect: graph_kept
# note: running_loss sums the non-detached batch losses of the epoch (each already back-propagated): the graph of every batch stays reachable; the fix is running_loss += loss.item()
import logging

import torch
from torch import nn


class LabelModel(nn.Module):
    def __init__(self, num_classes, num_lfs, init_acc=.9, acc_prior=0.025):
        super().__init__()
        self.num_classes = num_classes
        self.num_lfs = num_lfs
        self.acc_prior = acc_prior
        self.accuracy = nn.Parameter(torch.full((num_lfs,), init_acc))
        self.class_balance = nn.Parameter(torch.zeros(num_classes))

    def forward(self, votes):
        one_hot = nn.functional.one_hot(votes, self.num_classes).float()
        scores = (one_hot * self.accuracy.view(1, -1, 1)).sum(1)
        return torch.logsumexp(scores + self.class_balance, dim=1)

    def _get_regularization_loss(self):
        return self.acc_prior * torch.norm(self.accuracy - 0.5)

    def _do_estimate_label_model(self, batches, epochs=2, step_size=0.01):
        optimizer = torch.optim.SGD(self.parameters(), lr=step_size)
        epoch_loss = None
        for epoch in range(epochs):
            logging.info('Epoch {}/{}'.format(epoch + 1, epochs))
            running_loss = 0.0
            for i_batch, inputs in enumerate(batches):
                optimizer.zero_grad()
                log_likelihood = self(inputs)
                loss = -1 * torch.mean(log_likelihood)
                loss += self._get_regularization_loss()
                loss.backward()
                optimizer.step()
                running_loss += loss
            epoch_loss = running_loss / len(batches)
        return epoch_loss


def observe():
    model = LabelModel(num_classes=2, num_lfs=3)
    batches = [torch.randint(0, 2, (5, 3)) for _ in range(3)]
    return {"kept": model._do_estimate_label_model(batches)}
