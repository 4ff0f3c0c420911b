# source: https://androidkt.com/fix-cant-call-numpy-on-tensor-that-requires-grad-use-tensor-detach-numpy-instead/
# label: lookalike GG401
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: a training step that logs its predictions with detach().cpu().numpy(), as the page says
import torch


def train_step(model, x, y, optimizer):
    model.train()
    preds = model(x)
    loss = ((preds - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return preds.detach().cpu().numpy()


def observe():
    model = torch.nn.Linear(4, 2)
    train_step(model, torch.randn(3, 4), torch.randn(3, 2), torch.optim.SGD(model.parameters(), lr=0.1))
    return {}
