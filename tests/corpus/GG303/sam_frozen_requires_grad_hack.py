# source: https://github.com/mazurowski-lab/finetune-SAM/issues/26
# label: GG303 20
# effect: no_grad
# note: every parameter ends up frozen (the unfreeze filter matches nothing), backward raised, and "loss.requires_grad = True" silenced it: training runs and nothing learns
import torch


def train_one_epoch(model, loader, optimizer, criterion, trainable=("mask_decoder.adapter",)):
    for p in model.parameters():
        p.requires_grad = False
    for name, p in model.named_parameters():
        if any(name.startswith(prefix) for prefix in trainable):
            p.requires_grad = True
    model.train()
    total = 0.0
    for image, mask in loader:
        optimizer.zero_grad()
        pred = model(image)
        loss = criterion(pred, mask)
        loss.requires_grad = True
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


def observe():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Sigmoid())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(2, 4), torch.rand(2, 4)) for _ in range(2)]
    train_one_epoch(model, loader, optimizer, torch.nn.BCELoss())
    return {"params": list(model.parameters())}
