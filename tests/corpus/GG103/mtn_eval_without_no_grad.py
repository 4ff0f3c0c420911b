# source: https://github.com/henryhungle/MTN/issues/7
# label: GG103 16
# effect: graph_built
# note: "you did not wrap the eval part with torch.no_grad(), which means that your code computes gradient for validation data"
import torch


class Evaluator:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def run(self, data, n_batches):
        total, count = 0.0, 0
        for qa, target in data[:n_batches]:
            out = self.model(qa)
            total += self.criterion(out, target).item() * len(target)
            count += len(target)
        return total / count


def observe():
    from corpus.oracle import hook_outputs

    torch.manual_seed(0)
    model = torch.nn.Linear(5, 4)
    built = hook_outputs(model)
    model.eval()
    Evaluator(model, torch.nn.CrossEntropyLoss()).run([(torch.randn(2, 5), torch.randint(0, 4, (2,)))] * 2, 2)
    return {"built": built}
