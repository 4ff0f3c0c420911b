# source: https://github.com/mit-ll-responsible-ai/equine/issues/182
# label: lookalike GG103
# effect: activations_alive
# note: the suggested fix: predict() decorated with @torch.no_grad(), so the EquineOutput it returns holds plain tensors
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F


EquineOutput = namedtuple("EquineOutput", ["classes", "ood_scores", "embeddings"])


class Protonet(nn.Module):
    def __init__(self, embedding_model):
        super().__init__()
        self.embedding_model = embedding_model
        self.prototypes = None

    def compute_embeddings(self, X):
        return self.embedding_model(X)

    def forward(self, X):
        embeddings = self.compute_embeddings(X)
        return torch.cdist(embeddings, self.prototypes), embeddings


class EquineProtonet:
    def __init__(self, embedding_model, n_classes, lr=1e-2):
        self.model = Protonet(embedding_model)
        self.n_classes = n_classes
        self.lr = lr

    def update_support(self, support_x, support_y):
        with torch.no_grad():
            embeddings = self.model.compute_embeddings(support_x)
            self.model.prototypes = torch.stack(
                [embeddings[support_y == c].mean(0) for c in range(self.n_classes)])

    def train_model(self, X, Y, num_episodes=3):
        optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self.model.train()
        for _ in range(num_episodes):
            self.update_support(X, Y)
            dists, _ = self.model(X)
            loss = F.cross_entropy(-dists, Y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        self.update_support(X, Y)

    def _compute_ood(self, dists):
        return dists.min(dim=1).values

    @torch.no_grad()
    def predict(self, X):
        self.model.eval()
        dists, embeddings = self.model(X)
        preds = torch.softmax(-dists, dim=1)
        return EquineOutput(classes=preds, ood_scores=self._compute_ood(dists), embeddings=embeddings)


def observe():
    net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
    model = EquineProtonet(net, n_classes=3)
    X = torch.randn(12, 6)
    Y = torch.arange(12) % 3
    model.train_model(X, Y)
    out = model.predict(torch.randn(5, 6))
    return {"kept": [out.classes, out.embeddings]}
