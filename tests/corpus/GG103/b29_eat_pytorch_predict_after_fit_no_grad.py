# source: https://github.com/lyhue1991/eat_pytorch_in_20_days/pull/3
# label: lookalike GG103
# effect: graph_built
# note: the notebook trains the network and then predicts on the validation loader inside `with torch.no_grad():` (the PR's change)
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(15, 20)
        self.fc2 = nn.Linear(20, 15)
        self.fc3 = nn.Linear(15, 1)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return torch.sigmoid(self.fc3(x))


def train_model(net, dl_train, epochs=2):
    loss_func = nn.BCELoss()
    optimizer = torch.optim.Adam(params=net.parameters(), lr=0.01)
    for epoch in range(1, epochs + 1):
        net.train()
        loss_sum = 0.0
        for step, (features, labels) in enumerate(dl_train, 1):
            optimizer.zero_grad()
            predictions = net(features)
            loss = loss_func(predictions, labels)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item()
        print("EPOCH = %d, loss = %.3f" % (epoch, loss_sum / step))


def infer(net, dl):
    net.eval()
    with torch.no_grad():
        result = torch.cat([net.forward(t[0]) for t in dl])
    return result.data


def run(dl_train, dl_valid):
    net = Net()
    train_model(net, dl_train)
    y_pred_probs = infer(net, dl_valid)
    y_pred = torch.where(y_pred_probs > 0.5, torch.ones_like(y_pred_probs), torch.zeros_like(y_pred_probs))
    return y_pred.numpy()


def observe():
    built = []

    def hook(_m, inputs, out):
        if inputs[0].shape[0] == 5:  # the validation batches, not the training ones
            built.append(out.grad_fn is not None)

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        dl_train = [(torch.randn(4, 15), torch.randint(0, 2, (4, 1)).float()) for _ in range(2)]
        dl_valid = [(torch.randn(5, 15), torch.zeros(5, 1)) for _ in range(2)]
        run(dl_train, dl_valid)
    finally:
        handle.remove()
    return {"built": built}
