# source: https://repository.mulesoft.org/nexus/content/repositories/public/org/green-code-initiative/creedengo-rules-specifications/2.5.0/creedengo-rules-specifications-2.5.0-python.jar:/tmp/tarfile_extract_1mqy19la/org/green-code-initiative/rules/python/GCI100.html
# label: lookalike GG103
# effect: graph_built
# note: the same loop under torch.no_grad()
import torch

from corpus.oracle import hook_outputs


def predict_all(model, dataloader):
    model.eval()
    predictions = []
    with torch.no_grad():
        for inputs in dataloader:
            outputs = model(inputs)
            predictions.append(outputs.argmax(1))
    return predictions


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    built = hook_outputs(model)
    predict_all(model, [torch.randn(2, 4)] * 2)
    return {"built": built}
