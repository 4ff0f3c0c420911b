# source: https://github.com/pytorch/pytorch/issues/2769
# label: GG104 26
# effect: raises "Trying to backward through the graph a second time"
# note: forward() feeds self.hidden to the LSTM and stores the returned state back on self: the next batch's graph reaches into the previous batch's (freed) graph ("explosive growth" on old releases, an error today)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class LSTM(nn.Module):
    def __init__(self, input_len=12, hidden_len=8, target_size=4, is_softmax=True):
        super(LSTM, self).__init__()
        self.hidden_len = hidden_len
        self.is_softmax = is_softmax
        self.lstm = nn.LSTM(input_len, hidden_len, batch_first=True)
        self.target_size = target_size
        self.hidden2class = nn.Linear(hidden_len, target_size)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (Variable(torch.zeros(1, 1, self.hidden_len)),
                Variable(torch.zeros(1, 1, self.hidden_len)))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)
        cls_scores = self.hidden2class(lstm_out[:, -1, :]).view(-1, self.target_size)
        if self.is_softmax:
            cls_scores = F.log_softmax(cls_scores, dim=1)
        return cls_scores


def train(train_data, model, criterion, optimizer):
    model.train()
    for i, (input, target) in enumerate(train_data):
        input_var = torch.autograd.Variable(input)
        target_var = torch.autograd.Variable(target)
        output = model(input_var)
        loss = criterion(output, target_var)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def observe():
    model = LSTM()
    data = [(torch.randn(1, 5, 12), torch.randint(0, 4, (1,))) for _ in range(3)]
    train(data, model, nn.NLLLoss(), torch.optim.SGD(model.parameters(), lr=0.01))
    return {}
