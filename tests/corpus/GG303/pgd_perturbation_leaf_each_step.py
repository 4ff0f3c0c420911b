# source: https://github.com/somuchtome/SimAC/issues/3
# label: lookalike GG303
# effect: no_grad
# note: the anti-customization PGD loop: each step's result is clamped and detached, and requires_grad = True makes it the fresh leaf that is optimised next; the gradient is wanted on that leaf only, not on the frozen models
import torch
import torch.nn.functional as F
from torch import nn


class TinyVAE(nn.Module):
    def __init__(self, channels=3, latent=4):
        super().__init__()
        self.enc = nn.Conv2d(channels, latent, 3, stride=2, padding=1)

    def encode(self, images):
        return self.enc(images)

    def forward(self, images):
        return self.encode(images)


class TinyUNet(nn.Module):
    def __init__(self, latent=4, hidden=8):
        super().__init__()
        self.time_emb_proj = nn.Linear(1, hidden)
        self.conv_in = nn.Conv2d(latent, hidden, 3, padding=1)
        self.conv_out = nn.Conv2d(hidden, latent, 3, padding=1)

    def forward(self, noisy_latents, timesteps):
        temb = self.time_emb_proj(timesteps.float().view(-1, 1) / 1000)[:, :, None, None]
        return self.conv_out(torch.relu(self.conv_in(noisy_latents) + temb))


def add_noise(latents, noise, timesteps, num_train_timesteps=1000):
    alphas = 1.0 - timesteps.float().view(-1, 1, 1, 1) / num_train_timesteps
    return alphas.sqrt() * latents + (1.0 - alphas).sqrt() * noise


def pgd_attack(unet, vae, data_tensor, original_images, num_steps, pgd_alpha=0.005, pgd_eps=16 / 255):
    """Return new perturbed data"""
    perturbed_images = data_tensor.detach().clone()
    perturbed_images.requires_grad_(True)
    for step in range(num_steps):
        perturbed_images.requires_grad = True
        latents = vae(perturbed_images)
        # Sample noise that we'll add to the latents
        noise = torch.randn_like(latents)
        timesteps = torch.randint(0, 1000, (latents.shape[0],))
        noisy_latents = add_noise(latents, noise, timesteps)
        model_pred = unet(noisy_latents, timesteps)
        unet.zero_grad()
        vae.zero_grad()
        loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
        loss.backward()
        adv_images = perturbed_images + pgd_alpha * perturbed_images.grad.sign()
        eta = torch.clamp(adv_images - original_images, min=-pgd_eps, max=+pgd_eps)
        perturbed_images = torch.clamp(original_images + eta, min=-1, max=+1).detach_()
        print(f"PGD loss - step {step}, loss: {loss.detach().item()}")
    return perturbed_images


def observe():
    torch.manual_seed(0)
    unet, vae = TinyUNet(), TinyVAE()
    for p in list(unet.parameters()) + list(vae.parameters()):
        p.requires_grad_(False)
    leaves = []
    vae.register_forward_pre_hook(lambda _m, args: leaves.append(args[0]))
    images = torch.rand(2, 3, 8, 8) * 2 - 1
    pgd_attack(unet, vae, images, images, num_steps=3)
    assert len(leaves) == 3
    return {"params": leaves}
