# source: https://github.com/Harry24k/adversarial-attacks-pytorch/issues/57
# label: lookalike GG201
# effect: changed
# note: torchattacks' idiom: the attack starts from images.clone().detach(), its own storage, so the random start and the steps never touch the caller's images
import torch
import torch.nn.functional as F


def pgd_attack(model, images, labels, eps=8 / 255, alpha=2 / 255, steps=3):
    """L-inf PGD with a random start; returns adversarial images within eps of `images`."""
    model.eval()
    images = images.clone().detach()
    adv_images = images.clone().detach()
    adv_images += torch.empty_like(adv_images).uniform_(-eps, eps)
    adv_images.clamp_(0, 1)
    for _ in range(steps):
        adv_images.requires_grad = True
        cost = F.cross_entropy(model(adv_images), labels)
        grad = torch.autograd.grad(cost, adv_images, retain_graph=False, create_graph=False)[0]
        adv_images = adv_images.detach() + alpha * grad.sign()
        delta = torch.clamp(adv_images - images, min=-eps, max=eps)
        adv_images = torch.clamp(images + delta, min=0, max=1).detach()
    return adv_images


def observe():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 3))
    images, labels = torch.rand(2, 3, 2, 2) * 0.8 + 0.1, torch.tensor([0, 2])
    before = images.clone()
    pgd_attack(model, images, labels)
    return {"before": before, "after": images}
