# source: https://github.com/facebookresearch/SlowFast/issues/109
# label: GG103 57
# effect: graph_built
# note: the model comes from a factory (`build_model(cfg)`), and perform_test() predicts with grad on; the reporter could only test with tiny settings until adding no_grad
from types import SimpleNamespace

import torch
from torch import nn

MODEL_REGISTRY = {}


def register(name):
    def wrap(cls):
        MODEL_REGISTRY[name] = cls
        return cls
    return wrap


@register("SlowFastLite")
class SlowFastLite(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.slow = nn.Linear(cfg.DATA.NUM_FEATURES, 16)
        self.fast = nn.Linear(cfg.DATA.NUM_FEATURES, 8)
        self.head = nn.Linear(24, cfg.MODEL.NUM_CLASSES)

    def forward(self, inputs):
        slow, fast = inputs
        return self.head(torch.cat([self.slow(slow).relu(), self.fast(fast).relu()], dim=1)).softmax(dim=1)


def build_model(cfg):
    model = MODEL_REGISTRY[cfg.MODEL.ARCH](cfg)
    return model.to(cfg.DEVICE)


class TestMeter:
    def __init__(self, num_videos, num_clips, num_classes):
        self.num_clips = num_clips
        self.video_preds = torch.zeros((num_videos, num_classes))
        self.video_labels = torch.zeros(num_videos).long()

    def update_stats(self, preds, labels, clip_ids):
        for ind in range(preds.shape[0]):
            vid_id = int(clip_ids[ind]) // self.num_clips
            self.video_labels[vid_id] = labels[ind]
            self.video_preds[vid_id] += preds[ind]

    def finalize_metrics(self):
        return (self.video_preds.argmax(1) == self.video_labels).float().mean().item()


def perform_test(test_loader, model, test_meter, cfg):
    model.eval()
    for cur_iter, (inputs, labels, video_idx) in enumerate(test_loader):
        preds = model(inputs)
        test_meter.update_stats(preds.detach().cpu(), labels.detach().cpu(), video_idx.detach().cpu())
    return test_meter.finalize_metrics()


def test(cfg, test_loader):
    model = build_model(cfg)
    test_meter = TestMeter(cfg.TEST.NUM_VIDEOS, cfg.TEST.NUM_ENSEMBLE_VIEWS, cfg.MODEL.NUM_CLASSES)
    return perform_test(test_loader, model, test_meter, cfg)


def observe():
    from corpus.oracle import forward_outputs

    cfg = SimpleNamespace(DEVICE="cpu", DATA=SimpleNamespace(NUM_FEATURES=6),
                          MODEL=SimpleNamespace(ARCH="SlowFastLite", NUM_CLASSES=4),
                          TEST=SimpleNamespace(NUM_VIDEOS=2, NUM_ENSEMBLE_VIEWS=2))
    loader = [((torch.randn(2, 6), torch.randn(2, 6)), torch.tensor([1, 3]), torch.tensor([2 * i, 2 * i + 1]))
              for i in range(2)]
    with forward_outputs() as built:
        test(cfg, loader)
    return {"built": built}
