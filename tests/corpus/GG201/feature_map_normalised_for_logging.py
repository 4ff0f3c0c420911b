# source: https://androidkt.com/one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation/
# label: GG201 11
# effect: changed
# note: a logging helper normalises a detached feature map in place: detach() shares storage, so the model's features the caller still uses change too
import torch


def log_feature_map(writer, feat, step):
    """Write the first feature map as an image, scaled to [0, 1]."""
    img = feat.detach()[0]
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
