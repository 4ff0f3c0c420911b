# source: https://github.com/facebookresearch/detectron2/issues/3771
# label: GG103 43
# effect: graph_built
# note: every `vis_period` iterations the training loop runs the detector on fixed test images and draws the predicted boxes; that forward runs with grad on although only `.tolist()` values reach the drawing
import numpy as np
import torch
from torch import nn


class TinyDetector(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.cls = nn.Linear(4, num_classes)
        self.box = nn.Linear(4, 4)

    def forward(self, images):
        f = self.body(images)
        return self.cls(f), self.box(f).sigmoid()


def draw_instances(image, boxes, labels):
    canvas = np.array(image.permute(1, 2, 0).cpu())
    h, w = canvas.shape[:2]
    for (x1, y1, x2, y2), label in zip(boxes, labels):
        canvas[int(y1 * (h - 1)), int(x1 * (w - 1))] = label
    return canvas


def do_train(detector, data_loader, vis_images, max_iter, vis_period=2):
    optimizer = torch.optim.SGD(detector.parameters(), lr=0.01, momentum=0.9)
    storage = []
    for iteration, (images, gt_classes, gt_boxes) in zip(range(max_iter), data_loader):
        cls_logits, boxes = detector(images)
        loss_dict = {"loss_cls": nn.functional.cross_entropy(cls_logits, gt_classes),
                     "loss_box_reg": nn.functional.l1_loss(boxes, gt_boxes)}
        losses = sum(loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()

        if (iteration + 1) % vis_period == 0:
            vis_logits, vis_boxes = detector(vis_images)
            labels = vis_logits.argmax(dim=1).tolist()
            for img, box, label in zip(vis_images, vis_boxes.tolist(), labels):
                storage.append(draw_instances(img, [box], [label]))
    return storage


def observe():
    from corpus.oracle import hook_outputs

    detector = TinyDetector()
    built = hook_outputs(detector, where=lambda inputs: inputs[0].shape[0] == 2)
    loader = [(torch.rand(4, 3, 6, 6), torch.randint(0, 3, (4,)), torch.rand(4, 4)) for _ in range(4)]
    do_train(detector, loader, torch.rand(2, 3, 6, 6), max_iter=4)
    return {"built": built}
