# source: https://github.com/khaledkah/MoreRed/pull/25
# label: lookalike GG103
# effect: graph_built
# note: the denoiser is sampled every few epochs from inside the training function to log sample statistics, but the sampling method carries `@torch.no_grad()` (the PR's change)
import torch
from torch import nn


class DiffusionTask:
    def __init__(self, denoiser, n_steps=4):
        self.denoiser = denoiser
        self.n_steps = n_steps
        self.betas = torch.linspace(1e-4, 0.2, n_steps)
        self.alphas_bar = torch.cumprod(1 - self.betas, dim=0)

    def loss(self, x0):
        t = torch.randint(0, self.n_steps, (x0.shape[0],))
        noise = torch.randn_like(x0)
        a = self.alphas_bar[t].unsqueeze(1)
        x_t = a.sqrt() * x0 + (1 - a).sqrt() * noise
        eps_hat = self.denoiser(torch.cat([x_t, t.float().unsqueeze(1) / self.n_steps], dim=1))
        return ((eps_hat - noise) ** 2).mean()

    @torch.no_grad()
    def sample(self, n, dim):
        x = torch.randn(n, dim)
        for t in reversed(range(self.n_steps)):
            tt = torch.full((n, 1), t / self.n_steps)
            eps_hat = self.denoiser(torch.cat([x, tt], dim=1))
            a, a_bar = 1 - self.betas[t], self.alphas_bar[t]
            x = (x - (1 - a) / (1 - a_bar).sqrt() * eps_hat) / a.sqrt()
        return x


def train(task, loader, epochs, sample_every=1):
    optimizer = torch.optim.Adam(task.denoiser.parameters(), lr=1e-3)
    log = []
    for epoch in range(epochs):
        for x0 in loader:
            loss = task.loss(x0)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch % sample_every == 0:
            samples = task.sample(8, x0.shape[1])
            log.append({"epoch": epoch, "mean": samples.mean().item(), "std": samples.std().item()})
    return log


def observe():
    from corpus.oracle import hook_outputs

    denoiser = nn.Sequential(nn.Linear(4, 16), nn.SiLU(), nn.Linear(16, 3))
    built = hook_outputs(denoiser, where=lambda inputs: inputs[0].shape[0] == 8)
    train(DiffusionTask(denoiser), [torch.randn(5, 3) for _ in range(2)], epochs=2)
    return {"built": built}
