# source: https://discuss.pytorch.org/t/gpu-memory-increase-while-i-wanna-to-backward-with-accumulative-loss/43284
# label: lookalike GG101
# effect: activations_alive
# note: losses collected in a list and back-propagated together with torch.stack(...).mean()
import torch


def multi_scale_step(model, batches, optimizer, criterion):
    optimizer.zero_grad()
    losses = []
    for x, y in batches:
        losses.append(criterion(model(x), y))
    total = torch.stack(losses).mean()
    total.backward()
    optimizer.step()
    return losses


def observe():
    model = torch.nn.Linear(4, 2)
    kept = multi_scale_step(model, [(torch.randn(3, 4), torch.randn(3, 2))] * 3,
                            torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())
    return {"kept": kept}
