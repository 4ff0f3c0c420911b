# source: https://discuss.pytorch.org/t/pytorch-gradient-accumulation/55955
# label: lookalike GG101
# effect: activations_alive
# note: micro-batch losses collected, then added up by a for loop into one loss that is back-propagated
import torch


def accumulate_step(model, micro_batches, optimizer, loss_function):
    model.train()
    optimizer.zero_grad()
    micro_losses = []
    for inputs, labels in micro_batches:
        predictions = model(inputs)
        micro_losses.append(loss_function(predictions, labels) / len(micro_batches))
    total = 0
    for part in micro_losses:
        total = total + part
    total.backward()
    optimizer.step()
    return micro_losses


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    batches = [(torch.randn(2, 5), torch.randn(2, 1)) for _ in range(4)]
    kept = accumulate_step(model, batches, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())
    return {"kept": kept}
