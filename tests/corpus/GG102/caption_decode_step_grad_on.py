# source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/43
# label: GG102 36
# effect: graph_grows
# note: caption decoding feeds (h, c) back through decode_step outside no_grad: memory grows word after word (the GPU OOM)
import torch
from torch import nn


class DecoderWithAttention(nn.Module):
    def __init__(self, vocab_size=15, embed_dim=6, encoder_dim=8, decoder_dim=10):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.attention = nn.Linear(encoder_dim + decoder_dim, 1)
        self.init_h = nn.Linear(encoder_dim, decoder_dim)
        self.init_c = nn.Linear(encoder_dim, decoder_dim)
        self.decode_step = nn.LSTMCell(embed_dim + encoder_dim, decoder_dim)
        self.fc = nn.Linear(decoder_dim, vocab_size)

    def init_hidden_state(self, encoder_out):
        mean_encoder_out = encoder_out.mean(dim=1)
        return self.init_h(mean_encoder_out), self.init_c(mean_encoder_out)

    def attend(self, encoder_out, h):
        scores = self.attention(torch.cat([encoder_out, h.unsqueeze(1).expand(-1, encoder_out.size(1), -1)], dim=2))
        return (encoder_out * scores.softmax(dim=1)).sum(dim=1)


def greedy_caption(encoder, decoder, images, start_token, max_len=20):
    encoder_out = encoder(images)
    h, c = decoder.init_hidden_state(encoder_out)
    words = torch.full((images.size(0),), start_token, dtype=torch.long)
    caption = []
    for _ in range(max_len):
        embeddings = decoder.embedding(words)
        awe = decoder.attend(encoder_out, h)
        h, c = decoder.decode_step(torch.cat([embeddings, awe], dim=1), (h, c))
        words = decoder.fc(h).argmax(dim=1)
        caption.append(words)
    return torch.stack(caption, dim=1)


def observe():
    from corpus.oracle import graph_size

    encoder = nn.Sequential(nn.Flatten(2), nn.Linear(4, 8))
    decoder = DecoderWithAttention()
    sizes = []
    decoder.decode_step.register_forward_hook(lambda m, inp, out: sizes.append(graph_size(out[0])))
    greedy_caption(encoder, decoder, torch.randn(2, 3, 2, 2), start_token=1, max_len=4)
    return {"sizes": sizes}
