# source: https://github.com/Kaixhin/Rainbow/pull/33
# label: lookalike GG101
# effect: graph_kept
# note: new priorities written to the replay memory from loss.detach(): the memory holds values, not graphs
import torch


class PrioritizedReplay:
    def __init__(self, capacity):
        self.priorities = torch.ones(capacity)

    def update_priorities(self, idxs, priorities):
        self.priorities[idxs] = priorities.pow(0.5)


def learn(online_net, target_net, mem, batches, optimizer, gamma=0.99):
    for idxs, states, actions, returns, next_states in batches:
        q = online_net(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = returns + gamma * target_net(next_states).max(1).values
        loss = (q - target).pow(2)
        optimizer.zero_grad()
        loss.mean().backward()
        optimizer.step()
        mem.update_priorities(idxs, loss.detach())


def observe():
    online, target = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    mem = PrioritizedReplay(16)
    batches = [(torch.randint(0, 16, (3,)), torch.randn(3, 4), torch.randint(0, 2, (3,)), torch.randn(3),
                torch.randn(3, 4)) for _ in range(3)]
    learn(online, target, mem, batches, torch.optim.Adam(online.parameters(), lr=1e-3))
    return {"kept": mem.priorities}
