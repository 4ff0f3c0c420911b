# source: https://github.com/sunnynevarekar/pytorch-saliency-maps/issues/1
# label: lookalike GG103
# effect: no_grad
# note: a saliency map after model.eval(): the forward's top score is back-propagated to the input image, so this forward needs its graph (score.backward() fills input.grad)
import torch


def saliency_map(model, input):
    """Gradient of the predicted class score w.r.t. the input pixels, max over channels."""
    model.eval()
    input.requires_grad_()
    preds = model(input)
    score, indices = torch.max(preds, 1)
    # backward pass to get gradients of score predicted class w.r.t. input image
    score.backward()
    # get max along channel axis
    slc, _ = torch.max(torch.abs(input.grad[0]), dim=0)
    # normalize to [0..1]
    slc = (slc - slc.min()) / (slc.max() - slc.min())
    return slc, indices.item()


def observe():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 8 * 8, 5)
    )
    image = torch.randn(1, 3, 8, 8)
    saliency_map(model, image)
    return {"params": [image]}
