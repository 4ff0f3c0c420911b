# source: https://github.com/jwyang/faster-rcnn.pytorch/pull/420
# label: GG103 41
# effect: graph_built
# note: demo.py wraps the image in `Variable(..., volatile=True)`, which has done nothing since torch 0.4 (it only warns): the detector builds a graph for every image whose detections are only drawn
import numpy as np
import torch
from torch import nn
from torch.autograd import Variable


class resnet(nn.Module):
    def __init__(self, classes, num_layers=101, pretrained=False, class_agnostic=False):
        super().__init__()
        self.classes = classes
        self.RCNN_base = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.RCNN_cls_score = nn.Linear(16, len(classes))
        self.RCNN_bbox_pred = nn.Linear(16, 4 * len(classes))

    def forward(self, im_data, im_info, gt_boxes, num_boxes):
        feat = self.RCNN_base(im_data)
        rois = im_info.new_zeros(im_data.size(0), 1, 5)
        return rois, self.RCNN_cls_score(feat).softmax(-1), self.RCNN_bbox_pred(feat), 0, 0, 0, 0, 0


def vis_detections(im, class_name, dets, thresh=0.8):
    return [(class_name, tuple(d[:4])) for d in dets if d[-1] > thresh]


def demo(fasterRCNN, pascal_classes, images, thresh=0.05):
    fasterRCNN.eval()
    drawn = []
    for im in images:
        im_data_pt = torch.from_numpy(im).permute(2, 0, 1).unsqueeze(0).float()
        im_info_pt = torch.tensor([[im.shape[0], im.shape[1], 1.0]])
        im_data = Variable(im_data_pt, volatile=True)
        im_info = Variable(im_info_pt, volatile=True)
        gt_boxes = Variable(torch.zeros(1, 1, 5), volatile=True)
        num_boxes = Variable(torch.zeros(1), volatile=True)

        rois, cls_prob, bbox_pred, rpn_loss_cls, rpn_loss_box, RCNN_loss_cls, RCNN_loss_bbox, rois_label = \
            fasterRCNN(im_data, im_info, gt_boxes, num_boxes)
        scores = cls_prob.data
        boxes = bbox_pred.data.view(1, -1, 4)
        for j in range(1, len(pascal_classes)):
            inds = torch.nonzero(scores[:, j] > thresh).view(-1)
            if inds.numel() > 0:
                cls_dets = torch.cat((boxes[inds, j], scores[inds, j].unsqueeze(1)), 1)
                drawn += vis_detections(im, pascal_classes[j], cls_dets.cpu().numpy(), 0.5)
    return drawn


def observe():
    from corpus.oracle import hook_outputs

    classes = ("__background__", "person", "car")
    net = resnet(classes)
    built = hook_outputs(net)
    images = [np.random.RandomState(i).rand(6, 6, 3).astype(np.float32) for i in range(2)]
    demo(net, classes, images)
    return {"built": built}
