# source: https://github.com/dhimasryan/MOSA-Net-Cross-Domain/issues/2
# label: GG103 39
# effect: graph_built
# note: the feature-extraction script loads the self-supervised model through a loader function and calls its own extract_features() with grad on; the features are only saved to disk (the fix wraps the forward in torch.no_grad())
import os

import numpy as np
import torch
from torch import nn


class HubertLike(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.feature_extractor = nn.Conv1d(1, dim, kernel_size=4, stride=2)
        self.encoder = nn.GRU(dim, dim, batch_first=True)

    def extract_features(self, source, padding_mask=None, mask=False, output_layer=None):
        feats = self.feature_extractor(source.unsqueeze(1)).transpose(1, 2)
        x, _ = self.encoder(feats)
        return x, padding_mask

    def forward(self, source):
        return self.extract_features(source)[0]


def load_model_ensemble(cp_path, dim=8):
    ssl = HubertLike(dim)
    if cp_path is not None:
        ssl.load_state_dict(torch.load(cp_path))
    return [ssl]


def extract(wav_list, out_dir, cp_path=None):
    ssl_model = load_model_ensemble(cp_path)[0]
    ssl_model.eval()
    for name, wav in wav_list:
        wav = torch.from_numpy(wav).float().unsqueeze(0)
        features, _ = ssl_model.extract_features(wav, padding_mask=None, mask=False, output_layer=12)
        np.save(os.path.join(out_dir, name + ".npy"), features.squeeze(0).detach().cpu().numpy())


def observe():
    import tempfile

    from corpus.oracle import forward_outputs

    wavs = [("utt%d" % i, np.random.RandomState(i).randn(32).astype(np.float32)) for i in range(2)]
    with tempfile.TemporaryDirectory() as d, forward_outputs() as built:
        extract(wavs, d)
    return {"built": built}
