# source: https://github.com/mimoralea/gdrl/pull/14
# label: lookalike GG202
# effect: wrong_grad
# note: the DDPG target networks are blended in through .data after the optimizer step, before the next forward: no graph holds them, and the online networks' next gradients are exact
import copy

import torch
import torch.nn.functional as F


class DDPG:
    def __init__(self, value_model, policy_model, gamma=0.99, tau=0.005):
        self.online_value_model = value_model
        self.online_policy_model = policy_model
        self.target_value_model = copy.deepcopy(value_model)
        self.target_policy_model = copy.deepcopy(policy_model)
        self.value_optimizer = torch.optim.Adam(value_model.parameters(), lr=1e-3)
        self.gamma = gamma
        self.tau = tau

    def optimize_value(self, states, actions, rewards, next_states, is_terminals):
        with torch.no_grad():
            argmax_a_q_sp = self.target_policy_model(next_states)
            max_a_q_sp = self.target_value_model(torch.cat([next_states, argmax_a_q_sp], dim=1))
            target_q_sa = rewards + self.gamma * max_a_q_sp * (1 - is_terminals)
        q_sa = self.online_value_model(torch.cat([states, actions], dim=1))
        value_loss = F.mse_loss(q_sa, target_q_sa)
        self.value_optimizer.zero_grad()
        value_loss.backward()
        self.value_optimizer.step()
        return value_loss.item()

    def update_networks(self, tau=None):
        tau = self.tau if tau is None else tau
        for target, online in zip(self.target_value_model.parameters(), self.online_value_model.parameters()):
            target_ratio = (1.0 - tau) * target.data
            online_ratio = tau * online.data
            mixed_weights = target_ratio + online_ratio
            target.data.copy_(mixed_weights)
        for target, online in zip(self.target_policy_model.parameters(), self.online_policy_model.parameters()):
            target_ratio = (1.0 - tau) * target.data
            online_ratio = tau * online.data
            mixed_weights = target_ratio + online_ratio
            target.data.copy_(mixed_weights)


def observe():
    torch.manual_seed(0)
    value = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    policy = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    agent = DDPG(value, policy, tau=0.5)
    batch = (torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1), torch.randn(4, 3), torch.zeros(4, 1))
    agent.optimize_value(*batch)
    agent.update_networks()
    # the networks the next step computes its gradient from, copied before it runs
    ref_value = copy.deepcopy(value)
    ref_target_value, ref_target_policy = copy.deepcopy(agent.target_value_model), copy.deepcopy(agent.target_policy_model)
    agent.optimize_value(*batch)
    states, actions, rewards, next_states, done = batch
    with torch.no_grad():
        next_q = ref_target_value(torch.cat([next_states, ref_target_policy(next_states)], dim=1))
        target = rewards + 0.99 * next_q * (1 - done)
    ref_value.zero_grad(set_to_none=True)
    F.mse_loss(ref_value(torch.cat([states, actions], dim=1)), target).backward()
    return {"grad": value[0].weight.grad, "expected": ref_value[0].weight.grad}
