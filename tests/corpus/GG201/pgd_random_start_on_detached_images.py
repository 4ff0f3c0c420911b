# source: https://github.com/rwightman/pytorch-nips2017-attack-example/issues/5
# label: GG201 13
# effect: changed
# note: the random start is added in place to images.detach(), which shares the caller's storage: the clean images become the perturbed ones (the thread: the original input is updated too; the fix is to attack a clone)
import torch
import torch.nn.functional as F


def pgd_attack(model, images, labels, eps=8 / 255, alpha=2 / 255, steps=3):
    """L-inf PGD with a random start; returns adversarial images within eps of `images`."""
    model.eval()
    adv_images = images.detach()
    adv_images += torch.empty_like(adv_images).uniform_(-eps, eps)
    adv_images.clamp_(0, 1)
    for _ in range(steps):
        adv_images.requires_grad_(True)
        loss = F.cross_entropy(model(adv_images), labels)
        grad, = torch.autograd.grad(loss, adv_images)
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
