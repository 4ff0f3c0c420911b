# source: https://tutorialreference.com/python/examples/faq/python-pytorch-error-runtimeerror-cant-call-numpy-on-tensor-that-requires-grad-detach
# label: lookalike GG401
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the accuracy of a training step from argmax indices, which never require grad
import torch
import torch.nn.functional as F


def train_step(model, x, labels, optimizer):
    model.train()
    logits = model(x)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return (logits.argmax(dim=1).numpy() == labels.numpy()).mean()


def observe():
    model = torch.nn.Linear(4, 3)
    train_step(model, torch.randn(2, 4), torch.tensor([0, 2]), torch.optim.SGD(model.parameters(), lr=0.1))
    return {}
