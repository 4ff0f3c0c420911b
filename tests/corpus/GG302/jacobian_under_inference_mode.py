# source: https://github.com/Lightning-AI/pytorch-lightning/issues/19910
# label: GG302 31
# effect: raises "element 0 of tensors does not require grad"
# note: the test loop runs under inference_mode, which torch.enable_grad() does not undo: the model's output has no graph and autograd.grad raises (the issue: the same code works in validation, under no_grad, and fails in test, under inference mode)
import torch
import torch.nn.functional as F
from torch import nn


class VectorField(nn.Module):
    def __init__(self, dim=3, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, dim))

    def forward(self, x):
        return self.net(x)


@torch.inference_mode()
def test_epoch(model, loader):
    model.eval()
    mse, spectral = 0.0, []
    for x, dx in loader:
        mse += F.mse_loss(model(x), dx).item()
        with torch.enable_grad():
            x0 = x[0].clone()
            x0.requires_grad_(True)
            y = model(x0)
            I_N = torch.eye(y.shape[-1])
            # Sequential approach
            jacobian_rows = [torch.autograd.grad(y, x0, v, retain_graph=True)[0] for v in I_N.unbind()]
            jacobian = torch.stack(jacobian_rows)
        spectral.append(torch.linalg.eigvals(jacobian).real.max().item())
    return mse / len(loader), spectral


def observe():
    torch.manual_seed(0)
    model = VectorField()
    loader = [(torch.randn(4, 3), torch.randn(4, 3)) for _ in range(2)]
    return {"result": test_epoch(model, loader)}
