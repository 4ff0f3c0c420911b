# source: https://androidkt.com/one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation/
# label: GG201 10
# effect: changed
# note: a detached copy normalised in place: the original logits change too
import torch


def normalized(scores):
    probs = scores.detach()
    probs /= probs.sum(dim=-1, keepdim=True)
    return probs


def observe():
    scores = torch.rand(2, 3) + 0.5
    before = scores.clone()
    normalized(scores)
    return {"before": before, "after": scores}
