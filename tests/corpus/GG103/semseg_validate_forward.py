# source: https://github.com/hszhao/semseg/issues/60
# label: GG103 15
# effect: graph_built
# note: validate() calls the model without no_grad: every batch builds a graph and keeps its activations (the OOM after validation)
import torch


def validate(val_loader, model, criterion, classes=3):
    model.eval()
    loss_sum, count = 0.0, 0
    intersection = torch.zeros(classes)
    union = torch.zeros(classes)
    for input, target in val_loader:
        target = target.long()
        output = model(input)
        loss = criterion(output, target)
        pred = output.argmax(1)
        for k in range(classes):
            intersection[k] += ((pred == k) & (target == k)).sum()
            union[k] += ((pred == k) | (target == k)).sum()
        loss_sum += loss.item() * input.size(0)
        count += input.size(0)
    return loss_sum / count, (intersection / union.clamp(min=1)).mean().item()


def observe():
    from corpus.oracle import hook_outputs

    torch.manual_seed(0)
    model = torch.nn.Conv2d(3, 3, 1)
    built = hook_outputs(model)
    loader = [(torch.randn(2, 3, 4, 4), torch.randint(0, 3, (2, 4, 4))) for _ in range(2)]
    validate(loader, model, torch.nn.CrossEntropyLoss())
    return {"built": built}
