# source: https://androidkt.com/fix-cant-call-numpy-on-tensor-that-requires-grad-use-tensor-detach-numpy-instead/
# label: GG401 11
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: model outputs converted for matplotlib without detach
import torch


def predictions_for_plot(model, x):
    model.eval()
    preds = model(x)
    return preds.numpy()


def observe():
    predictions_for_plot(torch.nn.Linear(4, 2), torch.randn(3, 4))
    return {}
