# source: https://androidkt.com/difference-between-clone-vs-detach-copy-deepcopy-in-pytorch/
# label: lookalike GG201
# effect: changed
# note: detach().clone(): its own storage, the original is untouched
import torch


def normalized(scores):
    probs = scores.detach().clone()
    probs /= probs.sum(dim=-1, keepdim=True)
    return probs


def observe():
    scores = torch.rand(2, 3) + 0.5
    before = scores.clone()
    normalized(scores)
    return {"before": before, "after": scores}
