# source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/blob/master/docs/chapter03_DL-basics/3.2_linear-regression-scratch.md
# label: GG103 40
# effect: graph_built
# note: a hand-written model (linreg over w, b made with requires_grad): after each epoch's minibatch SGD the loss over the whole training set is computed with grad on, only to be printed
import random

import torch


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        j = torch.LongTensor(indices[i: min(i + batch_size, num_examples)])
        yield features.index_select(0, j), labels.index_select(0, j)


def linreg(X, w, b):
    return torch.mm(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.view(y_hat.size())) ** 2 / 2


def sgd(params, lr, batch_size):
    for param in params:
        param.data -= lr * param.grad / batch_size


def train(net, loss, features, labels, w, b, num_epochs=3, lr=0.03, batch_size=10):
    for epoch in range(num_epochs):
        for X, y in data_iter(batch_size, features, labels):
            l = loss(net(X, w, b), y).sum()
            l.backward()
            sgd([w, b], lr, batch_size)
            w.grad.data.zero_()
            b.grad.data.zero_()
        train_l = loss(net(features, w, b), labels)
        print('epoch %d, loss %f' % (epoch + 1, train_l.mean().item()))


def observe():
    from corpus.oracle import call_outputs

    random.seed(0)
    num_inputs, num_examples = 2, 40
    features = torch.randn(num_examples, num_inputs)
    labels = features @ torch.tensor([2.0, -3.4]) + 4.2
    w = torch.normal(0, 0.01, (num_inputs, 1)).requires_grad_(True)
    b = torch.zeros(1).requires_grad_(True)
    net, built = call_outputs(linreg, where=lambda args: args[0].shape[0] == num_examples)
    train(net, squared_loss, features, labels, w, b)
    return {"built": built}
