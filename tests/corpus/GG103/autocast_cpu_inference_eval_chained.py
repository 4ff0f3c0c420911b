# source: https://pytorch.org/docs/stable/amp.html
# label: GG103 24
# effect: graph_built
# note: the docs' "CPU Inference Example": `model = Net().eval()` chained on the constructor, forwards under torch.autocast only - autocast changes dtypes, not grad mode, so every batch builds a graph
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, input_size=8, num_classes=3):
        super().__init__()
        self.fc1 = nn.Linear(input_size, 16)
        self.fc2 = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def predict_classes(data):
    model = Net().eval()
    predictions = []
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        for input in data:
            output = model(input)
            predictions.append(output.argmax(dim=-1))
    return torch.cat(predictions)


def observe():
    from corpus.oracle import forward_outputs

    with forward_outputs() as built:
        predict_classes([torch.randn(4, 8) for _ in range(3)])
    return {"built": built}
