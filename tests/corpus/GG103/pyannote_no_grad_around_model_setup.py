# source: https://github.com/pyannote/pyannote-audio/pull/444
# label: GG103 26
# effect: graph_built
# note: torch.no_grad() wraps only `model.eval().to(device)` in __init__ ("I think this does nothing"); the forward in get_features() still records a graph for every batch of sliding windows
import numpy as np
import torch
import torch.nn as nn


class Pretrained:
    """Extract features from a pretrained model over sliding windows."""

    def __init__(self, model, duration=0.5, step=0.25, batch_size=4, device="cpu"):
        self.device = torch.device(device)

        # send model to device
        with torch.no_grad():
            self.model_ = model.eval().to(self.device)

        self.duration = duration
        self.step = step
        self.batch_size = batch_size

    def _embed(self, X):
        tX = torch.tensor(X, dtype=torch.float32, device=self.device)
        fX = self.model_(tX)
        return fX.detach().to("cpu").numpy()

    def get_features(self, y, sample_rate):
        window = int(self.duration * sample_rate)
        hop = int(self.step * sample_rate)
        chunks = np.stack([y[i:i + window] for i in range(0, len(y) - window + 1, hop)])[..., None]
        fX = [self._embed(chunks[i:i + self.batch_size]) for i in range(0, len(chunks), self.batch_size)]
        return np.vstack(fX)


class StackedRNN(nn.Module):
    def __init__(self, n_features=1, hidden=16, dimension=8):
        super().__init__()
        self.rnn = nn.LSTM(n_features, hidden, batch_first=True)
        self.linear = nn.Linear(hidden, dimension)

    def forward(self, x):
        output, _ = self.rnn(x)
        return torch.tanh(self.linear(output.mean(dim=1)))


def observe():
    from corpus.oracle import hook_outputs

    model = StackedRNN()
    built = hook_outputs(model)
    extractor = Pretrained(model)
    extractor.get_features(np.random.default_rng(0).standard_normal(400).astype(np.float32), sample_rate=100)
    return {"built": built}
