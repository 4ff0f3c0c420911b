# source: https://taourl.com/read-2374996.html
# label: GG103 12
# effect: graph_built
# note: an inference helper with no no_grad: every call records a graph
import torch

from corpus.oracle import hook_outputs


def run_inference(model, images):
    model.eval()
    scores = model(images)
    return scores.softmax(-1).argmax(-1).tolist()


def observe():
    model = torch.nn.Linear(4, 3)
    built = hook_outputs(model)
    run_inference(model, torch.randn(2, 4))
    return {"built": built}
