# source: https://github.com/graykode/nlp-tutorial/pull/17
# label: GG103 45
# effect: graph_built
# note: after training, the greedy decoder reaches the DataParallel-wrapped model's parts through attribute chains (model.module.encoder / .decoder) with grad on; its outputs only feed argmax indices and .item()
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, src_vocab_size, d_model):
        super().__init__()
        self.src_emb = nn.Embedding(src_vocab_size, d_model)
        self.layer = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=16, batch_first=True)

    def forward(self, enc_inputs):
        enc_outputs = self.layer(self.src_emb(enc_inputs))
        return enc_outputs, None


class Decoder(nn.Module):
    def __init__(self, tgt_vocab_size, d_model):
        super().__init__()
        self.tgt_emb = nn.Embedding(tgt_vocab_size, d_model)
        self.layer = nn.TransformerDecoderLayer(d_model, nhead=2, dim_feedforward=16, batch_first=True)

    def forward(self, dec_inputs, enc_inputs, enc_outputs):
        return self.layer(self.tgt_emb(dec_inputs), enc_outputs), None


class Transformer(nn.Module):
    def __init__(self, src_vocab_size=6, tgt_vocab_size=7, d_model=8):
        super().__init__()
        self.encoder = Encoder(src_vocab_size, d_model)
        self.decoder = Decoder(tgt_vocab_size, d_model)
        self.projection = nn.Linear(d_model, tgt_vocab_size, bias=False)

    def forward(self, enc_inputs, dec_inputs):
        enc_outputs, _ = self.encoder(enc_inputs)
        dec_outputs, _ = self.decoder(dec_inputs, enc_inputs, enc_outputs)
        dec_logits = self.projection(dec_outputs)
        return dec_logits.view(-1, dec_logits.size(-1))


def greedy_decoder(model, enc_input, start_symbol, tgt_len=5):
    enc_outputs, enc_self_attns = model.module.encoder(enc_input)
    dec_input = torch.zeros(1, tgt_len).type_as(enc_input.data)
    next_symbol = start_symbol
    for i in range(0, tgt_len):
        dec_input[0][i] = next_symbol
        dec_outputs, _ = model.module.decoder(dec_input, enc_input, enc_outputs)
        projected = model.module.projection(dec_outputs)
        prob = projected.squeeze(0).max(dim=-1, keepdim=False)[1]
        next_word = prob.data[i]
        next_symbol = next_word.item()
    return dec_input


def train(model, enc_inputs, dec_inputs, target_batch, epochs=3):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    for epoch in range(epochs):
        optimizer.zero_grad()
        outputs = model(enc_inputs, dec_inputs)
        loss = criterion(outputs, target_batch.contiguous().view(-1))
        print('Epoch:', '%04d' % (epoch + 1), 'cost =', '{:.6f}'.format(loss.item()))
        loss.backward()
        optimizer.step()


def translate(model, enc_inputs, start_symbol, number_dict):
    greedy_dec_input = greedy_decoder(model, enc_inputs, start_symbol=start_symbol)
    return [number_dict[n.item()] for n in greedy_dec_input.squeeze()]


def observe():
    from corpus.oracle import hook_outputs

    model = nn.DataParallel(Transformer())
    enc_inputs = torch.tensor([[1, 2, 3, 4, 0]])
    dec_inputs = torch.tensor([[6, 1, 2, 3, 4]])
    target_batch = torch.tensor([[1, 2, 3, 4, 5]])
    train(model, enc_inputs, dec_inputs, target_batch)
    built = hook_outputs(model.module.encoder)
    translate(model, enc_inputs, 6, {i: w for i, w in enumerate("P i want a beer S E".split())})
    return {"built": built}
