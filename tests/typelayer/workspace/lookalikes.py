import numpy as np
import torch

from models.net import Checkout, Net, accuracy


def evaluate(model, loader, arr, checkout):
    history = []
    for x, y in loader:
        with torch.no_grad():
            out = model(x)
        acc = accuracy(out, y)
        history.append(acc)
        b = arr.copy()
        b += 1
        history.append(arr.item())
        mine = checkout.detach()
        mine.add_(1)
        print(checkout)
        copy = checkout.clone()
        history.append(copy)
    return history


evaluate(Net(), [(torch.randn(2, 4), torch.zeros(2))], np.zeros(3), Checkout())
