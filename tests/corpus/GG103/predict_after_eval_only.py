# source: https://theneuralbase.com/pytorch/learn/beginner/requires-grad-true-tracking-operations/
# label: GG103 12
# effect: activations_alive
# note: model.eval() alone does not stop graph building: the predictions keep their activations (the page's fix: no_grad)
import torch


def predict(model, batches):
    model.eval()
    predictions = []
    for batch in batches:
        logits = model(batch)
        predictions.append(logits.softmax(dim=-1))
    return predictions


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    return {"kept": predict(model, [torch.randn(2, 4) for _ in range(3)])}
