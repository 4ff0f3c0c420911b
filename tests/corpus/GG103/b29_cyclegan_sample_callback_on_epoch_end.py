# source: https://github.com/Lornatang/CycleGAN-PyTorch/pull/4
# label: GG103 24
# effect: graph_built
# note: a trainer callback saves sample translations of fixed images at the end of every epoch; it runs both generators with grad on and only writes `.data` of the results to disk
import os

import numpy as np
import torch
from torch import nn


class Callback:
    def on_epoch_end(self, trainer, epoch):
        pass


class SaveTranslations(Callback):
    def __init__(self, fixed_a, fixed_b, out_dir):
        self.fixed_a = fixed_a
        self.fixed_b = fixed_b
        self.out_dir = out_dir

    def on_epoch_end(self, trainer, epoch):
        fake_b = 0.5 * (trainer.netG_A2B(self.fixed_a).data + 1.0)
        fake_a = 0.5 * (trainer.netG_B2A(self.fixed_b).data + 1.0)
        np.save(os.path.join(self.out_dir, "fake_B_epoch_%d.npy" % epoch), fake_b.cpu().numpy())
        np.save(os.path.join(self.out_dir, "fake_A_epoch_%d.npy" % epoch), fake_a.cpu().numpy())


class CycleGANTrainer:
    def __init__(self, netG_A2B, netG_B2A, netD_A, netD_B, callbacks=(), lr=2e-4, lambda_cycle=10.0):
        self.netG_A2B, self.netG_B2A, self.netD_A, self.netD_B = netG_A2B, netG_B2A, netD_A, netD_B
        self.callbacks = list(callbacks)
        self.lambda_cycle = lambda_cycle
        self.optimizer_G = torch.optim.Adam(list(netG_A2B.parameters()) + list(netG_B2A.parameters()), lr=lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(list(netD_A.parameters()) + list(netD_B.parameters()), lr=lr, betas=(0.5, 0.999))
        self.mse, self.l1 = nn.MSELoss(), nn.L1Loss()

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for real_a, real_b in loader:
                self.optimizer_G.zero_grad()
                fake_b = self.netG_A2B(real_a)
                fake_a = self.netG_B2A(real_b)
                pred_b, pred_a = self.netD_B(fake_b), self.netD_A(fake_a)
                loss_gan = self.mse(pred_b, torch.ones_like(pred_b)) + self.mse(pred_a, torch.ones_like(pred_a))
                loss_cycle = self.l1(self.netG_B2A(fake_b), real_a) + self.l1(self.netG_A2B(fake_a), real_b)
                loss_G = loss_gan + self.lambda_cycle * loss_cycle
                loss_G.backward()
                self.optimizer_G.step()

                self.optimizer_D.zero_grad()
                real_pred_a, fake_pred_a = self.netD_A(real_a), self.netD_A(fake_a.detach())
                real_pred_b, fake_pred_b = self.netD_B(real_b), self.netD_B(fake_b.detach())
                loss_D = (self.mse(real_pred_a, torch.ones_like(real_pred_a)) + self.mse(fake_pred_a, torch.zeros_like(fake_pred_a))
                          + self.mse(real_pred_b, torch.ones_like(real_pred_b)) + self.mse(fake_pred_b, torch.zeros_like(fake_pred_b))) * 0.5
                loss_D.backward()
                self.optimizer_D.step()
            for callback in self.callbacks:
                callback.on_epoch_end(self, epoch)


def observe():
    import tempfile

    from corpus.oracle import hook_outputs

    def gen():
        return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 3, 3, padding=1), nn.Tanh())

    def disc():
        return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 3, padding=1))

    netG_A2B = gen()
    built = hook_outputs(netG_A2B, where=lambda inputs: inputs[0].shape[0] == 1)
    loader = [(torch.rand(2, 3, 6, 6), torch.rand(2, 3, 6, 6)) for _ in range(2)]
    with tempfile.TemporaryDirectory() as d:
        callback = SaveTranslations(torch.rand(1, 3, 6, 6), torch.rand(1, 3, 6, 6), d)
        CycleGANTrainer(netG_A2B, gen(), disc(), disc(), callbacks=[callback]).fit(loader, epochs=2)
    return {"built": built}
