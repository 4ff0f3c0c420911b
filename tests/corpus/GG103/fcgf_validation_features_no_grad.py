# source: https://github.com/chrischoy/FCGF/issues/15
# label: lookalike GG103
# effect: graph_built
# note: the same validation with the features computed under torch.no_grad(), as the issue proposed
import torch


def validate(model, val_loader, max_iter=4):
    model.eval()
    hit_ratios = []
    for i, (xyz0, xyz1) in enumerate(val_loader):
        if i == max_iter:
            break
        with torch.no_grad():
            F0 = model(xyz0)
            F1 = model(xyz1)
        nn_idx = torch.cdist(F0, F1).argmin(1)
        hit_ratios.append((nn_idx == torch.arange(len(nn_idx))).float().mean().item())
    model.train()
    return sum(hit_ratios) / len(hit_ratios)


def observe():
    from corpus.oracle import hook_outputs

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 8)
    built = hook_outputs(model)
    validate(model, [(torch.randn(5, 3), torch.randn(5, 3)) for _ in range(2)])
    return {"built": built}
