# source: https://github.com/nathan66666/DVMSR/issues/5
# label: lookalike GG103
# effect: graph_built
# note: no torch.no_grad() in the test script, but every parameter is frozen (requires_grad = False) before the forward, and the low-resolution input has no grad: the outputs build no graph
import numpy as np
import torch
from torch import nn


class DVMSR(nn.Module):
    def __init__(self, upscale=2, channels=3, feats=8):
        super().__init__()
        self.head = nn.Conv2d(channels, feats, 3, padding=1)
        self.body = nn.Conv2d(feats, feats, 3, padding=1)
        self.tail = nn.Conv2d(feats, channels * upscale ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(upscale)

    def forward(self, x):
        h = torch.relu(self.head(x))
        return self.shuffle(self.tail(h + torch.relu(self.body(h))))


def forward(img_lq, model, tile=None, tile_overlap=32, scale=2):
    if tile is None:
        output = model(img_lq)
    else:
        raise NotImplementedError("tiled inference")
    return output


def tensor2uint(img):
    img = img.data.squeeze().float().clamp_(0, 1).cpu().numpy()
    if img.ndim == 3:
        img = np.transpose(img, (1, 2, 0))
    return np.uint8((img * 255.0).round())


def run(model, images, device="cpu"):
    model.eval()
    tile = None
    for k, v in model.named_parameters():
        v.requires_grad = False
    model = model.to(device)
    results = []
    for img_L in images:
        img_E = forward(img_L.to(device), model, tile)
        results.append(tensor2uint(img_E))
    return results


def observe():
    from corpus.oracle import hook_outputs

    model = DVMSR()
    built = hook_outputs(model)
    run(model, [torch.rand(1, 3, 4, 4) for _ in range(2)])
    return {"built": built}
