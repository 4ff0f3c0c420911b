# source: https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261
# label: GG302 17
# effect: raises "element 0 of tensors does not require grad"
# note: torch.tensor([...]) copies the per-task losses' values only: the total has no graph to back-propagate
import torch
import torch.nn.functional as F


def multitask_step(model, x, targets, optimizer):
    model.train()
    outputs = model(x)
    task_losses = []
    for out, y in zip(outputs.split(1, dim=1), targets):
        task_losses.append(F.mse_loss(out.squeeze(1), y))
    total = torch.tensor(task_losses).mean()
    optimizer.zero_grad()
    total.backward()
    optimizer.step()


def observe():
    model = torch.nn.Linear(4, 2)
    multitask_step(model, torch.randn(3, 4), [torch.randn(3), torch.randn(3)],
                   torch.optim.SGD(model.parameters(), lr=0.1))
    return {}
