# source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/blob/master/docs/chapter03_DL-basics/3.6_softmax-regression-scratch.md
# label: GG103 31
# effect: graph_built
# note: the hand-written softmax regression `net(X)` over W, b (requires_grad) is evaluated on the test set every epoch with grad on; its outputs only reach argmax and .item()
import torch

num_inputs, num_outputs = 12, 3
W = torch.normal(0, 0.01, (num_inputs, num_outputs))
b = torch.zeros(num_outputs)
W.requires_grad_(requires_grad=True)
b.requires_grad_(requires_grad=True)


def softmax(X):
    X_exp = X.exp()
    partition = X_exp.sum(dim=1, keepdim=True)
    return X_exp / partition


def net(X):
    return softmax(torch.mm(X.view((-1, num_inputs)), W) + b)


def cross_entropy(y_hat, y):
    return - torch.log(y_hat.gather(1, y.view(-1, 1)))


def evaluate_accuracy(data_iter, net):
    acc_sum, n = 0.0, 0
    for X, y in data_iter:
        acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
        n += y.shape[0]
    return acc_sum / n


def sgd(params, lr, batch_size):
    for param in params:
        param.data -= lr * param.grad / batch_size


def train_ch3(net, train_iter, test_iter, loss, num_epochs, batch_size, params=None, lr=None):
    for epoch in range(num_epochs):
        train_l_sum, train_acc_sum, n = 0.0, 0.0, 0
        for X, y in train_iter:
            y_hat = net(X)
            l = loss(y_hat, y).sum()
            for param in params:
                if param.grad is not None:
                    param.grad.data.zero_()
            l.backward()
            sgd(params, lr, batch_size)
            train_l_sum += l.item()
            train_acc_sum += (y_hat.argmax(dim=1) == y).sum().item()
            n += y.shape[0]
        test_acc = evaluate_accuracy(test_iter, net)
        print('epoch %d, loss %.4f, train acc %.3f, test acc %.3f'
              % (epoch + 1, train_l_sum / n, train_acc_sum / n, test_acc))


def observe():
    from corpus.oracle import call_outputs

    train_iter = [(torch.randn(8, num_inputs), torch.randint(0, num_outputs, (8,))) for _ in range(3)]
    test_iter = [(torch.randn(5, num_inputs), torch.randint(0, num_outputs, (5,))) for _ in range(2)]
    model, built = call_outputs(net, where=lambda args: args[0].shape[0] == 5)
    train_ch3(model, train_iter, test_iter, cross_entropy, 2, 8, [W, b], 0.1)
    return {"built": built}
