# source: https://github.com/microsoft/unilm/issues/998
# label: GG103 52
# effect: graph_built
# note: the tagger is built and eval()-ed at module level, its weights come from torch.load, and every chunk goes through BEATs_model.extract_features() with grad enabled: memory grows on each prediction loop
import torch
import torch.nn as nn


class BEATsConfig:
    def __init__(self, cfg=None):
        self.embed_dim = 16
        self.patch_size = 40
        self.num_labels = 10
        if cfg is not None:
            self.__dict__.update(cfg)


class BEATs(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.patch_embedding = nn.Conv1d(1, cfg.embed_dim, cfg.patch_size, stride=cfg.patch_size)
        self.encoder = nn.Sequential(nn.LayerNorm(cfg.embed_dim), nn.Linear(cfg.embed_dim, cfg.embed_dim), nn.GELU())
        self.predictor = nn.Linear(cfg.embed_dim, cfg.num_labels)

    def extract_features(self, source, padding_mask=None):
        x = self.patch_embedding(source.unsqueeze(1)).transpose(1, 2)
        if padding_mask is not None:
            frames = padding_mask[:, : x.size(1) * self.cfg.patch_size]
            frames = frames.view(padding_mask.size(0), x.size(1), -1).all(-1)
            x = x.masked_fill(frames.unsqueeze(-1), 0)
        x = self.encoder(x)
        logits = self.predictor(x).mean(dim=1)
        return torch.sigmoid(logits), padding_mask


cfg = BEATsConfig({"num_labels": 10})
BEATs_model = BEATs(cfg)
BEATs_model.eval()


def load_checkpoint(path):
    checkpoint = torch.load(path, map_location="cpu")
    BEATs_model.load_state_dict(checkpoint["model"])
    return checkpoint["label_dict"]


def tag_stream(chunks, label_dict, k=5):
    tags = []
    for audio_input_16khz in chunks:
        padding_mask = torch.zeros(audio_input_16khz.shape, dtype=torch.bool)
        probs = BEATs_model.extract_features(audio_input_16khz, padding_mask=padding_mask)[0]
        for top5_label_prob, top5_label_idx in zip(*probs.topk(k=k)):
            top5_label = [label_dict[label_idx.item()] for label_idx in top5_label_idx]
            tags.append(list(zip(top5_label, top5_label_prob.tolist())))
    return tags


def observe():
    import io

    from corpus.oracle import hook_outputs

    buf = io.BytesIO()
    torch.save({"model": BEATs_model.state_dict(), "label_dict": {i: "label_%d" % i for i in range(10)}}, buf)
    buf.seek(0)
    label_dict = load_checkpoint(buf)
    built = hook_outputs(BEATs_model.predictor)
    tag_stream([torch.randn(3, 400) for _ in range(3)], label_dict)
    return {"built": built}
