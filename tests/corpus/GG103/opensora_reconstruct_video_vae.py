# source: https://github.com/PKU-YuanGroup/Open-Sora-Plan/pull/69
# label: GG103 41
# effect: graph_built
# note: the reconstruction script calls the VAE's own encode()/decode() methods with grad on and writes uint8 frames; the PR's no_grad cut memory from 31 GB to 8 GB for 50 frames
import numpy as np
import torch
from torch import nn


class CausalVideoVAE(nn.Module):
    def __init__(self, channels=3, latent=4):
        super().__init__()
        self.encoder = nn.Conv3d(channels, 8, kernel_size=3, padding=1)
        self.quant_conv = nn.Conv3d(8, latent, kernel_size=1)
        self.post_quant_conv = nn.Conv3d(latent, 8, kernel_size=1)
        self.decoder = nn.Conv3d(8, channels, kernel_size=3, padding=1)

    def encode(self, x):
        return self.quant_conv(torch.relu(self.encoder(x)))

    def decode(self, z):
        return torch.tanh(self.decoder(torch.relu(self.post_quant_conv(z))))


def preprocess(video_data, resolution=8):
    video = torch.from_numpy(video_data).float().permute(3, 0, 1, 2) / 127.5 - 1.0
    video = nn.functional.interpolate(video, size=(resolution, resolution), mode="bilinear")
    return video.unsqueeze(0)


def custom_to_video(x):
    x = x.detach().cpu()
    x = torch.clamp(x, -1, 1)
    x = (x + 1) / 2
    x = x.permute(1, 2, 3, 0).float().numpy()
    return (255 * x).astype(np.uint8)


def reconstruct(vae, video_data, resolution=8):
    x_vae = preprocess(video_data, resolution)
    latents = vae.encode(x_vae)
    video_recon = vae.decode(latents)
    return custom_to_video(video_recon[0])


def observe():
    from corpus.oracle import forward_outputs

    vae = CausalVideoVAE()
    video = np.random.RandomState(0).randint(0, 255, (4, 10, 10, 3)).astype(np.uint8)
    with forward_outputs() as built:
        frames = reconstruct(vae, video)
    return {"built": built, "frames": frames}
