# source: https://github.com/pytorch/ignite/blob/master/examples/gan/dcgan.py
# label: GG103 97
# effect: graph_built
# note: the trainer's EPOCH_COMPLETED handler runs the generator on the fixed noise with grad on and only saves the images (`save_image(fake.detach(), ...)`): every epoch builds a generator graph nothing back-propagates
import os
from types import SimpleNamespace

import numpy as np
import torch
from torch import nn

ITERATION_COMPLETED = "iteration_completed"
EPOCH_COMPLETED = "epoch_completed"
FAKE_IMG_FNAME = "fake_sample_epoch_{:04d}.npy"


class Engine:
    """The part of ignite's Engine the script uses: a process function and event handlers."""

    def __init__(self, process_function):
        self._process_function = process_function
        self._handlers = {}
        self.state = SimpleNamespace(epoch=0, iteration=0, batch=None, output=None)

    def on(self, event_name):
        def decorator(handler):
            self._handlers.setdefault(event_name, []).append(handler)
            return handler
        return decorator

    def _fire_event(self, event_name):
        for handler in self._handlers.get(event_name, []):
            handler(self)

    def run(self, data, max_epochs):
        for _ in range(max_epochs):
            self.state.epoch += 1
            for batch in data:
                self.state.iteration += 1
                self.state.batch = batch
                self.state.output = self._process_function(self, batch)
                self._fire_event(ITERATION_COMPLETED)
            self._fire_event(EPOCH_COMPLETED)
        return self.state


def save_image(tensor, path, normalize=False):
    array = tensor.cpu().numpy()
    if normalize:
        array = (array - array.min()) / (array.max() - array.min() + 1e-8)
    np.save(path, array)


def main(netG, netD, loader, z_dim, batch_size, epochs, learning_rate, beta_1, output_dir):
    bce = nn.BCELoss()
    optimizerG = torch.optim.Adam(netG.parameters(), lr=learning_rate, betas=(beta_1, 0.999))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=learning_rate, betas=(beta_1, 0.999))

    real_labels = torch.ones(batch_size)
    fake_labels = torch.zeros(batch_size)
    fixed_noise = torch.randn(batch_size + 1, z_dim)

    def get_noise():
        return torch.randn(batch_size, z_dim)

    def step(engine, batch):
        real, _ = batch

        netD.zero_grad()
        output = netD(real)
        errD_real = bce(output, real_labels)
        D_x = output.mean().item()
        errD_real.backward()

        noise = get_noise()
        fake = netG(noise)
        output = netD(fake.detach())
        errD_fake = bce(output, fake_labels)
        D_G_z1 = output.mean().item()
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()

        netG.zero_grad()
        output = netD(fake)
        errG = bce(output, real_labels)
        D_G_z2 = output.mean().item()
        errG.backward()
        optimizerG.step()

        return {"errD": errD.item(), "errG": errG.item(), "D_x": D_x, "D_G_z1": D_G_z1, "D_G_z2": D_G_z2}

    trainer = Engine(step)

    @trainer.on(EPOCH_COMPLETED)
    def save_fake_example(engine):
        fake = netG(fixed_noise)
        path = os.path.join(output_dir, FAKE_IMG_FNAME.format(engine.state.epoch))
        save_image(fake.detach(), path, normalize=True)

    trainer.run(loader, epochs)


def observe():
    import tempfile

    from corpus.oracle import hook_outputs

    z_dim, batch_size = 6, 4
    netG = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, 12), nn.Tanh())
    netD = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid(), nn.Flatten(0))
    built = hook_outputs(netG, where=lambda inputs: inputs[0].shape[0] == batch_size + 1)
    loader = [(torch.randn(batch_size, 12), torch.zeros(batch_size)) for _ in range(2)]
    with tempfile.TemporaryDirectory() as output_dir:
        main(netG, netD, loader, z_dim, batch_size, epochs=2, learning_rate=2e-4, beta_1=0.5, output_dir=output_dir)
    return {"built": built}
