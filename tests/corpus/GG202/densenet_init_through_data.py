# source: https://github.com/bamos/densenet.pytorch/issues/21
# label: lookalike GG202
# effect: raises "a leaf Variable that requires grad is being used in an in-place operation"
# note: DenseNet's constructor initialises every weight in place through .data, before any forward: nothing has saved them, and the writes are allowed on parameters
import math

import torch
import torch.nn.functional as F
from torch import nn


class SingleLayer(nn.Module):
    def __init__(self, nChannels, growthRate):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(nChannels)
        self.conv1 = nn.Conv2d(nChannels, growthRate, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        out = self.conv1(F.relu(self.bn1(x)))
        return torch.cat((x, out), 1)


class DenseNet(nn.Module):
    def __init__(self, growthRate=4, nLayers=2, nClasses=3):
        super().__init__()
        nChannels = 2 * growthRate
        self.conv1 = nn.Conv2d(3, nChannels, kernel_size=3, padding=1, bias=False)
        layers = []
        for _ in range(nLayers):
            layers.append(SingleLayer(nChannels, growthRate))
            nChannels += growthRate
        self.dense1 = nn.Sequential(*layers)
        self.bn1 = nn.BatchNorm2d(nChannels)
        self.fc = nn.Linear(nChannels, nClasses)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2. / n))
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()
            elif isinstance(m, nn.Linear):
                m.bias.data.zero_()

    def forward(self, x):
        out = self.dense1(self.conv1(x))
        out = torch.flatten(F.adaptive_avg_pool2d(F.relu(self.bn1(out)), 1), 1)
        return F.log_softmax(self.fc(out), dim=1)


def observe():
    torch.manual_seed(0)
    net = DenseNet()
    loss = F.nll_loss(net(torch.randn(2, 3, 6, 6)), torch.tensor([0, 2]))
    loss.backward()
    return {"loss": loss.item()}
