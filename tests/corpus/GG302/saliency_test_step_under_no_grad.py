# source: https://github.com/Lightning-AI/pytorch-lightning/issues/2427
# label: GG302 27
# effect: raises "element 0 of tensors does not require grad"
# note: test_step takes input gradients, but the test loop runs it under no_grad: requires_grad_ on the input copy builds no graph, and autograd.grad raises ("grad_fn of output and loss is None in the test/val phase")
import torch
import torch.nn.functional as F


class GradientTester:
    def __init__(self, classifier):
        self.classifier = classifier
        self.last_imgs = None
        self.last_grad = None

    def criterion_ce(self, y_hat, y):
        return F.cross_entropy(y_hat, y)

    def test_step(self, batch, batch_nb):
        imgs, labels = batch
        self.last_imgs = imgs
        # get gradients
        self.classifier.eval()
        copied_input = imgs.clone()
        copied_input.requires_grad_(True)
        output = self.classifier(copied_input)
        loss = self.criterion_ce(output, labels)
        gradients = torch.autograd.grad(loss, copied_input)[0]
        self.last_grad = gradients
        return (output.argmax(dim=1) == labels).sum().item()

    def test(self, test_loader):
        correct, seen = 0, 0
        with torch.no_grad():
            for batch_nb, batch in enumerate(test_loader):
                correct += self.test_step(batch, batch_nb)
                seen += len(batch[1])
        return correct / seen


def observe():
    torch.manual_seed(0)
    classifier = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 3))
    loader = [(torch.randn(2, 1, 4, 4), torch.tensor([0, 2]))]
    return {"acc": GradientTester(classifier).test(loader)}
