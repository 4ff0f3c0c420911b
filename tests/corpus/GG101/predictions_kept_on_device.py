# source: https://github.com/MarvinLvn/voice-type-classifier/issues/12
# label: GG101|GG103 13
# effect: activations_alive
# note: inference keeps every batch's output tensor, and with it the batch's whole graph: memory grows until OOM
import torch


def predict(model, dataloader, device="cpu"):
    model.eval()
    predictions = []
    for batch in dataloader:
        p = model(batch.to(device))
        predictions.append(p)
    return torch.cat(predictions)


def observe():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    return {"kept": predict(model, [torch.randn(3, 4) for _ in range(3)])}
