# source: https://github.com/MarvinLvn/voice-type-classifier/issues/12
# label: lookalike GG101
# effect: activations_alive
# note: the same collection of outputs under inference_mode: no graph is recorded, the kept tensors hold only values
import torch


@torch.inference_mode()
def predict(model, dataloader, device="cpu"):
    model.eval()
    predictions = []
    for batch in dataloader:
        p = model(batch.to(device))
        predictions.append(p)
    return predictions


def observe():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    return {"kept": predict(model, [torch.randn(3, 4) for _ in range(3)])}
