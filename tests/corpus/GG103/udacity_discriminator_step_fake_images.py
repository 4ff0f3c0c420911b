# source: https://github.com/udacity/deep-learning-v2-pytorch/pull/306
# label: lookalike GG103
# effect: no_grad_arrived
# note: the discriminator step generates fake images with grad on; they are not inference - d_loss.backward() runs through them into G (wasted work the PR removed with no_grad, not a graph left alive)
import torch
import torch.nn as nn


def real_loss(D_out, smooth=False):
    labels = torch.ones(D_out.size(0)) * (0.9 if smooth else 1.0)
    return nn.BCEWithLogitsLoss()(D_out.squeeze(), labels)


def fake_loss(D_out):
    labels = torch.zeros(D_out.size(0))
    return nn.BCEWithLogitsLoss()(D_out.squeeze(), labels)


def train_discriminator(D, G, d_optimizer, real_images, z_size):
    d_optimizer.zero_grad()
    D_real = D(real_images)
    d_real_loss = real_loss(D_real, smooth=True)

    z = torch.empty(real_images.size(0), z_size).uniform_(-1, 1)
    fake_images = G(z)
    D_fake = D(fake_images)
    d_fake_loss = fake_loss(D_fake)

    d_loss = d_real_loss + d_fake_loss
    d_loss.backward()
    d_optimizer.step()
    return d_loss.item()


def train_generator(D, G, g_optimizer, batch_size, z_size):
    g_optimizer.zero_grad()
    z = torch.empty(batch_size, z_size).uniform_(-1, 1)
    fake_images = G(z)
    g_loss = real_loss(D(fake_images))
    g_loss.backward()
    g_optimizer.step()
    return g_loss.item()


def observe():
    from corpus.oracle import grad_arrivals

    z_size = 5
    G = nn.Sequential(nn.Linear(z_size, 16), nn.LeakyReLU(0.2), nn.Linear(16, 8), nn.Tanh())
    D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    arrived = grad_arrivals(list(G.parameters()))
    train_discriminator(D, G, torch.optim.Adam(D.parameters(), lr=2e-4), torch.rand(4, 8) * 2 - 1, z_size)
    return {"arrived": arrived}
