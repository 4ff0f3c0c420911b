# source: https://github.com/huggingface/torchMoji/issues/21
# label: lookalike GG303
# effect: no_grad
# note: the thread's fix: forward() no longer returns outputs.data for tensor input and the loss keeps its graph; the Variables left are fresh wrappers of inputs and zero hidden states, and the model learns
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.nn.utils import clip_grad_norm_


class TorchMoji(nn.Module):
    def __init__(self, nb_classes=2, nb_tokens=20, embedding_dim=8, hidden_size=6):
        super(TorchMoji, self).__init__()
        self.hidden_size = hidden_size
        self.embed = nn.Embedding(nb_tokens, embedding_dim)
        self.lstm_0 = nn.LSTM(embedding_dim, hidden_size, batch_first=True, bidirectional=True)
        self.output_layer = nn.Sequential(nn.Linear(2 * hidden_size, 1), nn.Sigmoid())

    def forward(self, input_seqs):
        # Check if we have Torch.LongTensor inputs or not Torch.Variable (assume Numpy array in this case), take note to return same format
        return_numpy = False
        return_tensor = False
        if isinstance(input_seqs, (torch.LongTensor, torch.cuda.LongTensor)):
            input_seqs = Variable(input_seqs)
            return_tensor = True
        elif not isinstance(input_seqs, Variable):
            input_seqs = Variable(torch.from_numpy(input_seqs.astype('int64')).long())
            return_numpy = True

        ho = self.lstm_0.weight_hh_l0.data.new(2, input_seqs.size()[0], self.hidden_size).zero_()
        co = self.lstm_0.weight_hh_l0.data.new(2, input_seqs.size()[0], self.hidden_size).zero_()
        hidden = (Variable(ho, requires_grad=False), Variable(co, requires_grad=False))

        # Embed with an activation function to bound the values of the embeddings
        x = self.embed(input_seqs)
        x = nn.Tanh()(x)
        lstm_0_output, _ = self.lstm_0(x, hidden)
        x, _ = lstm_0_output.max(dim=1)
        outputs = self.output_layer(x)

        # Adapt return format if needed
        if return_numpy:
            outputs = outputs.data.numpy()
        return outputs


def fit_model(model, loss_op, optim_op, train_gen, epochs=1):
    epoch_losses = []
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for i, data in enumerate(train_gen):
            X_train, y_train = data
            X_train = Variable(X_train, requires_grad=False)
            y_train = Variable(y_train, requires_grad=False)
            optim_op.zero_grad()
            output = model(X_train)
            loss = loss_op(output, y_train)
            loss.backward()
            clip_grad_norm_(model.parameters(), 1)
            optim_op.step()
            total += loss.item()
        epoch_losses.append(total / len(train_gen))
    return epoch_losses


def observe():
    torch.manual_seed(0)
    model = TorchMoji()
    optim_op = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_gen = [(torch.randint(1, 20, (4, 5)), torch.randint(0, 2, (4, 1)).float())]
    fit_model(model, nn.BCELoss(), optim_op, train_gen)
    return {"params": list(model.parameters())}
