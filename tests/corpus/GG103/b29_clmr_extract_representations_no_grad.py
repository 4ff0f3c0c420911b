# source: https://github.com/Spijkervet/CLMR/issues/18
# label: lookalike GG103
# effect: graph_built
# note: representations for the linear evaluation / t-SNE are taken from the contrastive model's encoder (`self.model.encoder(x)`) inside `with torch.no_grad():` and kept in a list
import torch
from torch import nn
from torch.utils.data import TensorDataset


class SampleCNNLike(nn.Module):
    def __init__(self, n_features=8, projection_dim=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(1, n_features, 4, stride=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.projector = nn.Sequential(nn.Linear(n_features, n_features), nn.ReLU(), nn.Linear(n_features, projection_dim))

    def forward(self, x_i, x_j):
        return self.projector(self.encoder(x_i)), self.projector(self.encoder(x_j))


class LinearEvaluation:
    def __init__(self, model, n_classes=3):
        self.model = model
        self.head = nn.Linear(8, n_classes)

    def extract_representations(self, dataloader):
        representations = []
        ys = []
        for x, y in dataloader:
            with torch.no_grad():
                h0 = self.model.encoder(x)
                representations.append(h0)
                ys.append(y)
        if len(representations) > 1:
            representations = torch.cat(representations, dim=0)
            ys = torch.cat(ys, dim=0)
        else:
            representations = representations[0]
            ys = ys[0]
        return TensorDataset(representations, ys)


def observe():
    from corpus.oracle import hook_outputs

    model = SampleCNNLike()
    built = hook_outputs(model.encoder)
    evaluation = LinearEvaluation(model)
    evaluation.extract_representations([(torch.randn(4, 1, 16), torch.randint(0, 3, (4,))) for _ in range(2)])
    return {"built": built}
