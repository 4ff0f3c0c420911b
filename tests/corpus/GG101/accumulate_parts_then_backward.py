# source: https://discuss.pytorch.org/t/gpu-memory-increase-while-i-wanna-to-backward-with-accumulative-loss/43284
# label: lookalike GG101
# effect: activations_alive
# note: per-sequence losses summed into one loss that is back-propagated: the sum is the training
import torch


def train_step(model, sequences, targets, optimizer, criterion):
    optimizer.zero_grad()
    loss = 0
    for seq, target in zip(sequences, targets):
        loss_part = criterion(model(seq), target)
        loss += loss_part
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    model = torch.nn.Linear(4, 2)
    kept = []
    seqs = [torch.randn(n, 4) for n in (2, 3, 5)]
    tgts = [torch.randn(n, 2) for n in (2, 3, 5)]
    train_step(model, seqs, tgts, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())
    return {"kept": kept}
