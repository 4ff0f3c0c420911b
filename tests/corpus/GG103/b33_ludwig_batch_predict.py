# source: https://github.com/ludwig-ai/ludwig/pull/1739
# label: GG103 27
# effect: graph_unused
# note: Predictor.batch_predict() runs every batch through the model with grad on; the outputs only become predictions and detached probabilities turned into NumPy (the PR adds torch.no_grad() to reduce memory pressure)
from collections import defaultdict

import torch
import torch.nn as nn


class Predictor:
    def __init__(self, model, batch_size=128):
        self.model = model
        self.batch_size = batch_size

    def batch_predict(self, dataset):
        self.model.eval()
        predictions = defaultdict(list)
        for start in range(0, len(dataset), self.batch_size):
            batch = dataset[start:start + self.batch_size]
            preds = self._predict(batch)
            for name, value in preds.items():
                predictions[name].append(value)
        return self._concat_preds(predictions)

    def _predict(self, batch):
        outputs = self.model(batch)
        return {
            "predictions": outputs.argmax(dim=-1).cpu(),
            "probabilities": torch.softmax(outputs, dim=-1).detach().cpu(),
        }

    @staticmethod
    def _concat_preds(predictions):
        return {name: torch.cat(values).numpy() for name, values in predictions.items()}


def observe():
    from corpus.oracle import output_flows

    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    flows = output_flows(model)
    Predictor(model, batch_size=4).batch_predict(torch.randn(10, 5))
    return {"flows": flows}
