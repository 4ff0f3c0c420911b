# source: https://github.com/growingnet/gromo/issues/135
# label: GG101 27
# effect: graph_kept
# note: a growing network's merge module keeps its last output in self.activity without detach (the issue: "This will create a memory leak"); the stored input is meant to keep its graph
import torch
from torch import nn


class MergeGrowingModule(nn.Module):
    def __init__(self, post_merge_function=None):
        super().__init__()
        self.post_merge_function = post_merge_function
        self.store_input = 0
        self.store_activity = 0
        self.input = None
        self.activity = None

    def forward(self, x):
        if self.store_input > 0:
            self.input = x
            self.input.retain_grad()
        if self.post_merge_function and (x is not None):
            y = self.post_merge_function(x)
        else:
            y = x
        if self.store_activity > 0:
            self.activity = y
        return y


def observe():
    merge = MergeGrowingModule(post_merge_function=nn.ReLU())
    merge.store_input = merge.store_activity = 1
    first, second = nn.Linear(4, 6), nn.Linear(6, 2)
    opt = torch.optim.SGD(list(first.parameters()) + list(second.parameters()), lr=0.1)
    for _ in range(3):
        x, y = torch.randn(5, 4), torch.randn(5, 2)
        opt.zero_grad()
        nn.functional.mse_loss(second(merge(first(x))), y).backward()
        opt.step()
    return {"kept": merge.activity}
