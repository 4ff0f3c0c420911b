# source: https://github.com/msu-video-group/memfof/issues/5
# label: lookalike GG103
# effect: graph_built
# note: the video script calls the flow model's own inference() method for every frame pair and saves NumPy flow, all inside `torch.inference_mode()` (the maintainers' answer to the out-of-memory report)
import numpy as np
import torch
from torch import nn


class MEMFOFLike(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.fnet = nn.Conv2d(3, dim, 3, padding=1)
        self.update = nn.Conv2d(2 * dim, 2, 3, padding=1)

    def forward(self, frames, iters=2):
        f0, f1 = self.fnet(frames[:, 0]), self.fnet(frames[:, 1])
        flow = torch.zeros_like(f0[:, :2])
        for _ in range(iters):
            flow = flow + self.update(torch.cat([f0, f1], dim=1))
        return {"flow": [flow]}

    def inference(self, frames, iters=2):
        return self.forward(frames, iters=iters)["flow"][-1]


def process_video(flow_model, frames, out_list):
    flow_model.eval()
    with torch.inference_mode():
        for i in range(len(frames) - 1):
            pair = torch.stack([frames[i], frames[i + 1]]).unsqueeze(0)
            flow = flow_model.inference(pair, iters=2)
            out_list.append(flow.squeeze(0).permute(1, 2, 0).cpu().numpy())
    return np.stack(out_list)


def observe():
    from corpus.oracle import hook_outputs

    flow_model = MEMFOFLike()
    built = hook_outputs(flow_model.update)
    process_video(flow_model, [torch.rand(3, 6, 6) for _ in range(3)], [])
    return {"built": built}
