# source: https://theneuralbase.com/pytorch/learn/intermediate/evaluation-on-custom-classes/
# label: GG101|GG103 12
# effect: activations_alive
# note: validate() keeps every batch's outputs, with their graphs, for a confusion matrix
import torch


def validate(model, loader):
    model.eval()
    outputs = []
    for x, _ in loader:
        outputs.append(model(x))
    return torch.cat(outputs)


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    return {"kept": validate(model, [(torch.randn(3, 4), None)] * 3)}
