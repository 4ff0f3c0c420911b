# source: https://github.com/lhoyer/DAFormer/issues/88
# label: GG103 24
# effect: activations_alive
# note: features for a t-SNE plot are taken from the DataParallel-wrapped network's encoder (`net.module.encoder(...)`) with grad on and kept in a list for the whole validation set; only NumPy reaches the plot
import numpy as np
import torch
from torch import nn


class SegFormerLike(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 6, 3, padding=1))
        self.decode_head = nn.Conv2d(6, num_classes, 1)

    def forward(self, x):
        return self.decode_head(self.encoder(x))


def collect_tsne_features(net, testloader, max_points=64):
    tsne_features, tsne_labels = [], []
    for index, batch in enumerate(testloader):
        images, labels = batch
        feats = net.module.encoder(images)
        feats = feats.squeeze(0).permute(1, 2, 0).reshape(-1, feats.shape[1])
        tsne_features.append(feats[:max_points])
        tsne_labels.append(labels.reshape(-1)[:max_points])
    return tsne_features, tsne_labels


def plot_tsne(net, testloader):
    tsne_features, tsne_labels = collect_tsne_features(net, testloader)
    features = np.concatenate([f.detach().cpu().numpy() for f in tsne_features], axis=0)
    labels = np.concatenate([l.cpu().numpy() for l in tsne_labels], axis=0)
    centered = features - features.mean(0)
    _, _, vt = np.linalg.svd(centered, full_matrices=False)
    return centered @ vt[:2].T, labels


def observe():
    net = nn.DataParallel(SegFormerLike())
    loader = [(torch.rand(1, 3, 6, 6), torch.randint(0, 4, (1, 6, 6))) for _ in range(2)]
    plot_tsne(net, loader)
    kept, _ = collect_tsne_features(net, loader)
    return {"kept": kept}
