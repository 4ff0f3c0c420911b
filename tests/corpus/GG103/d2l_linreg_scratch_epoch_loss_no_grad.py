# source: https://github.com/d2l-ai/d2l-en/blob/master/chapter_linear-networks/linear-regression-scratch.md
# label: lookalike GG103
# effect: graph_built
# note: the same hand-written linear regression in the newer d2l: the per-epoch loss over the whole set runs under torch.no_grad(), and sgd updates the leaves under no_grad too
import random

import torch


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


def linreg(X, w, b):
    """The linear regression model."""
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    """Minibatch stochastic gradient descent."""
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def fit(net, loss, features, labels, w, b, num_epochs=3, lr=0.03, batch_size=10):
    for epoch in range(num_epochs):
        for X, y in data_iter(batch_size, features, labels):
            l = loss(net(X, w, b), y)
            l.sum().backward()
            sgd([w, b], lr, batch_size)
        with torch.no_grad():
            train_l = loss(net(features, w, b), labels)
            print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')


def observe():
    from corpus.oracle import call_outputs

    random.seed(0)
    num_inputs, num_examples = 2, 40
    features = torch.normal(0, 1, (num_examples, num_inputs))
    labels = (features @ torch.tensor([2.0, -3.4]) + 4.2).reshape(-1, 1)
    w = torch.normal(0, 0.01, size=(num_inputs, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    net, built = call_outputs(linreg, where=lambda args: args[0].shape[0] == num_examples)
    fit(net, squared_loss, features, labels, w, b)
    return {"built": built}
