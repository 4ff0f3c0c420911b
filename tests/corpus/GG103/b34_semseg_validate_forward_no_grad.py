# source: https://github.com/hszhao/semseg/issues/60
# label: lookalike GG103
# effect: graph_unused
# note: the fix: `with torch.no_grad(): output = model(input)`; the interpolation, loss and argmax after it then run on an output without a graph
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def intersectionAndUnionGPU(output, target, K, ignore_index=255):
    output = output.view(-1)
    target = target.view(-1)
    output[target == ignore_index] = ignore_index
    intersection = output[output == target]
    area_intersection = torch.histc(intersection.float(), bins=K, min=0, max=K - 1)
    area_output = torch.histc(output.float(), bins=K, min=0, max=K - 1)
    area_target = torch.histc(target.float(), bins=K, min=0, max=K - 1)
    area_union = area_output + area_target - area_intersection
    return area_intersection, area_union, area_target


def validate(val_loader, model, criterion, classes, ignore_label=255, zoom_factor=8):
    loss_meter = AverageMeter()
    intersection_meter = AverageMeter()
    union_meter = AverageMeter()
    target_meter = AverageMeter()

    model.eval()
    for i, (input, target) in enumerate(val_loader):
        with torch.no_grad():
            output = model(input)
        if zoom_factor != 8:
            output = F.interpolate(output, size=target.size()[1:], mode="bilinear", align_corners=True)
        loss = criterion(output, target)

        n = input.size(0)
        loss = torch.mean(loss)

        output = output.max(1)[1]
        intersection, union, target = intersectionAndUnionGPU(output, target, classes, ignore_label)
        intersection, union, target = intersection.cpu().numpy(), union.cpu().numpy(), target.cpu().numpy()
        intersection_meter.update(intersection), union_meter.update(union), target_meter.update(target)
        loss_meter.update(loss.item(), n)

    iou_class = intersection_meter.sum / (union_meter.sum + 1e-10)
    accuracy_class = intersection_meter.sum / (target_meter.sum + 1e-10)
    mIoU = np.mean(iou_class)
    mAcc = np.mean(accuracy_class)
    allAcc = sum(intersection_meter.sum) / (sum(target_meter.sum) + 1e-10)
    return loss_meter.avg, mIoU, mAcc, allAcc


def observe():
    from corpus.oracle import output_flows

    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1))
    flows = output_flows(model)
    loader = [(torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2, 8, 8))) for _ in range(2)]
    validate(loader, model, nn.CrossEntropyLoss(ignore_index=255), classes=4)
    return {"flows": flows}
