# source: https://github.com/mazurowski-lab/finetune-SAM/issues/26
# label: GG303 14
# effect: no_grad
# note: the mask decoder's prediction is thresholded through numpy, then the loss is re-enabled with requires_grad_(): the decoder never learns
import torch


def train_step(model, images, masks, optimizer, criterion):
    model.train()
    pred = model(images)
    pred_np = torch.sigmoid(pred).detach().cpu().numpy()
    pred_t = torch.from_numpy(pred_np)
    loss = criterion(pred_t, masks)
    loss.requires_grad_()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    model = torch.nn.Conv2d(1, 1, 3, padding=1)
    train_step(model, torch.randn(2, 1, 4, 4), torch.rand(2, 1, 4, 4).round(),
               torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.BCELoss())
    return {"params": list(model.parameters())}
