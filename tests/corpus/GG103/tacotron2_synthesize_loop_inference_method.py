# source: https://github.com/NVIDIA/tacotron2/issues/242
# label: GG103 47
# effect: graph_built
# note: the synthesis loop calls the model's own inference() method with grad on (only the vocoder is under no_grad); generating text after text, CPU memory keeps growing
import numpy as np
import torch
from torch import nn


class Tacotron2(nn.Module):
    def __init__(self, n_symbols=20, embedding_dim=8, n_mel_channels=6):
        super().__init__()
        self.embedding = nn.Embedding(n_symbols, embedding_dim)
        self.encoder = nn.GRU(embedding_dim, embedding_dim, batch_first=True)
        self.decoder = nn.Linear(embedding_dim, n_mel_channels)
        self.postnet = nn.Linear(n_mel_channels, n_mel_channels)
        self.gate = nn.Linear(embedding_dim, 1)

    def inference(self, inputs):
        embedded_inputs = self.embedding(inputs)
        encoder_outputs, _ = self.encoder(embedded_inputs)
        mel_outputs = self.decoder(encoder_outputs)
        mel_outputs_postnet = mel_outputs + self.postnet(mel_outputs)
        gate_outputs = torch.sigmoid(self.gate(encoder_outputs))
        alignments = torch.softmax(encoder_outputs @ encoder_outputs.transpose(1, 2), dim=-1)
        return mel_outputs, mel_outputs_postnet, gate_outputs, alignments


class WaveGlow(nn.Module):
    def __init__(self, n_mel_channels=6, hop=4):
        super().__init__()
        self.upsample = nn.Linear(n_mel_channels, hop)

    def infer(self, spect, sigma=0.666):
        return torch.tanh(self.upsample(spect)).flatten(1) * sigma


def text_to_sequence(text, n_symbols=20):
    return [ord(c) % n_symbols for c in text]


def synthesize(model, waveglow, texts, sampling_rate=22050):
    clips = []
    for text in texts:
        sequence = np.array(text_to_sequence(text))[None, :]
        sequence = torch.autograd.Variable(torch.from_numpy(sequence)).long()
        mel_outputs, mel_outputs_postnet, _, alignments = model.inference(sequence)
        with torch.no_grad():
            audio = waveglow.infer(mel_outputs_postnet, sigma=0.666)
        clips.append((audio[0].data.cpu().numpy(), sampling_rate))
    return clips


def observe():
    from corpus.oracle import hook_outputs

    model = Tacotron2().eval()
    built = hook_outputs(model.decoder)
    synthesize(model, WaveGlow().eval(), ["Waveglow is really awesome!", "Memory keeps growing."])
    return {"built": built}
