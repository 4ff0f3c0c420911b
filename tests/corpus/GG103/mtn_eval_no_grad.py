# source: https://github.com/henryhungle/MTN/issues/7
# label: lookalike GG103
# effect: graph_built
# note: the updated code: the evaluation runs under torch.no_grad()
import torch


class Evaluator:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    @torch.no_grad()
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
