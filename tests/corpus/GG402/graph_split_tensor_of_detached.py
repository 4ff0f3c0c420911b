# source: https://discuss.pytorch.org/t/bit-of-fun-with-gradients/34398
# label: GG402 14
# effect: warns "To copy construct from a tensor"
# note: the graph is cut at y with torch.tensor(y.detach(), requires_grad=True): y is a tensor, so the copy warns (the warning's own advice: y.detach().clone().requires_grad_(True))
import torch


def backward_in_two_halves(head, tail, x):
    """Back-propagate the tail first, then feed the gradient at the cut into the head by hand.

    Lets the caller inspect (or clip) the gradient that reaches the head's output.
    """
    y = head(x)
    y_cut = torch.tensor(y.detach(), requires_grad=True)
    loss = tail(y_cut).mean()
    loss.backward()
    y.backward(y_cut.grad)
    return loss.item(), y_cut.grad


def observe():
    torch.manual_seed(0)
    head, tail = torch.nn.Linear(4, 3), torch.nn.Sequential(torch.nn.Tanh(), torch.nn.Linear(3, 1))
    loss, grad_at_cut = backward_in_two_halves(head, tail, torch.randn(5, 4))
    return {"loss": loss, "grad": grad_at_cut, "head_grad": head.weight.grad}
