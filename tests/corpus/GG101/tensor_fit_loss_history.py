# source: https://github.com/rballester/tntorch/pull/19
# label: GG101 16
# effect: graph_kept
# note: fitting a low-rank decomposition: every loss tensor kept in loss_history (the PR: "every added loss used to be a full computational graph")
import torch


def optimize(cores, target, optimizer, max_iter=50, tol=1e-6):
    loss_history = []
    for it in range(max_iter):
        optimizer.zero_grad()
        approx = cores[0] @ cores[1]
        loss = torch.norm(approx - target) / torch.norm(target)
        loss.backward()
        optimizer.step()
        loss_history.append(loss)
        if len(loss_history) > 1 and abs(loss_history[-2].item() - loss.item()) < tol:
            break
    return loss_history


def observe():
    target = torch.randn(6, 5)
    cores = [torch.randn(6, 2, requires_grad=True), torch.randn(2, 5, requires_grad=True)]
    history = optimize(cores, target, torch.optim.Adam(cores, lr=0.01), max_iter=4)
    return {"kept": history}
