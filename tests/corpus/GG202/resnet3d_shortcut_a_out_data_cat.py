# source: https://github.com/kenshohara/3D-ResNets-PyTorch/blob/master/models/resnet.py
# label: GG202|GG301 52
# effect: wrong_grad
# note: the type-A shortcut zero-pads `out.data` inside forward: the identity path is cut from the graph, so the layers before the block get only the residual branch's gradient, silently
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv3d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm3d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv3d(planes, planes, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm3d(planes)
        self.downsample = downsample

    def forward(self, x):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            residual = self.downsample(x)
        out += residual
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, block, layers, block_inplanes, n_input_channels=1, shortcut_type='A', n_classes=3):
        super().__init__()
        self.in_planes = block_inplanes[0]
        self.conv1 = nn.Conv3d(n_input_channels, self.in_planes, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm3d(self.in_planes)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(block, block_inplanes[0], layers[0], shortcut_type)
        self.layer2 = self._make_layer(block, block_inplanes[1], layers[1], shortcut_type, stride=2)
        self.avgpool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.fc = nn.Linear(block_inplanes[1] * block.expansion, n_classes)

    def _downsample_basic_block(self, x, planes, stride):
        out = F.avg_pool3d(x, kernel_size=1, stride=stride)
        zero_pads = torch.zeros(out.size(0), planes - out.size(1), out.size(2), out.size(3), out.size(4))
        if isinstance(out.data, torch.cuda.FloatTensor):
            zero_pads = zero_pads.cuda()

        out = torch.cat([out.data, zero_pads], dim=1)

        return out

    def _make_layer(self, block, planes, blocks, shortcut_type, stride=1):
        downsample = None
        if stride != 1 or self.in_planes != planes * block.expansion:
            if shortcut_type == 'A':
                downsample = partial(self._downsample_basic_block, planes=planes * block.expansion, stride=stride)
            else:
                downsample = nn.Sequential(nn.Conv3d(self.in_planes, planes * block.expansion, 1, stride=stride),
                                           nn.BatchNorm3d(planes * block.expansion))
        layers = [block(in_planes=self.in_planes, planes=planes, stride=stride, downsample=downsample)]
        self.in_planes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.in_planes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        x = self.avgpool(x).view(x.size(0), -1)
        return self.fc(x)


def train_step(model, clips, targets, optimizer):
    model.train()
    loss = F.cross_entropy(model(clips), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    torch.manual_seed(0)
    model = ResNet(BasicBlock, [1, 1], [2, 4])
    clips, targets = torch.randn(2, 1, 4, 4, 4), torch.tensor([0, 2])
    reference = ResNet(BasicBlock, [1, 1], [2, 4])
    reference.load_state_dict(model.state_dict())
    train_step(model, clips, targets, torch.optim.SGD(model.parameters(), lr=0.0))

    def uncut(self, x, planes, stride):
        out = F.avg_pool3d(x, kernel_size=1, stride=stride)
        return torch.cat([out, torch.zeros(out.size(0), planes - out.size(1), *out.shape[2:])], dim=1)

    reference.layer2[0].downsample = partial(uncut, reference, planes=4, stride=2)
    F.cross_entropy(reference(clips), targets).backward()
    return {"grad": model.conv1.weight.grad, "expected": reference.conv1.weight.grad}
