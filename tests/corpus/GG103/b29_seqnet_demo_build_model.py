# source: https://github.com/serend1p1ty/SeqNet/pull/14
# label: GG103 41
# effect: graph_built
# note: the demo builds the person-search network through a factory from the config and runs it on the gallery images with grad on; the detections only go to drawing (the PR wraps the inference in torch.no_grad()) (the label sits on the block's first forward, the query's on line 41: GG103 reports one finding per evaluation block, on its first model call; the gallery forwards in the loop are the same block)
import numpy as np
import torch
from torch import nn


class SeqNet(nn.Module):
    def __init__(self, feat_dim=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.box_head = nn.Linear(16, 5)
        self.reid_head = nn.Linear(16, feat_dim)

    def forward(self, images, targets=None, query_img_as_gallery=False):
        feats = self.backbone(images)
        boxes = self.box_head(feats)
        return [{"boxes": b[:4].unsqueeze(0), "scores": b[4:].sigmoid(), "embeddings": e.unsqueeze(0)}
                for b, e in zip(boxes, self.reid_head(feats))]


def build_network(cfg):
    return SeqNet(feat_dim=cfg["feat_dim"])


def visualize_result(img_path, detections, similarities):
    lines = []
    for det, sim in zip(detections, similarities):
        x1, y1, x2, y2 = det
        lines.append("%s %.1f %.1f %.1f %.1f %.3f" % (img_path, x1, y1, x2, y2, sim))
    return lines


def main(cfg, query_img, query_target, gallery_imgs, state_dict):
    net = build_network(cfg)
    net.load_state_dict(state_dict)
    net.eval()

    query_feat = net(query_img, [query_target], query_img_as_gallery=False)[0]["embeddings"]
    results = []
    for i, gallery_img in enumerate(gallery_imgs):
        gallery_output = net(gallery_img.unsqueeze(0))[0]
        detections = gallery_output["boxes"]
        gallery_feats = gallery_output["embeddings"]
        similarities = gallery_feats.mm(query_feat.view(-1, 1)).squeeze()
        results += visualize_result("gallery-%d.jpg" % i, detections.detach().cpu().numpy(),
                                   np.atleast_1d(similarities.detach().cpu().numpy()))
    return results


def observe():
    from corpus.oracle import forward_outputs

    cfg = {"feat_dim": 8}
    state = SeqNet(8).state_dict()
    query = torch.rand(1, 3, 6, 6)
    gallery = [torch.rand(3, 6, 6) for _ in range(2)]
    with forward_outputs() as built:
        main(cfg, query, {"boxes": torch.tensor([[0.0, 0.0, 3.0, 3.0]])}, gallery, state)
    return {"built": built}
