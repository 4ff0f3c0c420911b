# source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/916
# label: lookalike GG301
# effect: no_grad
# note: backward_D_basic scores fake.detach(): the discriminator step needs no gradient into the generators (the maintainer: "When updating D, we don't need to compute gradients for G"); backward_G keeps the fakes' graphs, so both generators and both discriminators learn
import itertools

import torch
from torch import nn


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.MSELoss()

    def __call__(self, prediction, target_is_real):
        target = torch.ones_like(prediction) if target_is_real else torch.zeros_like(prediction)
        return self.loss(prediction, target)


class CycleGANModel:
    def __init__(self, netG_A, netG_B, netD_A, netD_B, lambda_A=10.0, lambda_B=10.0, lr=2e-4):
        self.netG_A, self.netG_B, self.netD_A, self.netD_B = netG_A, netG_B, netD_A, netD_B
        self.lambda_A, self.lambda_B = lambda_A, lambda_B
        self.criterionGAN = GANLoss()
        self.criterionCycle = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(itertools.chain(netG_A.parameters(), netG_B.parameters()), lr=lr)
        self.optimizer_D = torch.optim.Adam(itertools.chain(netD_A.parameters(), netD_B.parameters()), lr=lr)

    def set_requires_grad(self, nets, requires_grad=False):
        for net in nets:
            for param in net.parameters():
                param.requires_grad = requires_grad

    def forward(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B
        self.fake_B = self.netG_A(self.real_A)
        self.rec_A = self.netG_B(self.fake_B)
        self.fake_A = self.netG_B(self.real_B)
        self.rec_B = self.netG_A(self.fake_A)

    def backward_D_basic(self, netD, real, fake):
        pred_real = netD(real)
        loss_D_real = self.criterionGAN(pred_real, True)
        pred_fake = netD(fake.detach())
        loss_D_fake = self.criterionGAN(pred_fake, False)
        loss_D = (loss_D_real + loss_D_fake) * 0.5
        loss_D.backward()
        return loss_D

    def backward_D_A(self):
        self.loss_D_A = self.backward_D_basic(self.netD_A, self.real_B, self.fake_B)

    def backward_D_B(self):
        self.loss_D_B = self.backward_D_basic(self.netD_B, self.real_A, self.fake_A)

    def backward_G(self):
        self.loss_G_A = self.criterionGAN(self.netD_A(self.fake_B), True)
        self.loss_G_B = self.criterionGAN(self.netD_B(self.fake_A), True)
        self.loss_cycle_A = self.criterionCycle(self.rec_A, self.real_A) * self.lambda_A
        self.loss_cycle_B = self.criterionCycle(self.rec_B, self.real_B) * self.lambda_B
        self.loss_G = self.loss_G_A + self.loss_G_B + self.loss_cycle_A + self.loss_cycle_B
        self.loss_G.backward()

    def optimize_parameters(self, real_A, real_B):
        self.forward(real_A, real_B)
        self.set_requires_grad([self.netD_A, self.netD_B], False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        self.set_requires_grad([self.netD_A, self.netD_B], True)
        self.optimizer_D.zero_grad()
        self.backward_D_A()
        self.backward_D_B()
        self.optimizer_D.step()


def observe():
    torch.manual_seed(0)

    def generator():
        return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 6), nn.Tanh())

    def discriminator():
        return nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    nets = [generator(), generator(), discriminator(), discriminator()]
    CycleGANModel(*nets).optimize_parameters(torch.randn(4, 6), torch.randn(4, 6))
    return {"params": [p for net in nets for p in net.parameters()]}
