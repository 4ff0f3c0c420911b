# source: https://mc.ai/a-pair-of-interrelated-neural-networks-in-dqn/
# label: lookalike GG103
# effect: graph_built
# note: acting with epsilon-greedy: get_action() runs the Q-network under no_grad (no back-propagation happens there)
import random

import torch

from corpus.oracle import hook_outputs


class Agent:
    def __init__(self, q_local, n_actions, epsilon=0.1):
        self.q_local = q_local
        self.n_actions = n_actions
        self.epsilon = epsilon

    def get_action(self, state):
        if random.random() < self.epsilon:
            return random.randrange(self.n_actions)
        with torch.no_grad():
            q_values = self.q_local(state.unsqueeze(0))
        return int(q_values.argmax(dim=1).item())


def observe():
    random.seed(0)
    q = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    built = hook_outputs(q)
    agent = Agent(q, 2, epsilon=0.0)
    for _ in range(3):
        agent.get_action(torch.randn(4))
    return {"built": built}
