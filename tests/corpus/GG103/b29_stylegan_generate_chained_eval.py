# source: https://github.com/rosinality/style-based-gan-pytorch/issues/10
# label: GG103 42
# effect: graph_built
# note: generate.py builds the generator with `.eval()` chained on the constructor and samples images with grad on only to save them (the thread's answer: torch.no_grad()) (the label sits on the first forward of `sample()`, the generator's own `mean_style()` on line 42, also with grad on: GG103 reports one finding per evaluation function, on its first model call; line 47's forward is the same finding)
import math

import numpy as np
import torch
from torch import nn


class StyledGenerator(nn.Module):
    def __init__(self, code_dim=8, n_mlp=2, size=4):
        super().__init__()
        layers = []
        for _ in range(n_mlp):
            layers += [nn.Linear(code_dim, code_dim), nn.LeakyReLU(0.2)]
        self.style = nn.Sequential(*layers)
        self.synthesis = nn.Linear(code_dim, 3 * size * size)
        self.size = size

    def forward(self, z, step=0, alpha=-1, mean_style=None, style_weight=0):
        styles = self.style(z)
        if mean_style is not None:
            styles = mean_style + style_weight * (styles - mean_style)
        return self.synthesis(styles).view(-1, 3, self.size, self.size)

    def mean_style(self, z):
        return self.style(z).mean(0, keepdim=True)


def save_grid(images, path, nrow):
    grid = images.clamp(-1, 1).add(1).div(2).cpu().numpy()
    np.save(path, grid.reshape(nrow, -1))


def sample(ckpt_state, out_path, n_row=2, n_col=2, code_dim=8, step=0):
    generator = StyledGenerator(code_dim).eval()
    generator.load_state_dict(ckpt_state)
    mean_style = None
    for _ in range(4):
        style = generator.mean_style(torch.randn(16, code_dim))
        mean_style = style if mean_style is None else mean_style + style
    mean_style /= 4
    alpha = 1
    resolution = 4 * 2 ** step
    img = generator(torch.randn(n_row * n_col, code_dim), step=step, alpha=alpha,
                    mean_style=mean_style, style_weight=0.7)
    save_grid(img.data, out_path, nrow=n_row)
    return int(math.log(resolution, 2))


def observe():
    import tempfile

    from corpus.oracle import forward_outputs

    state = StyledGenerator(8).state_dict()
    with tempfile.TemporaryDirectory() as d, forward_outputs() as built:
        sample(state, d + "/sample.npy")
    return {"built": built}
