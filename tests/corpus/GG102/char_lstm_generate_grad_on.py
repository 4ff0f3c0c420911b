# source: https://github.com/Tuminha/Generating-Text-with-Frankenstein-Using-PyTorch
# label: GG102|GG103 27
# effect: graph_grows
# note: a generation loop feeding (h, c) back with grad on: the graph grows with every generated character; GG103 names the same line after `model.eval()` and its no_grad fix stops the growth
import torch
from torch import nn


class CharLSTM(nn.Module):
    def __init__(self, vocab_size=20, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, vocab_size)

    def forward(self, x, states=None):
        out, states = self.lstm(self.embed(x), states)
        return self.fc(out), states


def generate(model, prompt_ids, length, temperature=1.0):
    model.eval()
    states = None
    ids = list(prompt_ids)
    x = torch.tensor([prompt_ids])
    for _ in range(length):
        logits, states = model(x, states)
        probs = torch.softmax(logits[0, -1] / temperature, dim=-1)
        next_id = torch.multinomial(probs, 1).item()
        ids.append(next_id)
        x = torch.tensor([[next_id]])
    return ids


def observe():
    from corpus.oracle import graph_size

    model = CharLSTM()
    sizes = []
    model.register_forward_hook(lambda m, inp, out: sizes.append(graph_size(out[1][0])))
    generate(model, [1, 2, 3], 4)
    return {"sizes": sizes}
