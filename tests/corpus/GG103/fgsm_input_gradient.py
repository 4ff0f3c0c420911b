# source: https://pytorch.org/tutorials/beginner/fgsm_tutorial.html
# label: lookalike GG103
# effect: no_grad
# note: FGSM after model.eval(): the forward's output is back-propagated to the input
import torch
import torch.nn.functional as F


def fgsm_attack(model, images, labels, epsilon):
    model.eval()
    images.requires_grad_(True)
    loss = F.cross_entropy(model(images), labels)
    model.zero_grad()
    loss.backward()
    return images + epsilon * images.grad.sign()


def observe():
    model = torch.nn.Linear(4, 3)
    images = torch.randn(2, 4)
    fgsm_attack(model, images, torch.tensor([0, 2]), 0.1)
    return {"params": [images]}
