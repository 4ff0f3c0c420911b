# source: https://github.com/Kostis-S-Z/exploring_meta/issues/16
# label: GG303 27
# effect: no_grad_arrived
# note: the PPO update rebuilds the new log-probabilities as a fresh tensor of .item() values, so the clipped surrogate has no graph; setting loss.requires_grad = True makes backward() run, and the policy never learns
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, n_actions))

    def forward(self, obs):
        return Categorical(logits=self.net(obs))


def ppo_update(policy, optimizer, states, actions, old_log_probs, advantages, clip=0.2, ppo_epochs=2):
    for _ in range(ppo_epochs):
        dist = policy(states)
        new_log_probs = torch.tensor([dist.log_prob(a)[i].item() for i, a in enumerate(actions)])
        ratio = torch.exp(new_log_probs - old_log_probs)
        surr1 = ratio * advantages
        surr2 = torch.clamp(ratio, 1 - clip, 1 + clip) * advantages
        loss = -torch.min(surr1, surr2).mean()
        loss.requires_grad = True
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    from corpus.oracle import grad_arrivals

    policy = Policy()
    arrived = grad_arrivals(list(policy.parameters()))
    states = torch.randn(5, 4)
    with torch.no_grad():
        dist = policy(states)
        actions = dist.sample()
        old_log_probs = dist.log_prob(actions)
    ppo_update(policy, torch.optim.Adam(policy.parameters(), lr=3e-4), states, actions, old_log_probs,
               torch.randn(5))
    return {"arrived": arrived}
