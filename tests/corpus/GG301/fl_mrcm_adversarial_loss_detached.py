# source: https://github.com/guopengf/FL-MRCM/issues/10
# label: GG301 35
# effect: wrong_grad
# note: to stop a memory leak the adversarial term was detached where it is computed instead of where it is logged: it is added into the back-propagated loss as a constant, so the feature extractor never gets the domain-alignment gradient
import torch
import torch.nn as nn
import torch.nn.functional as F


class ReconNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 6)
        self.decoder = nn.Linear(6, 8)

    def forward(self, x):
        feature = torch.relu(self.encoder(x))
        return self.decoder(feature), feature


class LocalUpdate:
    def __init__(self, net, discriminator, lr=1e-3, lambda_adv=0.1):
        self.net = net
        self.discriminator = discriminator
        self.optimizer = torch.optim.Adam(net.parameters(), lr=lr)
        self.lambda_adv = lambda_adv
        self.epoch_loss_adv = []

    def train(self, batches):
        self.net.train()
        for image, target in batches:
            output, feature = self.net(image)
            loss_recon = F.l1_loss(output, target)
            domain_pred = self.discriminator(feature)
            loss_adv_g = F.binary_cross_entropy_with_logits(domain_pred, torch.ones_like(domain_pred)).detach()
            loss = loss_recon + self.lambda_adv * loss_adv_g
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.epoch_loss_adv.append(loss_adv_g.item())


def observe():
    net = ReconNet()
    discriminator = nn.Linear(6, 1)
    image, target = torch.randn(4, 8), torch.zeros(4, 8)
    output, feature = net(image)
    domain_pred = discriminator(feature)
    expected_loss = F.l1_loss(output, target) + 0.1 * F.binary_cross_entropy_with_logits(
        domain_pred, torch.ones_like(domain_pred))
    expected = torch.autograd.grad(expected_loss, net.encoder.weight)[0]
    LocalUpdate(net, discriminator, lr=0.0).train([(image, target)])
    return {"grad": net.encoder.weight.grad, "expected": expected}
