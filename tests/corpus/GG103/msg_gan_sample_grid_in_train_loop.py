# source: https://github.com/akanimax/msg-gan-v1/issues/2
# label: GG103 74
# effect: graph_built
# note: every feedback_factor batches the trainer renders `self.gen(fixed_input)` with grad on, only to save a grid of detached samples; the issue measured GBs freed by removing it (the fix wraps it in no_grad)
import os

import numpy as np
import torch as th
from torch import nn


class Generator(nn.Module):
    """Multi-scale generator: returns one image per resolution."""

    def __init__(self, latent_size=8, depth=3):
        super().__init__()
        self.initial = nn.Linear(latent_size, 16)
        self.blocks = nn.ModuleList([nn.Linear(16, 16) for _ in range(depth)])
        self.to_rgb = nn.ModuleList([nn.Linear(16, 3 * 4 ** i) for i in range(depth)])

    def forward(self, x):
        y = th.relu(self.initial(x))
        outputs = []
        for block, converter in zip(self.blocks, self.to_rgb):
            y = th.relu(block(y))
            outputs.append(th.tanh(converter(y)))
        return outputs


class MSG_GAN:
    def __init__(self, gen, dis, latent_size=8, lr=0.0003):
        self.gen = gen
        self.dis = dis
        self.latent_size = latent_size
        self.gen_optim = th.optim.Adam(self.gen.parameters(), lr, [0.0, 0.99])
        self.dis_optim = th.optim.Adam(self.dis.parameters(), lr, [0.0, 0.99])

    def _score(self, images):
        return self.dis(th.cat([img.flatten(1) for img in images], dim=1))

    def optimize_discriminator(self, noise, real_batch):
        fake_samples = [f.detach() for f in self.gen(noise)]
        loss = th.relu(1 - self._score(real_batch)).mean() + th.relu(1 + self._score(fake_samples)).mean()
        self.dis_optim.zero_grad()
        loss.backward()
        self.dis_optim.step()
        return loss.item()

    def optimize_generator(self, noise):
        loss = -self._score(self.gen(noise)).mean()
        self.gen_optim.zero_grad()
        loss.backward()
        self.gen_optim.step()
        return loss.item()

    @staticmethod
    def create_grid(samples, img_files):
        samples = list(map(lambda x: th.clamp((x.detach() / 2) + 0.5, min=0, max=1), samples))
        for sample, img_file in zip(samples, img_files):
            np.save(img_file, sample.cpu().numpy())

    def train(self, data, num_epochs, fixed_input, feedback_factor=2, sample_dir="./samples"):
        for epoch in range(1, num_epochs + 1):
            for i, batch in enumerate(data, 1):
                noise = th.randn(batch[0].shape[0], self.latent_size)
                dis_loss = self.optimize_discriminator(noise, batch)
                gen_loss = self.optimize_generator(noise)
                if i % feedback_factor == 0:
                    print("Epoch: %d  batch: %d  d_loss: %f  g_loss: %f" % (epoch, i, dis_loss, gen_loss))
                    gen_img_files = [os.path.join(sample_dir, "gen_%d_%d_%d.npy" % (res, epoch, i))
                                     for res in range(len(batch))]
                    self.dis_optim.zero_grad()
                    self.gen_optim.zero_grad()
                    self.create_grid(self.gen(fixed_input), gen_img_files)


def observe():
    import tempfile

    from corpus.oracle import hook_outputs

    gen = Generator()
    dis = nn.Sequential(nn.Linear(3 + 12 + 48, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    fixed_input = th.randn(5, 8)
    built = hook_outputs(gen, where=lambda inputs: inputs[0] is fixed_input)
    data = [[th.randn(4, 3), th.randn(4, 12), th.randn(4, 48)] for _ in range(2)]
    with tempfile.TemporaryDirectory() as sample_dir:
        MSG_GAN(gen, dis).train(data, 1, fixed_input, sample_dir=sample_dir)
    return {"built": built}
