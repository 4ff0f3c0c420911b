# source: https://sar-gupta.github.io/posts/2018/01/30/deep-dream
# label: lookalike GG103
# effect: graph_unused
# note: DeepDream runs a truncated pretrained network with grad on and only keeps the image, but the activation norm is back-propagated to the image pixels for gradient ascent
import numpy as np
import torch
from torch import nn


def truncated(backbone, layer):
    return nn.Sequential(*list(backbone.children())[: layer + 1])


def dd_helper(image, backbone, layer, iterations, lr):
    features = truncated(backbone, layer)
    features.eval()
    input_var = torch.from_numpy(image).unsqueeze(0).float().requires_grad_(True)
    for i in range(iterations):
        out = features(input_var)
        loss = out.norm()
        loss.backward()
        input_var.data = input_var.data + lr * input_var.grad.data
        input_var.grad.data.zero_()
    return input_var.data.squeeze(0).numpy()


def deep_dream(image, backbone, layer=2, iterations=3, lr=0.05, octave_scale=2, num_octaves=2):
    if num_octaves > 1:
        small = image[:, ::octave_scale, ::octave_scale]
        dreamed = deep_dream(small, backbone, layer, iterations, lr, octave_scale, num_octaves - 1)
        image = image + np.kron(dreamed - small, np.ones((1, octave_scale, octave_scale)))[:, :image.shape[1], :image.shape[2]]
    return dd_helper(image, backbone, layer, iterations, lr)


def observe():
    from corpus.oracle import output_flows

    backbone = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
    flows = output_flows(backbone[2])
    deep_dream(np.random.RandomState(0).rand(3, 8, 8).astype(np.float32), backbone)
    return {"flows": flows}
