# source: https://androidkt.com/one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation/
# label: lookalike GG201
# effect: changed
# note: the soft targets computed out of place from the detached logits: the logits stay as they are
import torch
import torch.nn.functional as F


def self_distillation_loss(logits, targets, temperature=4.0, alpha=0.5):
    soft = logits.detach() / temperature
    soft_targets = soft.softmax(dim=-1)
    hard = F.cross_entropy(logits, targets)
    distill = F.kl_div(F.log_softmax(logits / temperature, dim=-1), soft_targets, reduction="batchmean")
    return (1 - alpha) * hard + alpha * distill


def observe():
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 3)
    logits = model(torch.randn(4, 5))
    before = logits.detach().clone()
    self_distillation_loss(logits, torch.randint(0, 3, (4,)))
    return {"before": before, "after": logits.detach()}
