# source: https://github.com/facebookarchive/loop/issues/57
# label: GG103 33
# effect: graph_unused
# note: VoiceLoop's evaluate() runs the model over the validation set with grad on and keeps only loss.item(); every batch builds a graph nobody back-propagates (the out-of-memory in the validation step of the issue)
import torch
import torch.nn as nn


class Loop(nn.Module):
    def __init__(self, n_phonemes=10, n_speakers=3, hidden=16, out_dim=6):
        super().__init__()
        self.embed = nn.Embedding(n_phonemes, hidden)
        self.speaker = nn.Embedding(n_speakers, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, out_dim)

    def forward(self, src, spkr, start=True):
        h = self.embed(src) + self.speaker(spkr).unsqueeze(1)
        out, _ = self.rnn(h)
        return self.proj(out), out


class MaskedMSE(nn.Module):
    def forward(self, output, target, mask):
        err = ((output - target) ** 2).sum(-1)
        return (err * mask).sum() / mask.sum()


def evaluate(model, criterion, epoch, eval_losses, valid_loader):
    total = 0
    model.eval()
    for src, spkr, tgt, mask in valid_loader:
        output, _ = model(src, spkr, start=True)
        loss = criterion(output, tgt, mask)
        total += loss.item()
    avg = total / len(valid_loader)
    eval_losses.append(avg)
    return avg


def observe():
    from corpus.oracle import output_flows

    model = Loop()
    flows = output_flows(model)
    loader = [(torch.randint(0, 10, (2, 5)), torch.randint(0, 3, (2,)), torch.randn(2, 5, 6), torch.ones(2, 5))
              for _ in range(2)]
    evaluate(model, MaskedMSE(), 1, [], loader)
    return {"flows": flows}
