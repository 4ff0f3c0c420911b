# source: https://theneuralbase.pages.dev/pytorch/learn/beginner/detach-stopping-gradient-flow/
# label: lookalike GG301
# effect: no_grad
# note: a DQN target from the target network, detached: the detached side is the target
import torch
import torch.nn.functional as F


def dqn_update(q_net, target_net, batch, optimizer, gamma=0.99):
    s, a, r, s2 = batch
    q = q_net(s).gather(1, a.unsqueeze(1)).squeeze(1)
    target = r + gamma * target_net(s2).max(1)[0].detach()
    loss = F.mse_loss(q, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def observe():
    q_net, target_net = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    batch = (torch.randn(3, 4), torch.tensor([0, 1, 0]), torch.randn(3), torch.randn(3, 4))
    dqn_update(q_net, target_net, batch, torch.optim.SGD(q_net.parameters(), lr=0.1))
    return {"params": [q_net.weight]}
