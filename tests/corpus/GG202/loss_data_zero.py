# source: https://github.com/MorvanZhou/PyTorch-Tutorial/blob/master/tutorial-contents-notebooks/402_RNN.ipynb
# label: GG202 15
# effect: raises "invalid index of a 0-dim tensor"
# note: a pre-0.4 tutorial's loss.data[0] in the progress print
import torch


def train(rnn, loader, optimizer, loss_func):
    for step, (b_x, b_y) in enumerate(loader):
        output = rnn(b_x)
        loss = loss_func(output, b_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "| train loss: %.4f" % loss.data[0])


def observe():
    rnn = torch.nn.Linear(4, 2)
    train(rnn, [(torch.randn(3, 4), torch.randn(3, 2))], torch.optim.SGD(rnn.parameters(), lr=0.1), torch.nn.MSELoss())
    return {}
