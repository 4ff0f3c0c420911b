# source: https://github.com/isayev/ReLeaSE/issues/39
# label: GG302 22
# effect: raises "element 0 of tensors does not require grad"
# note: the policy-gradient loss is accumulated from .item() of the log-probabilities: it holds no graph, backward() raises (or, started from a tensor with grad, trains nothing)
import torch
from torch import nn


def policy_gradient_step(generator, optimizer, trajectory, rewards, gamma=0.97):
    optimizer.zero_grad()
    rl_loss = torch.tensor(0.0)
    discounted_reward = 0.0
    hidden = None
    for t in reversed(range(len(trajectory) - 1)):
        discounted_reward = rewards[t] + gamma * discounted_reward
    discounted_reward = float(discounted_reward)
    for p in range(len(trajectory) - 1):
        output, hidden = generator(trajectory[p], hidden)
        log_probs = torch.log_softmax(output, dim=1)
        top_i = trajectory[p + 1]
        rl_loss -= log_probs[0, top_i].item() * discounted_reward
    rl_loss.backward()
    optimizer.step()
    return rl_loss.item()


def observe():
    torch.manual_seed(0)
    cell = nn.RNN(4, 6, batch_first=True)
    head = nn.Linear(6, 5)
    emb = nn.Embedding(5, 4)

    def generator(token, hidden):
        out, hidden = cell(emb(torch.tensor([[token]])), hidden)
        return head(out[:, -1]), hidden

    params = list(cell.parameters()) + list(head.parameters()) + list(emb.parameters())
    optimizer = torch.optim.SGD(params, lr=0.1)
    return {"loss": policy_gradient_step(generator, optimizer, [1, 3, 2, 4], [0.0, 0.0, 1.0, 0.0])}
