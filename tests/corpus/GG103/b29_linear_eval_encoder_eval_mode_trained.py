# source: https://daesoolee.tistory.com/m/148
# label: lookalike GG103
# effect: graph_unused
# note: the fine-tuning step puts the encoder in eval mode (frozen batch-norm statistics) and logs accuracy from the logits, but the encoder's parameters are in the optimizer and the logits' loss is back-propagated: eval() is not inference
import torch
import torch.nn.functional as F
from torch import nn


def finetune_epoch(encoder, linear_layer, loader, optimizer):
    encoder.eval()
    linear_layer.train()
    hits, seen = 0, 0
    for x, y in loader:
        feats = encoder(x)
        logits = linear_layer(feats)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        hits += (logits.argmax(dim=1) == y).sum().item()
        seen += y.numel()
    return hits / seen


def finetune(encoder, linear_layer, loader, epochs=2):
    optimizer = torch.optim.SGD([
        {"params": encoder.parameters(), "lr": 1e-4},
        {"params": linear_layer.parameters(), "lr": 1e-3},
    ], momentum=0.9)
    return [finetune_epoch(encoder, linear_layer, loader, optimizer) for _ in range(epochs)]


def observe():
    from corpus.oracle import output_flows

    encoder = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU())
    linear_layer = nn.Linear(8, 3)
    flows = output_flows(encoder)
    finetune(encoder, linear_layer, [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(2)])
    return {"flows": flows}
