# source: https://engineered.at/articles/simple-inference
# label: lookalike GG103
# effect: graph_kept
# note: the forward runs in eval mode under torch.no_grad() and its result is copied into a caller-owned buffer that lives across requests; the buffer never gets a grad_fn
import torch


def simple_inference(model, input, output):
    """Run `model` on `input` and write the result into `output`.

    input, model and output are expected to live on the same device; `output` is
    preallocated by the caller so serving does not allocate on the critical path.
    """
    model.eval()
    with torch.no_grad():
        output.copy_(model(input))


class BatchedPredictor:
    def __init__(self, model, max_batch, num_classes):
        self.model = model
        self.output = torch.empty(max_batch, num_classes)

    def __call__(self, batch):
        out = self.output[: batch.shape[0]]
        simple_inference(self.model, batch, out)
        return out.argmax(dim=1).tolist()


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    predictor = BatchedPredictor(model, max_batch=8, num_classes=3)
    for n in (8, 5, 8):
        predictor(torch.randn(n, 6))
    return {"kept": [predictor.output]}
