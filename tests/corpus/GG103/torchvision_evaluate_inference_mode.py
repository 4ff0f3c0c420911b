# source: https://github.com/pytorch/vision/blob/bde124ee2f3419fe31ad79c858af40206e8bf792/references/classification/train.py
# label: lookalike GG103
# effect: graph_built
# note: the reference script's evaluate() runs the model and the criterion inside torch.inference_mode(), and only reads .item() values into the metric logger
import torch
import torch.nn as nn


class SmoothedValue:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.count += n
        self.total += value * n

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **kwargs):
        for k, v in kwargs.items():
            self.meters.setdefault(k, SmoothedValue()).update(v)


def accuracy(output, target, topk=(1,)):
    with torch.inference_mode():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target[None])
        return [correct[:k].flatten().sum(dtype=torch.float32) * (100.0 / batch_size) for k in topk]


def evaluate(model, criterion, data_loader, device, print_freq=100, log_suffix=""):
    model.eval()
    metric_logger = MetricLogger()
    num_processed_samples = 0
    with torch.inference_mode():
        for image, target in data_loader:
            image = image.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            output = model(image)
            loss = criterion(output, target)
            acc1, acc5 = accuracy(output, target, topk=(1, 2))
            batch_size = image.shape[0]
            metric_logger.update(loss=loss.item())
            metric_logger.meters.setdefault("acc1", SmoothedValue()).update(acc1.item(), n=batch_size)
            metric_logger.meters.setdefault("acc5", SmoothedValue()).update(acc5.item(), n=batch_size)
            num_processed_samples += batch_size
    print(f"{log_suffix} Acc@1 {metric_logger.meters['acc1'].global_avg:.3f}")
    return metric_logger.meters["acc1"].global_avg


def observe():
    from corpus.oracle import hook_outputs

    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
    built = hook_outputs(model)
    loader = [(torch.randn(3, 6), torch.randint(0, 4, (3,))) for _ in range(2)]
    evaluate(model, nn.CrossEntropyLoss(), loader, "cpu")
    return {"built": built}
