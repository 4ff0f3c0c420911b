# source: https://github.com/christiansafka/img2vec/pull/33
# label: GG103 35
# effect: graph_built
# note: get_vec() runs the network with grad on and throws its output away: the embedding is copied out of a layer by a forward hook (`.copy_(o.data)`) and returned as NumPy (the PR adds torch.no_grad())
import numpy as np
import torch
from torch import nn


def _get_model_and_layer(model_name, layer_output_size):
    backbone = nn.Sequential()
    backbone.add_module("conv", nn.Conv2d(3, 4, 3, padding=1))
    backbone.add_module("relu", nn.ReLU())
    backbone.add_module("avgpool", nn.AdaptiveAvgPool2d(1))
    backbone.add_module("flatten", nn.Flatten())
    backbone.add_module("fc", nn.Linear(4, 10))
    return backbone, backbone._modules.get("avgpool")


class Img2Vec():
    def __init__(self, model="resnet-18", layer="default", layer_output_size=4):
        self.layer_output_size = layer_output_size
        self.model_name = model
        self.model, self.extraction_layer = _get_model_and_layer(model, layer_output_size)
        self.model.eval()

    def get_vec(self, img, tensor=False):
        image = img.unsqueeze(0)
        my_embedding = torch.zeros(1, self.layer_output_size, 1, 1)

        def copy_data(m, i, o):
            my_embedding.copy_(o.data)

        h = self.extraction_layer.register_forward_hook(copy_data)
        h_x = self.model(image)
        h.remove()

        if tensor:
            return my_embedding
        return my_embedding.numpy()[0, :, 0, 0]


def observe():
    from corpus.oracle import hook_outputs

    img2vec = Img2Vec()
    built = hook_outputs(img2vec.model)
    vecs = [img2vec.get_vec(torch.rand(3, 6, 6)) for _ in range(2)]
    assert isinstance(vecs[0], np.ndarray)
    return {"built": built}
