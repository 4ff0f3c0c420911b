# source: https://github.com/somuchtome/SimAC/issues/3
# label: GG301 45
# effect: wrong_grad
# note: the feature loss is added as target_loss.detach().item(): a constant, so the PGD step's gradient on the images comes from the noise loss alone ("I can't understand why using the detach, not loss + target_loss")
import torch
import torch.nn.functional as F
from torch import nn


class Denoiser(nn.Module):
    """A small noise predictor that keeps its decoder features for the feature loss."""

    def __init__(self, channels=3, hidden=8):
        super().__init__()
        self.down = nn.Conv2d(channels, hidden, 3, padding=1)
        self.time_emb_proj = nn.Linear(1, hidden)
        self.up = nn.Conv2d(hidden, channels, 3, padding=1)
        self.out_layers_features = None

    def forward(self, noisy_latents, timesteps):
        temb = self.time_emb_proj(timesteps.float().view(-1, 1) / 1000)[:, :, None, None]
        hidden_states = torch.relu(self.down(noisy_latents) + temb)
        self.out_layers_features = hidden_states
        return self.up(hidden_states)


def add_noise(latents, noise, timesteps, num_train_timesteps=1000):
    alphas = 1.0 - timesteps.float().view(-1, 1, 1, 1) / num_train_timesteps
    return alphas.sqrt() * latents + (1.0 - alphas).sqrt() * noise


def pgd_step(unet, perturbed_images, data_tensor, original_images, timesteps, pgd_alpha=0.005, pgd_eps=16 / 255):
    perturbed_images.requires_grad = True
    noise = torch.randn_like(perturbed_images)
    noisy_latents = add_noise(perturbed_images, noise, timesteps)
    model_pred = unet(noisy_latents, timesteps)
    noise_out_layers_features = unet.out_layers_features
    with torch.no_grad():
        noisy_clean_latents = add_noise(data_tensor, noise, timesteps)
        unet(noisy_clean_latents, timesteps)
        clean_out_layers_features = unet.out_layers_features
    target_loss = F.mse_loss(noise_out_layers_features.float(), clean_out_layers_features.float(), reduction="mean")
    unet.zero_grad()
    loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
    loss = loss + target_loss.detach().item()
    loss.backward()
    adv_images = perturbed_images + pgd_alpha * perturbed_images.grad.sign()
    eta = torch.clamp(adv_images - original_images, min=-pgd_eps, max=+pgd_eps)
    return torch.clamp(original_images + eta, min=-1, max=+1).detach_()


def pgd_attack(unet, data_tensor, original_images, num_steps, time_list):
    perturbed_images = data_tensor.detach().clone()
    for step in range(num_steps):
        timesteps = torch.tensor([time_list[i][step % len(time_list[i])] for i in range(len(data_tensor))])
        perturbed_images = pgd_step(unet, perturbed_images, data_tensor, original_images, timesteps)
    return perturbed_images


def observe():
    torch.manual_seed(0)
    unet = Denoiser()
    data = torch.rand(2, 3, 6, 6) * 2 - 1
    perturbed = (data + 0.03 * torch.randn_like(data)).clamp(-1, 1)  # the images after a first PGD step
    timesteps = torch.tensor([400, 700])
    torch.manual_seed(1)
    pgd_step(unet, perturbed, data, data, timesteps)
    got = perturbed.grad.clone()
    torch.manual_seed(1)  # the step the code means: the feature loss in the graph
    x = perturbed.detach().clone().requires_grad_(True)
    noise = torch.randn_like(x)
    pred = unet(add_noise(x, noise, timesteps), timesteps)
    feats = unet.out_layers_features
    with torch.no_grad():
        unet(add_noise(data, noise, timesteps), timesteps)
        clean = unet.out_layers_features
    (F.mse_loss(pred, noise) + F.mse_loss(feats, clean)).backward()
    return {"grad": got, "expected": x.grad}
