# source: https://github.com/mapbox/robosat/pull/109
# label: GG103 55
# effect: graph_built
# note: robosat's validate() sets net.eval() and runs every validation batch through the segmentation net with grad on; the loss is only .item()-ed and the predictions only reach the IoU metrics, so each batch's activations are saved for nothing ("prevents possible 'out of memory' errors during validation"; merged as a decorator on validate)
import torch
import torch.nn as nn


class Metrics:
    def __init__(self, labels):
        self.labels = labels
        self.tn = self.fn = self.fp = self.tp = 0

    def add(self, actual, predicted):
        masks = torch.argmax(predicted, 0)
        confusion = masks.view(-1).float() / actual.view(-1).float()
        self.tn += torch.sum(torch.isnan(confusion)).item()
        self.fn += torch.sum(confusion == float("inf")).item()
        self.fp += torch.sum(confusion == 0).item()
        self.tp += torch.sum(confusion == 1).item()

    def get_miou(self):
        return ((self.tn / max(self.tn + self.fn + self.fp, 1)) + (self.tp / max(self.tp + self.fn + self.fp, 1))) / 2

    def get_fg_iou(self):
        return self.tp / max(self.tp + self.fn + self.fp, 1)


class UNet(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.dec = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        return self.dec(torch.relu(self.enc(x)))


def validate(loader, num_classes, device, net, criterion):
    num_samples = 0
    running_loss = 0

    metrics = Metrics(range(num_classes))

    net.eval()

    for images, masks, tiles in loader:
        images = images.to(device)
        masks = masks.to(device)

        assert images.size()[2:] == masks.size()[1:], "resolutions for images and masks are in sync"

        num_samples += int(images.size(0))

        outputs = net(images)

        assert outputs.size()[2:] == masks.size()[1:], "resolutions for predictions and masks are in sync"
        assert outputs.size()[1] == num_classes, "classes for predictions and dataset are in sync"

        loss = criterion(outputs, masks)

        running_loss += loss.item()

        for mask, output in zip(masks, outputs):
            prediction = output.detach()
            metrics.add(mask, prediction)

    assert num_samples > 0, "dataset contains validation images and labels"

    return {"loss": running_loss / num_samples, "miou": metrics.get_miou(), "fg_iou": metrics.get_fg_iou()}


def observe():
    from corpus.oracle import hook_outputs

    net = UNet()
    built = hook_outputs(net)
    loader = [(torch.randn(2, 3, 8, 8), torch.randint(0, 2, (2, 8, 8)), None) for _ in range(2)]
    validate(loader, 2, "cpu", net, nn.CrossEntropyLoss())
    return {"built": built}
