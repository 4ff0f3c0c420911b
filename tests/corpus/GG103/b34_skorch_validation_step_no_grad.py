# source: https://github.com/skorch-dev/skorch/issues/218
# label: lookalike GG103
# effect: graph_unused
# note: skorch PR 219's fix: validation_step() runs the forward and the loss under torch.no_grad(); the training step, through the same infer(), still builds and back-propagates its graph
import numpy as np
import torch


class History(list):
    def new_epoch(self):
        self.append({"batches": []})

    def record_batch(self, key, value):
        self[-1]["batches"].append({key: value})


class NeuralNet(object):
    def __init__(self, module, criterion, optimizer=torch.optim.SGD, lr=0.01, max_epochs=10, batch_size=128):
        self.module = module
        self.criterion = criterion
        self.optimizer = optimizer
        self.lr = lr
        self.max_epochs = max_epochs
        self.batch_size = batch_size

    def initialize(self):
        self.module_ = self.module()
        self.criterion_ = self.criterion()
        self.optimizer_ = self.optimizer(self.module_.parameters(), lr=self.lr)
        self.history = History()
        return self

    def validation_step(self, Xi, yi):
        self.module_.eval()
        with torch.no_grad():
            y_pred = self.infer(Xi)
            return self.get_loss(y_pred, yi, X=Xi, train=False)

    def train_step(self, Xi, yi, optimizer):
        self.module_.train()
        optimizer.zero_grad()
        y_pred = self.infer(Xi)
        loss = self.get_loss(y_pred, yi, X=Xi, train=True)
        loss.backward()
        optimizer.step()
        return loss

    def infer(self, x):
        return self.module_(x)

    def get_loss(self, y_pred, y_true, X=None, train=False):
        return self.criterion_(y_pred, y_true)

    def get_iterator(self, X, y):
        for start in range(0, len(X), self.batch_size):
            yield X[start:start + self.batch_size], y[start:start + self.batch_size]

    def fit_loop(self, X, y, X_valid, y_valid, epochs=None):
        epochs = epochs if epochs is not None else self.max_epochs
        for _ in range(epochs):
            self.history.new_epoch()
            for Xi, yi in self.get_iterator(X, y):
                loss = self.train_step(Xi, yi, self.optimizer_)
                self.history.record_batch("train_loss", loss.item())
            for Xi, yi in self.get_iterator(X_valid, y_valid):
                loss = self.validation_step(Xi, yi)
                self.history.record_batch("valid_loss", loss.item())
        return self

    def fit(self, X, y, X_valid, y_valid):
        self.initialize()
        X, y = torch.as_tensor(np.asarray(X, dtype=np.float32)), torch.as_tensor(np.asarray(y))
        X_valid, y_valid = torch.as_tensor(np.asarray(X_valid, dtype=np.float32)), torch.as_tensor(np.asarray(y_valid))
        return self.fit_loop(X, y, X_valid, y_valid)


def observe():
    from corpus.oracle import output_flows

    class ClassifierModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = torch.nn.Linear(6, 10)
            self.output = torch.nn.Linear(10, 2)

        def forward(self, X):
            return self.output(torch.relu(self.dense(X)))

    net = NeuralNet(ClassifierModule, torch.nn.CrossEntropyLoss, max_epochs=1, batch_size=4).initialize()
    flows = output_flows(net.module_)
    X, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    X_valid, y_valid = torch.randn(8, 6), torch.randint(0, 2, (8,))
    net.fit_loop(X, y, X_valid, y_valid)
    return {"flows": flows}
