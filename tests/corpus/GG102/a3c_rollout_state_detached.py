# source: https://github.com/ikostrikov/pytorch-a3c/issues/76
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: train.py as written: (hx, cx) zeroed when an episode ends and detached at the start of every rollout
import torch
import torch.nn.functional as F
from torch import nn


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, hidden=16):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, hidden)
        self.lstm = nn.LSTMCell(hidden, hidden)
        self.critic_linear = nn.Linear(hidden, 1)
        self.actor_linear = nn.Linear(hidden, n_actions)

    def forward(self, inputs):
        x, (hx, cx) = inputs
        hx, cx = self.lstm(F.elu(self.encoder(x)), (hx, cx))
        return self.critic_linear(hx), self.actor_linear(hx), (hx, cx)


def train(model, env, optimizer, n_updates, num_steps=5, gamma=0.99):
    state = env.reset()
    done = True
    for _ in range(n_updates):
        if done:
            cx = torch.zeros(1, 16)
            hx = torch.zeros(1, 16)
        else:
            cx = cx.detach()
            hx = hx.detach()
        values, log_probs, rewards = [], [], []
        for step in range(num_steps):
            value, logit, (hx, cx) = model((state.unsqueeze(0), (hx, cx)))
            prob = F.softmax(logit, dim=-1)
            action = prob.multinomial(num_samples=1).detach()
            log_probs.append(F.log_softmax(logit, dim=-1).gather(1, action))
            state, reward, done = env.step(action.item())
            values.append(value)
            rewards.append(reward)
            if done:
                state = env.reset()
                break
        R = torch.zeros(1, 1)
        policy_loss, value_loss = 0, 0
        for i in reversed(range(len(rewards))):
            R = gamma * R + rewards[i]
            advantage = R - values[i]
            value_loss = value_loss + 0.5 * advantage.pow(2)
            policy_loss = policy_loss - log_probs[i] * advantage.detach()
        optimizer.zero_grad()
        (policy_loss + 0.5 * value_loss).sum().backward()
        optimizer.step()


class RandomEnv:
    def reset(self):
        return torch.randn(4)

    def step(self, action):
        return torch.randn(4), float(action), False


def observe():
    model = ActorCritic()
    train(model, RandomEnv(), torch.optim.Adam(model.parameters(), lr=1e-3), 3)
    return {}
