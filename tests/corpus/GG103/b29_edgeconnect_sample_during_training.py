# source: https://github.com/knazeri/edge-connect/issues/9
# label: GG103 39
# effect: graph_built
# note: every `sample_interval` iterations the training loop calls sample(), which runs the inpainting network on a validation batch with grad on only to save the images
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class EdgeConnect:
    def __init__(self, inpaint_net, config):
        self.inpaint_net = inpaint_net
        self.config = config
        self.optimizer = torch.optim.Adam(inpaint_net.parameters(), lr=config["lr"], betas=(0.0, 0.9))
        self.iteration = 0

    def train(self, train_loader, val_batch):
        for epoch in range(self.config["epochs"]):
            self.inpaint_net.train()
            for images, masks in train_loader:
                self.iteration += 1
                images_masked = images * (1 - masks)
                outputs = self.inpaint_net(torch.cat((images_masked, masks), dim=1))
                l1_loss = F.l1_loss(outputs, images) / torch.mean(masks)
                self.optimizer.zero_grad()
                l1_loss.backward()
                self.optimizer.step()

                if self.iteration % self.config["sample_interval"] == 0:
                    self.sample(val_batch)

    def sample(self, batch):
        self.inpaint_net.eval()
        images, masks = batch
        images_masked = images * (1 - masks)
        outputs = self.inpaint_net(torch.cat((images_masked, masks), dim=1))
        outputs_merged = outputs * masks + images * (1 - masks)
        grid = torch.cat([images, images_masked, outputs_merged], dim=3)
        path = os.path.join(self.config["samples_path"], "%05d.npy" % self.iteration)
        np.save(path, grid.detach().cpu().numpy())


def observe():
    import tempfile

    from corpus.oracle import hook_outputs

    inpaint_net = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))
    built = hook_outputs(inpaint_net, where=lambda inputs: inputs[0].shape[0] == 2)
    masks = (torch.rand(4, 1, 6, 6) > 0.5).float()
    loader = [(torch.rand(4, 3, 6, 6), masks) for _ in range(2)]
    val_batch = (torch.rand(2, 3, 6, 6), (torch.rand(2, 1, 6, 6) > 0.5).float())
    with tempfile.TemporaryDirectory() as d:
        EdgeConnect(inpaint_net, {"lr": 1e-3, "epochs": 1, "sample_interval": 2, "samples_path": d}).train(loader, val_batch)
    return {"built": built}
