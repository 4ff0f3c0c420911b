# source: https://github.com/giotto-ai/giotto-deep/issues/44
# label: lookalike GG101
# effect: activations_alive
# note: the loop as the repository has it: under torch.no_grad(), the accumulated probabilities hold no graph
import torch


class Pipeline:
    def __init__(self, model, loss_fn, dataloaders):
        self.model = model
        self.loss_fn = loss_fn
        self.dataloaders = dataloaders

    def _val_loop(self):
        self.model.eval()
        class_probs, val_loss, correct = [], 0.0, 0
        with torch.no_grad():
            for X, y in self.dataloaders[1]:
                pred = self.model(X)
                val_loss += self.loss_fn(pred, y).item()
                class_probs.append(torch.softmax(pred, dim=1))
                correct += (pred.argmax(1) == y).sum().item()
        return val_loss, correct, class_probs


def observe():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    loader = [(torch.randn(2, 4), torch.randint(0, 3, (2,))) for _ in range(3)]
    _, _, probs = Pipeline(model, torch.nn.CrossEntropyLoss(), [None, loader])._val_loop()
    return {"kept": probs}
