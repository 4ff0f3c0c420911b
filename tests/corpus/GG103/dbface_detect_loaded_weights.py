# source: https://github.com/dlunion/DBFace/pull/46
# label: GG103 37
# effect: graph_built
# note: the demo loads the weights with torch.load, calls eval() and runs detect() on every frame with grad enabled; the outputs only go to numpy and NMS ("add torch.no_grad() for inference network")
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DBFace(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
        self.hm = nn.Conv2d(width, 1, 1)
        self.box = nn.Conv2d(width, 4, 1)
        self.landmark = nn.Conv2d(width, 10, 1)

    def forward(self, x):
        x = self.backbone(x)
        return self.hm(x).sigmoid(), self.box(x), self.landmark(x)

    def load(self, file):
        checkpoint = torch.load(file, map_location="cpu")
        self.load_state_dict(checkpoint)


def detect(model, image, threshold=0.4, stride=4):
    mean = [0.408, 0.447, 0.47]
    std = [0.289, 0.274, 0.278]

    image = ((image / 255.0 - mean) / std).astype(np.float32)
    image = image.transpose(2, 0, 1)
    torch_image = torch.from_numpy(image)[None]

    hm, box, landmark = model(torch_image)
    hm_pool = F.max_pool2d(hm, 3, 1, 1)
    k = min(1000, hm.numel())
    scores, indices = ((hm == hm_pool).float() * hm).view(1, -1).cpu().topk(k)
    hm_height, hm_width = hm.shape[2:]

    scores = scores.squeeze(0)
    indices = indices.squeeze(0)
    ys = list((indices // hm_width).int().data.numpy())
    xs = list((indices % hm_width).int().data.numpy())
    scores = list(scores.data.numpy())
    box = box.cpu().squeeze(0).data.numpy()

    objs = []
    for cx, cy, score in zip(xs, ys, scores):
        if score < threshold:
            break
        x, y, r, b = box[:, cy, cx]
        xyrb = (np.array([cx, cy, cx, cy]) + [-x, -y, r, b]) * stride
        objs.append((xyrb, float(score)))
    return objs


def load_detector(model_path):
    dbface = DBFace()
    dbface.eval()
    dbface.load(model_path)
    return dbface


def camera_demo(dbface, frames):
    results = []
    for frame in frames:
        objs = detect(dbface, frame)
        results.append(len(objs))
    return results


def observe():
    import io

    from corpus.oracle import hook_outputs

    buf = io.BytesIO()
    torch.save(DBFace().state_dict(), buf)
    buf.seek(0)
    dbface = load_detector(buf)
    built = hook_outputs(dbface)
    rng = np.random.default_rng(0)
    camera_demo(dbface, [rng.integers(0, 255, (16, 16, 3)).astype(np.float64) for _ in range(3)])
    return {"built": built}
