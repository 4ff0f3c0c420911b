# source: https://github.com/DeepReinforcementLearning/DeepReinforcementLearningInAction/issues/42
# label: lookalike GG101
# effect: graph_kept
# note: the advice of the error the issue quotes ("Use tensor.detach().numpy() instead"): each loss is appended as loss.detach().numpy(), a NumPy scalar that plots and holds no graph
import numpy as np
import torch


def nn(x, w1, w2):
    l1 = x @ w1
    l1 = torch.relu(l1)
    l2 = l1 @ w2
    return l2


def init_weights(n_in=784, n_hidden=200, n_out=10):
    w1 = torch.randn(n_in, n_hidden, requires_grad=True)
    w2 = torch.randn(n_hidden, n_out, requires_grad=True)
    return w1, w2


def train(train_data, train_labels, w1, w2, lr=0.0001, epochs=2500, batch_size=1000):
    losses = []
    lossfn = torch.nn.CrossEntropyLoss()
    for i in range(epochs):
        rid = np.random.randint(0, train_data.shape[0], size=batch_size)
        x = train_data[rid].float().flatten(start_dim=1)
        x /= x.max()
        pred = nn(x, w1, w2)
        target = train_labels[rid]
        loss = lossfn(pred, target)
        losses.append(loss.detach().numpy())
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
    return losses


def observe():
    np.random.seed(0)
    images = torch.randint(0, 256, (50, 8, 8), dtype=torch.uint8)
    labels = torch.randint(0, 10, (50,))
    w1, w2 = init_weights(n_in=64, n_hidden=16)
    losses = train(images, labels, w1, w2, epochs=3, batch_size=10)
    return {"kept": losses}
