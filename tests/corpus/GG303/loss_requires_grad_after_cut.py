# source: https://github.com/ronghuaiyang/arcface-pytorch/issues/56
# label: GG303 16
# effect: no_grad
# note: the "fix" for "element 0 of tensors does not require grad": the loss is made a fresh leaf, backward runs, nothing learns ("the loss is not decline")
import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer):
    model.train()
    for data_input, label in loader:
        with torch.no_grad():
            feature = model.backbone(data_input)
            output = model.head(feature)
        loss = F.cross_entropy(output, label)
        loss.requires_grad = True
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    model = torch.nn.Module()
    model.backbone = torch.nn.Linear(4, 6)
    model.head = torch.nn.Linear(6, 3)
    loader = [(torch.randn(2, 4), torch.tensor([0, 2]))]
    train_one_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.1))
    return {"params": list(model.parameters())}
