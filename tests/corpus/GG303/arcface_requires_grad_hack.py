# source: https://github.com/ronghuaiyang/arcface-pytorch/issues/56
# label: GG303 14
# effect: no_grad
# note: "element 0 does not require grad" silenced with loss.requires_grad = True: the error is gone, "the loss is not decline, and the acc is always zero"
import torch


def train_step(model, criterion, optimizer, data_input, label):
    model.train()
    optimizer.zero_grad()
    output = model(data_input)
    pred = output.argmax(dim=1).float()
    loss = criterion(pred, label.float())
    loss.requires_grad = True
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, torch.nn.MSELoss(), optimizer, torch.randn(5, 6), torch.randint(0, 4, (5,)))
    return {"params": list(model.parameters())}
