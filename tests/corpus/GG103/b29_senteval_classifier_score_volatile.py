# source: https://github.com/facebookresearch/SentEval/pull/42
# label: GG103 42
# effect: graph_built
# note: the classifier's score() builds its batches with `Variable(..., volatile=True)`, a no-op since torch 0.4: each test batch's forward builds a graph while fit() in the same class trains
import numpy as np
import torch
from torch import nn
from torch.autograd import Variable


class PyTorchClassifier(object):
    def __init__(self, inputdim, nclasses, l2reg=0., batch_size=4, seed=1111):
        torch.manual_seed(seed)
        self.inputdim = inputdim
        self.nclasses = nclasses
        self.l2reg = l2reg
        self.batch_size = batch_size
        self.model = nn.Sequential(nn.Linear(self.inputdim, self.nclasses))
        self.loss_fn = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), weight_decay=self.l2reg)

    def trainepoch(self, X, y, epoch_size=1):
        self.model.train()
        for _ in range(epoch_size):
            permutation = np.random.permutation(len(X))
            for i in range(0, len(X), self.batch_size):
                idx = torch.from_numpy(permutation[i:i + self.batch_size]).long()
                Xbatch = Variable(X[idx])
                ybatch = Variable(y[idx])
                output = self.model(Xbatch)
                loss = self.loss_fn(output, ybatch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    def score(self, devX, devy):
        self.model.eval()
        correct = 0
        for i in range(0, len(devX), self.batch_size):
            Xbatch = Variable(devX[i:i + self.batch_size], volatile=True)
            ybatch = Variable(devy[i:i + self.batch_size], volatile=True)
            output = self.model(Xbatch)
            pred = output.data.max(1)[1]
            correct += pred.long().eq(ybatch.data.long()).sum().item()
        accuracy = 1.0 * correct / len(devX)
        return accuracy


def observe():
    from corpus.oracle import hook_outputs

    np.random.seed(0)
    clf = PyTorchClassifier(inputdim=5, nclasses=3)
    clf.trainepoch(torch.randn(8, 5), torch.randint(0, 3, (8,)))
    built = hook_outputs(clf.model)
    clf.score(torch.randn(8, 5), torch.randint(0, 3, (8,)))
    return {"built": built}
