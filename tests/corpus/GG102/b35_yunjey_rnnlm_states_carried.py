# source: https://github.com/yunjey/pytorch-tutorial/issues/90
# label: GG102 47
# effect: raises "Trying to backward through the graph a second time"
# note: the tutorial's RNN language model carries the LSTM `states` from one window of the corpus into the next; the issue asks what the line `states = detach(states)` is for - this is the loop without it: the second window's backward runs into the first window's freed graph
import torch
import torch.nn as nn


# RNN based language model
class RNNLM(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
        super(RNNLM, self).__init__()
        self.embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
        self.linear = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, h):
        # Embed word ids to vectors
        x = self.embed(x)

        # Forward propagate LSTM
        out, (h, c) = self.lstm(x, h)

        # Reshape output to (batch_size*sequence_length, hidden_size)
        out = out.reshape(out.size(0) * out.size(1), out.size(2))

        # Decode hidden states of all time steps
        out = self.linear(out)
        return out, (h, c)


def train(model, ids, num_epochs, seq_length, num_layers, batch_size, hidden_size, learning_rate=0.002):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    num_batches = ids.size(1) // seq_length
    for epoch in range(num_epochs):
        # Set initial hidden and cell states
        states = (torch.zeros(num_layers, batch_size, hidden_size),
                  torch.zeros(num_layers, batch_size, hidden_size))

        for i in range(0, ids.size(1) - seq_length, seq_length):
            # Get mini-batch inputs and targets
            inputs = ids[:, i:i + seq_length]
            targets = ids[:, (i + 1):(i + 1) + seq_length]

            # Forward pass
            outputs, states = model(inputs, states)
            loss = criterion(outputs, targets.reshape(-1))

            # Backward and optimize
            model.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()

            step = (i + 1) // seq_length
            if step % 100 == 0:
                print('Epoch [{}/{}], Step[{}/{}], Loss: {:.4f}'.format(epoch + 1, num_epochs, step, num_batches,
                                                                      loss.item()))


def observe():
    model = RNNLM(vocab_size=15, embed_size=8, hidden_size=8, num_layers=1)
    ids = torch.randint(0, 15, (2, 17))
    train(model, ids, num_epochs=1, seq_length=4, num_layers=1, batch_size=2, hidden_size=8)
    return {}
