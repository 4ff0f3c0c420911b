# source: https://theneuralbase.com/pytorch/learn/beginner/requires-grad-true-tracking-operations/
# label: lookalike GG103
# effect: activations_alive
# note: the page's production tip: eval() and no_grad() together, so no graph is kept
import torch


def predict(model, batches):
    model.eval()
    predictions = []
    with torch.no_grad():
        for batch in batches:
            logits = model(batch)
            predictions.append(logits.softmax(dim=-1))
    return predictions


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    return {"kept": predict(model, [torch.randn(2, 4) for _ in range(3)])}
