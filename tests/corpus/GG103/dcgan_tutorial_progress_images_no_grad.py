# source: https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html
# label: lookalike GG103
# effect: graph_built
# note: the DCGAN tutorial checks the generator every 500 iterations by running it on fixed_noise inside `with torch.no_grad():` in the middle of the training loop
import torch
import torch.nn as nn

real_label = 1.
fake_label = 0.


def train(netG, netD, dataloader, num_epochs, nz, fixed_noise, lr=0.0002, beta1=0.5):
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))
    img_list, G_losses, D_losses = [], [], []
    iters = 0
    for epoch in range(num_epochs):
        for i, data in enumerate(dataloader, 0):
            netD.zero_grad()
            real_cpu = data[0]
            b_size = real_cpu.size(0)
            label = torch.full((b_size,), real_label, dtype=torch.float)
            output = netD(real_cpu).view(-1)
            errD_real = criterion(output, label)
            errD_real.backward()
            noise = torch.randn(b_size, nz)
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            errD = errD_real + errD_fake
            optimizerD.step()

            netG.zero_grad()
            label.fill_(real_label)
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            optimizerG.step()

            G_losses.append(errG.item())
            D_losses.append(errD.item())
            if (iters % 500 == 0) or ((epoch == num_epochs - 1) and (i == len(dataloader) - 1)):
                with torch.no_grad():
                    fake = netG(fixed_noise).detach().cpu()
                img_list.append(fake)
            iters += 1
    return img_list, G_losses, D_losses


def observe():
    from corpus.oracle import hook_outputs

    nz = 6
    netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 12), nn.Tanh())
    netD = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
    fixed_noise = torch.randn(5, nz)
    built = hook_outputs(netG, where=lambda inputs: inputs[0] is fixed_noise)
    train(netG, netD, [(torch.randn(4, 12), None) for _ in range(2)], 1, nz, fixed_noise)
    return {"built": built}
