# source: https://github.com/huggingface/transformers/issues/26588
# label: GG102 30
# effect: graph_grows
# note: an RWKV-style model run in "RNN mode", its returned state passed back in on every call with grad on: unchecked memory growth (the OOM)
import torch
from torch import nn


class TinyRwkv(nn.Module):
    def __init__(self, vocab_size=32, dim=8):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, dim)
        self.time_mix = nn.Linear(2 * dim, dim)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids, state=None):
        x = self.embeddings(input_ids)
        if state is None:
            state = torch.zeros(x.size(0), x.size(-1))
        hidden = []
        for t in range(x.size(1)):
            state = torch.tanh(self.time_mix(torch.cat([x[:, t], state], dim=-1)))
            hidden.append(state)
        return {"logits": self.head(torch.stack(hidden, 1)), "state": state}


def stream_text(model, chunks):
    state = None
    for input_ids in chunks:
        outputs = model(input_ids, state=state)
        state = outputs["state"]
        yield outputs["logits"][:, -1].argmax(-1)


def observe():
    from corpus.oracle import graph_size

    model = TinyRwkv()
    sizes = []
    model.register_forward_hook(lambda m, inp, out: sizes.append(graph_size(out["state"])))
    list(stream_text(model, [torch.randint(0, 32, (1, 5)) for _ in range(4)]))
    return {"sizes": sizes}
