"""A small image classifier trained on synthetic data - with the mistakes
GradGuard exists to catch. `train_fixed.py` is the same script written right.

Run it with: python examples/train_leaky.py   (it crashes in evaluate())
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def synthetic_batches(n: int, batch_size: int = 16):
    gen = torch.Generator().manual_seed(0)
    return [
        (torch.randn(batch_size, 1, 12, 12, generator=gen), torch.randint(0, 10, (batch_size,), generator=gen))
        for _ in range(n)
    ]


def train_epoch(model, batches, optimizer, class_weights):
    model.train()
    epoch_losses = []
    for images, labels in batches:
        optimizer.zero_grad()
        logits = model(images)
        loss = F.cross_entropy(logits, labels, weight=class_weights)
        loss.backward()
        optimizer.step()
        epoch_losses.append(loss)  # for the loss curve
    return epoch_losses


def evaluate(model, batches):
    model.eval()  # "turn off gradients" - it does not
    all_logits = []
    correct = 0
    for images, labels in batches:
        logits = model(images)
        all_logits.append(logits)
        correct += (logits.argmax(1) == labels).sum().item()  # noqa: GG101 - from when it summed tensors
    probs = torch.cat(all_logits).softmax(1)
    return correct, probs.cpu().numpy()


def main():
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    frequencies = torch.ones(10) / 10
    class_weights = torch.tensor(1.0 / frequencies)
    train, val = synthetic_batches(8), synthetic_batches(2)
    for epoch in range(2):
        losses = train_epoch(model, train, optimizer, class_weights)
        correct, probs = evaluate(model, val)
        print(f"epoch {epoch}: loss {sum(losses) / len(losses):.3f}, accuracy {correct / 32:.2f}")
    np.save("val_probs.npy", probs)


if __name__ == "__main__":
    main()
