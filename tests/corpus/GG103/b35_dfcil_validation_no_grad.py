# source: https://github.com/GT-RIPL/AlwaysBeDreaming-DFCIL/issues/9
# label: lookalike GG103
# effect: graph_built
# note: the correct version the issue asks for: the forwards themselves run inside `with torch.no_grad():` (the whole batch body), so validation builds no graph
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return correct[:maxk].reshape(-1).float().sum().item() * 100.0 / target.size(0)


def accumulate_acc(output, target, task, meter, topk):
    meter.update(accuracy(output, target, topk), len(target))
    return meter


class NormalNN(nn.Module):
    def __init__(self, model, valid_out_dim, gpu=False, top_k=1):
        super().__init__()
        self.model = model
        self.valid_out_dim = valid_out_dim
        self.gpu = gpu
        self.top_k = top_k

    def validation(self, dataloader, model=None, task_in=None, task_metric='acc', verbal=True, task_global=False):
        if model is None:
            model = self.model

        # This function doesn't distinguish tasks.
        acc = AverageMeter()
        orig_mode = model.training
        model.eval()
        for i, (input, target, task) in enumerate(dataloader):
            with torch.no_grad():
                if self.gpu:
                    input = input.cuda()
                    target = target.cuda()
                if task_in is None:
                    output = model.forward(input)[:, :self.valid_out_dim]
                    acc = accumulate_acc(output, target, task, acc, topk=(self.top_k,))
                else:
                    mask = target >= task_in[0]
                    mask_ind = mask.nonzero().view(-1)
                    input, target = input[mask_ind], target[mask_ind]
                    output = model.forward(input)[:, task_in]
                    acc = accumulate_acc(output, target - task_in[0], task, acc, topk=(self.top_k,))
        model.train(orig_mode)
        return acc.avg


def observe():
    from corpus.oracle import forward_outputs

    net = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 10))
    learner = NormalNN(net, valid_out_dim=6)
    loader = [(torch.randn(4, 3, 2, 2), torch.randint(0, 6, (4,)), torch.zeros(4)) for _ in range(2)]
    with forward_outputs() as built:  # model.forward(...) skips the net's own hooks; its layers' run
        learner.validation(loader)
    return {"built": built}
