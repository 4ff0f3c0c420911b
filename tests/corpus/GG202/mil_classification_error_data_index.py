# source: https://github.com/AMLab-Amsterdam/AttentionDeepMIL/issues/18
# label: GG202 33
# effect: raises "invalid index of a 0-dim tensor"
# note: the attention-MIL model's error metric indexes .data[0] of a 0-dim mean, written for torch 0.3 (the fix: .item())
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, in_features=16, L=32, D=8, K=1):
        super().__init__()
        self.L, self.D, self.K = L, D, K
        self.feature_extractor = nn.Sequential(nn.Linear(in_features, L), nn.ReLU())
        self.attention = nn.Sequential(nn.Linear(L, D), nn.Tanh(), nn.Linear(D, K))
        self.classifier = nn.Sequential(nn.Linear(L * K, 1), nn.Sigmoid())

    def forward(self, x):
        x = x.squeeze(0)
        H = self.feature_extractor(x)  # NxL
        A = self.attention(H)  # NxK
        A = torch.transpose(A, 1, 0)  # KxN
        A = F.softmax(A, dim=1)  # softmax over N
        M = torch.mm(A, H)  # KxL
        Y_prob = self.classifier(M)
        Y_hat = torch.ge(Y_prob, 0.5).float()
        return Y_prob, Y_hat, A

    # AUXILIARY METHODS
    def calculate_classification_error(self, X, Y):
        Y = Y.float()
        _, Y_hat, _ = self.forward(X)
        error = 1. - Y_hat.eq(Y).cpu().float().mean().data[0]
        return error, Y_hat

    def calculate_objective(self, X, Y):
        Y = Y.float()
        Y_prob, _, A = self.forward(X)
        Y_prob = torch.clamp(Y_prob, min=1e-5, max=1. - 1e-5)
        neg_log_likelihood = -1. * (Y * torch.log(Y_prob) + (1. - Y) * torch.log(1. - Y_prob))
        return neg_log_likelihood, A


def observe():
    torch.manual_seed(0)
    model = Attention()
    bag, label = torch.randn(1, 7, 16), torch.tensor([1])
    loss, _ = model.calculate_objective(bag, label)
    loss.backward()
    error, _ = model.calculate_classification_error(bag, label)
    return {"error": error}
