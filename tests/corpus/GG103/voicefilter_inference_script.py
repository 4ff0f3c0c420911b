# source: https://github.com/maum-ai/voicefilter/pull/6
# label: GG103 50
# effect: graph_built
# note: inference.py builds the speaker embedder and the VoiceFilter model and runs both with grad on; the estimated magnitude only reaches .numpy() and the wav writer (the PR's no_grad halved GPU memory)
import numpy as np
import torch
import torch.nn as nn


class SpeechEmbedder(nn.Module):
    def __init__(self, num_mels=8, emb_dim=6):
        super().__init__()
        self.lstm = nn.LSTM(num_mels, 12, batch_first=True)
        self.proj = nn.Linear(12, emb_dim)

    def forward(self, mel):
        x, _ = self.lstm(mel.transpose(0, 1).unsqueeze(0))
        x = self.proj(x[:, -1])
        return (x / torch.norm(x, p=2, dim=1, keepdim=True)).squeeze(0)


class VoiceFilter(nn.Module):
    def __init__(self, num_freq=10, emb_dim=6):
        super().__init__()
        self.lstm = nn.LSTM(num_freq + emb_dim, 16, batch_first=True)
        self.fc = nn.Linear(16, num_freq)

    def forward(self, x, dvec):
        dvec = dvec.unsqueeze(1).repeat(1, x.size(1), 1)
        x, _ = self.lstm(torch.cat((x, dvec), dim=2))
        return torch.sigmoid(self.fc(x))


class Audio:
    def get_mel(self, wav, num_mels=8):
        frames = torch.from_numpy(wav[: len(wav) // num_mels * num_mels]).float().view(num_mels, -1)
        return frames.abs().log1p()

    def wav2spec(self, wav, num_freq=10):
        frames = np.abs(wav[: len(wav) // num_freq * num_freq].reshape(-1, num_freq))
        return frames, np.sign(wav[: len(frames) * num_freq].reshape(-1, num_freq))

    def spec2wav(self, mag, phase):
        return (mag * phase).ravel()


def main(embedder, model, audio, reference_wav, mixed_wav):
    model.eval()
    dvec_mel = audio.get_mel(reference_wav)
    dvec = embedder(dvec_mel)
    dvec = dvec.unsqueeze(0)

    mag, phase = audio.wav2spec(mixed_wav)
    mag = torch.from_numpy(mag).float().unsqueeze(0)

    mask = model(mag, dvec)
    est_mag = mag * mask

    est_mag = est_mag[0].cpu().detach().numpy()
    return audio.spec2wav(est_mag, phase)


def observe():
    from corpus.oracle import forward_outputs

    rng = np.random.RandomState(0)
    with forward_outputs() as built:
        main(SpeechEmbedder(), VoiceFilter(), Audio(), rng.randn(64).astype(np.float32),
             rng.randn(60).astype(np.float32))
    return {"built": built}
