# source: https://github.com/nikhilsinghmus/image2reverb/issues/37
# label: GG301 41
# effect: wrong_grad
# note: the generator step scores fake_spec.detach() with the discriminator: the adversarial term G_loss1 never reaches the generator, which learns from the L1 term alone (the maintainer: "that .detach() should not be there for the generator step")
import torch
import torch.nn.functional as F
from torch import nn

LAMBDA = 100


class Image2ReverbGAN:
    def __init__(self, enc, g, d, latent_dimension=8):
        self.enc = enc
        self.g = g
        self.d = d
        self._latent_dimension = latent_dimension
        self.g_optim = torch.optim.Adam(self.g.parameters(), lr=2e-4, betas=(0.0, 0.99), eps=1e-8)
        self.d_optim = torch.optim.Adam(self.d.parameters(), lr=4e-4, betas=(0.0, 0.99), eps=1e-8)

    def forward_passes(self, label):
        f = self.enc(label)
        z = torch.cat((f, torch.randn((f.shape[0], self._latent_dimension - f.shape[1]))), 1)
        fake_spec = self.g(z)
        return fake_spec, f

    def discriminator_step(self, spec, label):
        fake_spec, f = self.forward_passes(label)
        d_fake = self.d(fake_spec.detach(), f)
        d_real = self.d(spec, f)
        l_fakeD = F.mse_loss(d_fake, torch.zeros(d_fake.shape))
        l_realD = F.mse_loss(d_real, torch.ones(d_real.shape))
        D_loss = l_realD + l_fakeD
        self.d_optim.zero_grad()
        D_loss.backward()
        self.d_optim.step()
        return D_loss.item()

    def generator_step(self, spec, label):
        fake_spec, f = self.forward_passes(label)
        d_fake2 = self.d(fake_spec.detach(), f)
        G_loss1 = F.mse_loss(d_fake2, torch.ones(d_fake2.shape))
        G_loss2 = F.l1_loss(fake_spec, spec)
        G_loss = G_loss1 + (LAMBDA * G_loss2)
        self.g_optim.zero_grad()
        G_loss.backward()
        self.g_optim.step()
        return G_loss.item()


class Discriminator(nn.Module):
    def __init__(self, spec_dim=6, cond_dim=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(spec_dim + cond_dim, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def forward(self, x, f):
        return self.net(torch.cat((x, f), 1))


def observe():
    import copy

    torch.manual_seed(0)
    enc, g, d = nn.Linear(4, 3), nn.Sequential(nn.Linear(8, 6), nn.Tanh()), Discriminator()
    enc2, g2, d2 = copy.deepcopy(enc), copy.deepcopy(g), copy.deepcopy(d)
    spec, label = torch.randn(5, 6), torch.randn(5, 4)
    torch.manual_seed(1)
    Image2ReverbGAN(enc, g, d).generator_step(spec, label)
    got = g[0].weight.grad.clone()
    torch.manual_seed(1)  # the step the code means: D scores the fake with its graph
    f = enc2(label)
    fake_spec = g2(torch.cat((f, torch.randn((f.shape[0], 5))), 1))
    d_fake2 = d2(fake_spec, f)
    (F.mse_loss(d_fake2, torch.ones(d_fake2.shape)) + LAMBDA * F.l1_loss(fake_spec, spec)).backward()
    return {"grad": got, "expected": g2[0].weight.grad}
