# source: https://discuss.pytorch.org/t/efficient-calculation-of-derivatives-for-pinn-solvers-in-pytorch/177249
# label: lookalike GG103
# effect: graph_unused
# note: the residual report after training only prints a number, but the PDE residual is made of derivatives of the network's output with respect to its inputs (`torch.autograd.grad`), which need the graph
import torch
from torch import nn


def diff(y, xs):
    grad = y
    ones = torch.ones_like(y)
    for x in xs:
        grad = torch.autograd.grad(grad, x, grad_outputs=ones, create_graph=True)[0]
    return grad


def heat_residual(u_net, x, t, alpha=1.0):
    u = u_net(torch.cat([x, t], dim=1))
    return diff(u, [t]) - alpha * diff(u, [x, x])


def train(u_net, n_steps=3, n_points=16):
    optimizer = torch.optim.Adam(u_net.parameters(), lr=1e-3)
    for step in range(n_steps):
        x = torch.rand(n_points, 1, requires_grad=True)
        t = torch.rand(n_points, 1, requires_grad=True)
        loss = heat_residual(u_net, x, t).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def report_residual(u_net, n_points=32):
    x = torch.linspace(0.0, 1.0, n_points).reshape(-1, 1).requires_grad_(True)
    t = torch.full((n_points, 1), 0.5, requires_grad=True)
    r = heat_residual(u_net, x, t)
    print("max |residual| at t=0.5: %.4e" % r.abs().max().item())
    return r.abs().mean().item()


def observe():
    from corpus.oracle import output_flows

    u_net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    train(u_net)
    flows = output_flows(u_net)
    report_residual(u_net)
    return {"flows": flows}
