# source: https://github.com/tengshaofeng/ResidualAttentionNetwork-pytorch/issues/14
# label: GG103 23
# effect: graph_built
# note: the training script's test() runs after every epoch with grad on (its outputs reach only torch.max indices and a count); the reporter ran out of memory on this line
import torch
import torch.nn as nn
from torch.autograd import Variable


def test(model, test_loader, btrain=False, model_file="model_92.pkl"):
    if not btrain:
        model.load_state_dict(torch.load(model_file))
    model.eval()

    correct = 0
    total = 0
    class_correct = list(0. for i in range(10))
    class_total = list(0. for i in range(10))

    for images, labels in test_loader:
        images = Variable(images)
        labels = Variable(labels)
        outputs = model(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels.data).sum()
        c = (predicted == labels.data).squeeze()
        for i in range(labels.size(0)):
            label = labels.data[i]
            class_correct[label] += c[i].item()
            class_total[label] += 1
    print('Accuracy of the model on the test images: %d %%' % (100 * float(correct) / total))
    return float(correct) / total


def mixup_data(x, y, alpha=1.0):
    lam = 0.5 if alpha <= 0 else float(torch.distributions.Beta(alpha, alpha).sample())
    index = torch.randperm(x.size(0))
    return lam * x + (1 - lam) * x[index, :], y, y[index], lam


def train(model, train_loader, test_loader, optimizer, criterion, total_epoch=2):
    acc_best = 0
    for epoch in range(total_epoch):
        model.train()
        for i, (images, labels) in enumerate(train_loader):
            inputs, targets_a, targets_b, lam = mixup_data(images, labels)
            outputs = model(inputs)
            loss = lam * criterion(outputs, targets_a) + (1 - lam) * criterion(outputs, targets_b)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print('the epoch takes time:', epoch)
        acc = test(model, test_loader, btrain=True)
        if acc > acc_best:
            acc_best = acc
    return acc_best


def observe():
    from corpus.oracle import hook_outputs

    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 10))
    train_loader = [(torch.randn(4, 12), torch.randint(0, 10, (4,))) for _ in range(2)]
    test_loader = [(torch.randn(3, 12), torch.randint(0, 10, (3,))) for _ in range(2)]
    built = hook_outputs(model, where=lambda inputs: inputs[0].shape[0] == 3)
    train(model, train_loader, test_loader, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss())
    return {"built": built}
