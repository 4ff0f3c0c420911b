# source: https://github.com/OpenNMT/OpenNMT-py/issues/1141
# label: lookalike GG103
# effect: graph_built
# note: the fix OpenNMT-py made for the issue: validate() runs its batches inside `with torch.no_grad():` - eval mode and no graph
import torch
import torch.nn as nn


class Statistics:
    def __init__(self, loss=0.0, n_words=0, n_correct=0):
        self.loss = loss
        self.n_words = n_words
        self.n_correct = n_correct

    def update(self, stat):
        self.loss += stat.loss
        self.n_words += stat.n_words
        self.n_correct += stat.n_correct

    def accuracy(self):
        return 100 * (self.n_correct / max(self.n_words, 1))


class NMTLossCompute(nn.Module):
    def __init__(self, generator, padding_idx=0):
        super().__init__()
        self.generator = generator
        self.padding_idx = padding_idx
        self.criterion = nn.NLLLoss(ignore_index=padding_idx, reduction="sum")

    def _stats(self, loss, scores, target):
        pred = scores.max(1)[1]
        non_padding = target.ne(self.padding_idx)
        num_correct = pred.eq(target).masked_select(non_padding).sum().item()
        return Statistics(loss.item(), non_padding.sum().item(), num_correct)

    def monolithic_compute_loss(self, batch, output, attns):
        scores = self.generator(output.view(-1, output.size(2)))
        gtruth = batch["tgt"][1:].reshape(-1)
        loss = self.criterion(scores, gtruth)
        return self._stats(loss.clone(), scores, gtruth)


class NMTModel(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.src_emb = nn.Embedding(vocab, hidden)
        self.tgt_emb = nn.Embedding(vocab, hidden)
        self.encoder = nn.GRU(hidden, hidden)
        self.decoder = nn.GRU(hidden, hidden)

    def forward(self, src, tgt, lengths):
        tgt = tgt[:-1]
        _, enc_state = self.encoder(self.src_emb(src))
        dec_out, _ = self.decoder(self.tgt_emb(tgt), enc_state)
        return dec_out, {"std": None}, enc_state


class Trainer:
    def __init__(self, model, train_loss, valid_loss, optim):
        self.model = model
        self.train_loss = train_loss
        self.valid_loss = valid_loss
        self.optim = optim

    def validate(self, valid_iter):
        """ Validate model.
            valid_iter: validate data iterator
        Returns:
            :obj:`nmt.Statistics`: validation loss statistics
        """
        # Set model in validating mode.
        self.model.eval()

        stats = Statistics()

        with torch.no_grad():
            for batch in valid_iter:
                src, src_lengths = batch["src"], batch["src_lengths"]
                tgt = batch["tgt"]

                # F-prop through the model.
                outputs, attns, _ = self.model(src, tgt, src_lengths)

                # Compute loss.
                batch_stats = self.valid_loss.monolithic_compute_loss(batch, outputs, attns)

                # Update statistics.
                stats.update(batch_stats)

        # Set model back to training mode.
        self.model.train()

        return stats


def observe():
    from corpus.oracle import hook_outputs

    model = NMTModel()
    generator = nn.Sequential(nn.Linear(16, 12), nn.LogSoftmax(dim=-1))
    loss = NMTLossCompute(generator)
    trainer = Trainer(model, loss, loss, torch.optim.SGD(list(model.parameters()) + list(generator.parameters()), lr=1.0))
    built = hook_outputs(model)
    valid_iter = [{"src": torch.randint(1, 12, (5, 2)), "src_lengths": torch.tensor([5, 5]),
                   "tgt": torch.randint(1, 12, (6, 2))} for _ in range(2)]
    trainer.validate(valid_iter)
    return {"built": built}
