# source: https://github.com/OmidPoursaeed/Generative_Adversarial_Perturbations/issues/4
# label: lookalike GG202
# effect: wrong_grad
# note: weight clipping after optimizer.step() through .data (WGAN-style): the next forward recomputes from the clipped weights, the gradients are those of the clipped model
import torch


def train_generator_step(net_g, optimizer, noise, target, clip=0.01):
    optimizer.zero_grad()
    loss = ((net_g(noise) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    for p in net_g.parameters():
        p.data.clamp_(-clip, clip)
    return loss.item()


def observe():
    torch.manual_seed(0)
    net_g = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(net_g.parameters(), lr=0.1)
    noise, target = torch.randn(3, 4), torch.randn(3, 4)
    train_generator_step(net_g, optimizer, noise, target)
    net_g.zero_grad()
    ((net_g(noise) - target) ** 2).mean().backward()
    got = net_g.weight.grad.clone()
    ref = torch.nn.Linear(4, 4)
    ref.load_state_dict(net_g.state_dict())
    ((ref(noise) - target) ** 2).mean().backward()
    return {"grad": got, "expected": ref.weight.grad}
