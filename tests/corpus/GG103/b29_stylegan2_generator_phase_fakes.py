# source: https://github.com/NVlabs/stylegan2-ada-pytorch/pull/185
# label: lookalike GG103
# effect: graph_unused
# note: the discriminator phase generates its fakes under no_grad (the PR's change), while the generator phase runs the generator with grad on and logs the images' mean - its output reaches the generator loss, which is back-propagated
import torch
import torch.nn.functional as F
from torch import nn


def accumulate_gradients(phase, G, D, real_img, gen_z, stats):
    if phase == "Gmain":
        gen_img = G(gen_z)
        gen_logits = D(gen_img)
        stats["Loss/scores/fake"] = gen_logits.mean().item()
        stats["Images/mean"] = gen_img.mean().item()
        loss_Gmain = F.softplus(-gen_logits)
        loss_Gmain.mean().backward()
    if phase == "Dmain":
        with torch.no_grad():
            gen_img = G(gen_z)
        gen_logits = D(gen_img)
        loss_Dgen = F.softplus(gen_logits)
        real_logits = D(real_img.detach())
        loss_Dreal = F.softplus(-real_logits)
        (loss_Dgen + loss_Dreal).mean().backward()


def training_loop(G, D, loader, z_dim, lr=2e-3):
    opt_G = torch.optim.Adam(G.parameters(), lr=lr, betas=(0.0, 0.99))
    opt_D = torch.optim.Adam(D.parameters(), lr=lr, betas=(0.0, 0.99))
    stats = {}
    for real_img in loader:
        for phase, module, opt in (("Gmain", G, opt_G), ("Dmain", D, opt_D)):
            opt.zero_grad(set_to_none=True)
            module.requires_grad_(True)
            accumulate_gradients(phase, G, D, real_img, torch.randn(real_img.shape[0], z_dim), stats)
            module.requires_grad_(False)
            opt.step()
    return stats


def observe():
    from corpus.oracle import output_flows

    z_dim = 6
    G = nn.Sequential(nn.Linear(z_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 12))
    D = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    G.requires_grad_(False)
    D.requires_grad_(False)
    flows = output_flows(G)
    training_loop(G, D, [torch.randn(4, 12) for _ in range(3)], z_dim)
    return {"flows": flows}
