# source: https://github.com/photosynthesis-team/piq/pull/175
# label: GG103 15
# effect: activations_alive
# note: compute_feats() runs the feature extractor over the whole loader with grad on and concatenates the features; FID only reads them as NumPy statistics, so every batch's activations stay alive until then (the PR adds torch.no_grad())
import numpy as np
import torch
from torch import nn


def compute_feats(loader, feature_extractor, device="cpu"):
    total_feats = []
    for batch in loader:
        images = batch["images"].to(device)
        N = images.shape[0]
        features = feature_extractor(images)
        total_feats.append(features.view(N, -1))
    return torch.cat(total_feats, dim=0)


def _sqrtm_newton(m, iters=20):
    y, z = m.copy(), np.eye(len(m))
    norm = np.linalg.norm(m)
    y /= norm
    for _ in range(iters):
        t = 0.5 * (3.0 * np.eye(len(m)) - z @ y)
        y, z = y @ t, t @ z
    return y * np.sqrt(norm)


def compute_metric(x_features, y_features):
    x = x_features.detach().cpu().numpy().astype(np.float64)
    y = y_features.detach().cpu().numpy().astype(np.float64)
    mu_x, mu_y = x.mean(0), y.mean(0)
    sigma_x, sigma_y = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    covmean = _sqrtm_newton(sigma_x @ sigma_y + 1e-6 * np.eye(len(mu_x)))
    return float(((mu_x - mu_y) ** 2).sum() + np.trace(sigma_x + sigma_y - 2 * covmean))


def fid_between(real_loader, fake_loader, feature_extractor):
    real_feats = compute_feats(real_loader, feature_extractor)
    fake_feats = compute_feats(fake_loader, feature_extractor)
    return compute_metric(real_feats, fake_feats)


def observe():
    extractor = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
    real = [{"images": torch.rand(4, 3, 6, 6)} for _ in range(2)]
    fake = [{"images": torch.rand(4, 3, 6, 6)} for _ in range(2)]
    fid_between(real, fake, extractor)
    return {"kept": compute_feats(real, extractor)}
