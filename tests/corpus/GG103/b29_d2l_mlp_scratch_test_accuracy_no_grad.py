# source: https://d2l.smola.org/slides/pytorch/chapter_multilayer-perceptrons/mlp-implementation.html
# label: lookalike GG103
# effect: graph_built
# note: a hand-written MLP over W1, b1, W2, b2 made with requires_grad; the per-epoch test accuracy runs under `torch.no_grad()`, so its forwards build no graph
import torch
from torch import nn

num_inputs, num_outputs, num_hiddens = 12, 3, 8

W1 = nn.Parameter(torch.randn(num_inputs, num_hiddens, requires_grad=True) * 0.01)
b1 = nn.Parameter(torch.zeros(num_hiddens, requires_grad=True))
W2 = nn.Parameter(torch.randn(num_hiddens, num_outputs, requires_grad=True) * 0.01)
b2 = nn.Parameter(torch.zeros(num_outputs, requires_grad=True))
params = [W1, b1, W2, b2]


def relu(X):
    a = torch.zeros_like(X)
    return torch.max(X, a)


def net(X):
    X = X.reshape((-1, num_inputs))
    H = relu(X @ W1 + b1)
    return H @ W2 + b2


def accuracy_on(data_iter, forward):
    hits, seen = 0.0, 0
    with torch.no_grad():
        for X, y in data_iter:
            logits = forward(X)
            hits += float((logits.argmax(dim=1) == y).sum())
            seen += y.numel()
    return hits / seen


def train_scratch(forward, train_iter, test_iter, num_epochs, lr):
    loss = nn.CrossEntropyLoss(reduction="none")
    updater = torch.optim.SGD(params, lr=lr)
    for epoch in range(num_epochs):
        for X, y in train_iter:
            l = loss(forward(X), y)
            updater.zero_grad()
            l.mean().backward()
            updater.step()
        test_acc = accuracy_on(test_iter, forward)
        print(f"epoch {epoch + 1}, test acc {test_acc:.3f}")


def main(train_iter, test_iter):
    train_scratch(net, train_iter, test_iter, num_epochs=2, lr=0.1)


def observe():
    from corpus.oracle import call_outputs

    g = globals()
    g["net"], built = call_outputs(g["net"], where=lambda args: args[0].shape[0] == 5)
    train_iter = [(torch.randn(4, 3, 4), torch.randint(0, 3, (4,))) for _ in range(2)]
    test_iter = [(torch.randn(5, 3, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
    main(train_iter, test_iter)
    return {"built": built}
