# source: https://github.com/kc-ml2/SimpleDreamer/issues/7
# label: GG102|GG103 97
# effect: graph_grows
# note: environment_interaction() feeds the RSSM its own deterministic/posterior state at every env step with grad enabled; nothing back-propagates it, so the graph grows until the episode ends ("cuda out of memory" without the torch.no_grad decorator)
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class RSSM(nn.Module):
    def __init__(self, action_size, stochastic_size=8, deterministic_size=16, embedded_size=12, hidden_size=16):
        super().__init__()
        self.stochastic_size = stochastic_size
        self.deterministic_size = deterministic_size
        self.fc_input = nn.Sequential(nn.Linear(stochastic_size + action_size, hidden_size), nn.ELU())
        self.recurrent = nn.GRUCell(hidden_size, deterministic_size)
        self.transition = nn.Linear(deterministic_size, 2 * stochastic_size)
        self.representation = nn.Linear(deterministic_size + embedded_size, 2 * stochastic_size)

    def recurrent_model_input_init(self, batch_size):
        return torch.zeros(batch_size, self.stochastic_size), torch.zeros(batch_size, self.deterministic_size)

    def recurrent_model(self, state, action, deterministic):
        x = self.fc_input(torch.cat((state, action), 1))
        return self.recurrent(x, deterministic)

    def transition_model(self, deterministic):
        mean, std = self.transition(deterministic).chunk(2, -1)
        dist = Normal(mean, F.softplus(std) + 0.1)
        return dist, dist.rsample()

    def representation_model(self, embedded_observation, deterministic):
        mean, std = self.representation(torch.cat((embedded_observation, deterministic), 1)).chunk(2, -1)
        dist = Normal(mean, F.softplus(std) + 0.1)
        return dist, dist.rsample()


class Actor(nn.Module):
    def __init__(self, action_size, stochastic_size=8, deterministic_size=16):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(stochastic_size + deterministic_size, 16), nn.ELU(),
                                     nn.Linear(16, action_size))

    def forward(self, posterior, deterministic):
        logits = self.network(torch.cat((posterior, deterministic), -1))
        sample = F.one_hot(torch.distributions.Categorical(logits=logits).sample(), logits.shape[-1]).float()
        probs = logits.softmax(-1)
        return sample + probs - probs.detach()


class ReplayBuffer:
    def __init__(self):
        self.transitions = []

    def add(self, observation, action, reward, next_observation, done):
        self.transitions.append((observation, action, reward, next_observation, done))


class Dreamer:
    def __init__(self, observation_size, action_size, embedded_size=12):
        self.action_size = action_size
        self.encoder = nn.Linear(observation_size, embedded_size)
        self.rssm = RSSM(action_size, embedded_size=embedded_size)
        self.actor = Actor(action_size)
        self.buffer = ReplayBuffer()
        self.model_optimizer = torch.optim.Adam(
            list(self.encoder.parameters()) + list(self.rssm.parameters()), lr=6e-4)
        self.num_total_episode = 0

    def dynamic_learning(self, observations, actions):
        posterior, deterministic = self.rssm.recurrent_model_input_init(len(actions))
        embedded_observation = self.encoder(observations)
        kl_loss = 0
        for t in range(1, observations.shape[1]):
            deterministic = self.rssm.recurrent_model(posterior, actions[:, t - 1], deterministic)
            prior_dist, _ = self.rssm.transition_model(deterministic)
            posterior_dist, posterior = self.rssm.representation_model(embedded_observation[:, t], deterministic)
            kl_loss = kl_loss + torch.distributions.kl.kl_divergence(posterior_dist, prior_dist).mean()
        self.model_optimizer.zero_grad()
        kl_loss.backward()
        self.model_optimizer.step()

    def environment_interaction(self, env, num_interaction_episodes, train=True):
        scores = []
        for epi in range(num_interaction_episodes):
            posterior, deterministic = self.rssm.recurrent_model_input_init(1)
            action = torch.zeros(1, self.action_size)

            observation = env.reset()
            embedded_observation = self.encoder(torch.from_numpy(observation).float())

            score = 0
            done = False
            while not done:
                deterministic = self.rssm.recurrent_model(posterior, action, deterministic)
                embedded_observation = embedded_observation.reshape(1, -1)
                _, posterior = self.rssm.representation_model(embedded_observation, deterministic)
                action = self.actor(posterior, deterministic).detach()

                buffer_action = action.cpu().numpy()
                env_action = buffer_action.argmax()

                next_observation, reward, done, info = env.step(env_action)
                if train:
                    self.buffer.add(observation, buffer_action, reward, next_observation, done)
                score += reward
                embedded_observation = self.encoder(torch.from_numpy(next_observation).float())
                observation = next_observation
            if train:
                self.num_total_episode += 1
            scores.append(score)
        return scores


def observe():
    from corpus.oracle import graph_size

    class ToyEnv:
        def __init__(self, observation_size=5, horizon=8):
            self.observation_size = observation_size
            self.horizon = horizon
            self.rng = np.random.default_rng(0)

        def reset(self):
            self.t = 0
            return self.rng.standard_normal(self.observation_size)

        def step(self, action):
            self.t += 1
            return self.rng.standard_normal(self.observation_size), float(action == 0), self.t >= self.horizon, {}

    agent = Dreamer(observation_size=5, action_size=3)
    sizes = []
    agent.rssm.recurrent.register_forward_hook(lambda m, i, out: sizes.append(graph_size(out)))
    agent.environment_interaction(ToyEnv(), 1)
    return {"sizes": sizes}
