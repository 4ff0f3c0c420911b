# source: https://elefans.com/category/jswz/34/1627584.html
# label: lookalike GG103
# effect: graph_unused
# note: the PGD attack runs the classifier with grad on in every step and only keeps perturbed images, but each step's loss is differentiated with respect to the input (`torch.autograd.grad(cost, adv_images)`): no_grad would break it
import torch
import torch.nn as nn


class PGD:
    def __init__(self, classifier, eps=8 / 255, alpha=2 / 255, steps=3, random_start=True):
        self.classifier = classifier
        self.eps = eps
        self.alpha = alpha
        self.steps = steps
        self.random_start = random_start

    def __call__(self, images, labels):
        images = images.clone().detach()
        labels = labels.clone().detach()
        loss = nn.CrossEntropyLoss()
        adv_images = images.clone().detach()
        if self.random_start:
            adv_images = adv_images + torch.empty_like(adv_images).uniform_(-self.eps, self.eps)
            adv_images = torch.clamp(adv_images, min=0, max=1).detach()
        for _ in range(self.steps):
            adv_images.requires_grad = True
            outputs = self.classifier(adv_images)
            cost = loss(outputs, labels)
            grad = torch.autograd.grad(cost, adv_images, retain_graph=False, create_graph=False)[0]
            adv_images = adv_images.detach() + self.alpha * grad.sign()
            delta = torch.clamp(adv_images - images, min=-self.eps, max=self.eps)
            adv_images = torch.clamp(images + delta, min=0, max=1).detach()
        return adv_images


def observe():
    from corpus.oracle import output_flows

    classifier = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3))
    classifier.eval()
    flows = output_flows(classifier)
    PGD(classifier)(torch.rand(4, 3, 2, 2), torch.randint(0, 3, (4,)))
    return {"flows": flows}
