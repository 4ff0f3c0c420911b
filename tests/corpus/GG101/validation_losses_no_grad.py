# source: https://theneuralbase.com/pytorch/learn/advanced/training-step-and-validation-step/
# label: lookalike GG101
# effect: graph_kept
# note: validation losses kept as tensors, but made under torch.no_grad(): none has a graph
import torch


def validate(model, val_loader, loss_fn):
    model.eval()
    val_losses = []
    with torch.no_grad():
        for batch_X, batch_y in val_loader:
            logits = model(batch_X)
            loss = loss_fn(logits, batch_y)
            val_losses.append(loss)
    model.train()
    return torch.stack(val_losses).mean(), val_losses


def observe():
    model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.Dropout(0.2), torch.nn.Linear(16, 2))
    loader = [(torch.randn(4, 10), torch.randint(0, 2, (4,))) for _ in range(3)]
    mean, losses = validate(model, loader, torch.nn.CrossEntropyLoss())
    return {"kept": [mean, losses]}
