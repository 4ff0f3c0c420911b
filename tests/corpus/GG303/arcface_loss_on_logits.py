# source: https://github.com/ronghuaiyang/arcface-pytorch/issues/56
# label: lookalike GG303
# effect: no_grad
# note: the real fix: the loss on the logits (cross-entropy), no argmax in between and no requires_grad hack
import torch


def train_step(model, criterion, optimizer, data_input, label):
    model.train()
    optimizer.zero_grad()
    output = model(data_input)
    loss = criterion(output, label)
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, torch.nn.CrossEntropyLoss(), optimizer, torch.randn(5, 6), torch.randint(0, 4, (5,)))
    return {"params": list(model.parameters())}
