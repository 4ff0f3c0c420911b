# source: https://github.com/queenie88/A-GCN/issues/4
# label: GG301 22
# effect: no_grad
# note: the adaptive adjacency is detached inside forward(): W_phi and W_theta, which only reach the output through it, never get a gradient
import torch
from torch import nn


class AdaptiveGCN(nn.Module):
    def __init__(self, num_classes=5, in_dim=6, emb_dim=4):
        super().__init__()
        self.w_phi = nn.Linear(in_dim, emb_dim, bias=False)
        self.w_theta = nn.Linear(in_dim, emb_dim, bias=False)
        self.gc = nn.Linear(in_dim, in_dim)
        self.fc = nn.Linear(in_dim, 1)

    def gen_adj(self, inp):
        return torch.softmax(self.w_phi(inp) @ self.w_theta(inp).t(), dim=1)

    def forward(self, inp):
        adj = self.gen_adj(inp)
        adj = adj.detach()
        x = torch.relu(self.gc(adj @ inp))
        return self.fc(x).squeeze(1)


def observe():
    torch.manual_seed(0)
    model = AdaptiveGCN()
    inp, target = torch.randn(5, 6), torch.randn(5)
    loss = ((model(inp) - target) ** 2).mean()
    loss.backward()
    return {"params": list(model.w_phi.parameters()) + list(model.w_theta.parameters())}
