# source: https://androidkt.com/one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation/
# label: lookalike GG201
# effect: changed
# note: the page's advice: detach().clone() gives the helper its own storage to normalise in place
import torch


def log_feature_map(writer, feat, step):
    """Write the first feature map as an image, scaled to [0, 1]."""
    img = feat.detach()[0].clone()
    img -= img.min()
    img /= img.max().clamp(min=1e-8)
    writer.append((step, img.mean().item()))


def observe():
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(1, 2, 3, padding=1)
    feat = conv(torch.randn(2, 1, 5, 5))
    before = feat.detach().clone()
    log_feature_map([], feat, 0)
    return {"before": before, "after": feat.detach()}
