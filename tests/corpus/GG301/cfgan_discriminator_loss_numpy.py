# source: https://github.com/ARASC/CFGAN/issues/2
# label: GG301 36
# effect: no_grad
# note: the discriminator's loss is computed in NumPy on .detach().numpy() of its outputs; the "+ 0*regularization(...)" term makes backward() run, but nothing reaches the discriminator ("How to train the Discriminator by realData_result.detach().numpy?")
import numpy as np
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, item_count, info_shape):
        super().__init__()
        self.gen = nn.Sequential(nn.Linear(item_count + info_shape, 16), nn.ReLU(),
                                 nn.Linear(16, item_count), nn.Sigmoid())

    def forward(self, noise, use_info):
        return self.gen(torch.cat([noise, use_info], 1))


class Discriminator(nn.Module):
    def __init__(self, item_count, info_shape):
        super().__init__()
        self.dis = nn.Sequential(nn.Linear(item_count + info_shape, 16), nn.ReLU(),
                                 nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, data, condition):
        return self.dis(torch.cat((data, condition), 1))


def train_discriminator(G, D, d_optimizer, regularization, real_data, use_info_batch, ku):
    eu = real_data
    fake_data = G(real_data, use_info_batch)
    fake_data_zp = fake_data * (eu + ku)
    fake_data_result = D(fake_data_zp, use_info_batch)
    real_data_result = D(real_data, use_info_batch)
    d_loss = -np.mean(np.log(real_data_result.detach().numpy() + 10e-5) +
                      np.log(1. - fake_data_result.detach().numpy() + 10e-5)) + 0 * regularization(fake_data_zp, real_data)
    d_optimizer.zero_grad()
    d_loss.backward(retain_graph=True)
    d_optimizer.step()
    return d_loss.item()


def observe():
    torch.manual_seed(0)
    G, D = Generator(10, 3), Discriminator(10, 3)
    real = (torch.rand(4, 10) > 0.6).float()
    ku = (torch.rand(4, 10) > 0.8).float() * (1 - real)
    train_discriminator(G, D, torch.optim.Adam(D.parameters(), lr=1e-4), nn.MSELoss(), real, torch.randn(4, 3), ku)
    return {"params": list(D.parameters())}
