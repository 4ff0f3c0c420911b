# source: https://androidkt.com/how-to-calculate-running-loss-using-loss-item-in-pytorch/
# label: lookalike GG101
# effect: graph_kept
# note: running_loss += loss.item() * inputs.size(0): a float, no graph
import torch


def train_model(model, criterion, optimizer, loader):
    model.train()
    running_loss = 0.0
    for inputs, labels in loader:
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item() * inputs.size(0)
    return running_loss


def observe():
    model = torch.nn.Linear(4, 2)
    return {"kept": train_model(model, torch.nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                                [(torch.randn(3, 4), torch.randn(3, 2))] * 3)}
