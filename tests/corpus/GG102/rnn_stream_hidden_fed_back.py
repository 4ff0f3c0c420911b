# source: https://github.com/pytorch/pytorch/issues/2198
# label: GG102 13
# effect: graph_grows
# note: a long stream fed frame by frame with `out, hidden = rnn(data, hidden)`: out and hidden hold the whole history (the "memory leak")
import torch
from torch import nn


def encode_stream(rnn, frames, hidden=None):
    """Run a recurrent encoder over an unbounded stream of frames, one at a time."""
    features = []
    for data in frames:
        out, hidden = rnn(data.unsqueeze(0), hidden)
        features.append(out[-1].argmax(-1))
    return features, hidden


def observe():
    from corpus.oracle import graph_size

    rnn = nn.LSTM(input_size=6, hidden_size=8, num_layers=2)
    sizes = []
    rnn.register_forward_hook(lambda m, inp, out: sizes.append(graph_size(out[1][0])))
    encode_stream(rnn, [torch.rand(16, 6) for _ in range(4)])
    return {"sizes": sizes}
