# source: https://github.com/StanfordASL/neural-network-lyapunov/pull/140
# label: GG101 16
# effect: graph_kept
# note: the optimizer closure records its loss tensor in an outer list; the PR keeps only the float
import torch


def train_lyapunov(lyapunov_relu, states, optimizer, max_iterations, V_lambda=0.5):
    losses = []

    def closure():
        optimizer.zero_grad()
        V = lyapunov_relu(states).squeeze(-1)
        loss = torch.relu(V_lambda * states.norm(dim=1) - V).mean()
        loss.backward()
        losses.append(loss)
        return loss

    for _ in range(max_iterations):
        optimizer.step(closure)
    return losses


def observe():
    net = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    states = torch.randn(16, 2)
    losses = train_lyapunov(net, states, torch.optim.SGD(net.parameters(), lr=0.05), 3)
    return {"kept": losses}
