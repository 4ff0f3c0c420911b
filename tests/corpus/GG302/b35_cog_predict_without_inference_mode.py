# source: https://github.com/replicate/cog/issues/1681
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: the reporter's fix, the decorator removed from predict(): the adaptation steps build their graphs and back-propagate; only the final scoring of the query runs under torch.no_grad()
import torch
import torch.nn as nn
import torch.nn.functional as F


class Predictor:
    def setup(self):
        """Load the model into memory to make running multiple predictions efficient"""
        self.backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        for p in self.backbone.parameters():
            p.requires_grad_(False)
        self.head = nn.Linear(16, 3)

    def predict(self, examples: torch.Tensor, labels: torch.Tensor, query: torch.Tensor, steps: int = 5,
                lr: float = 0.1) -> list:
        """Run a single prediction on the model"""
        optimizer = torch.optim.SGD(self.head.parameters(), lr=lr)
        for _ in range(steps):
            features = self.backbone(examples)
            logits = self.head(features)
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            scores = self.head(self.backbone(query)).softmax(-1)
        return scores.argmax(-1).tolist()


def observe():
    predictor = Predictor()
    predictor.setup()
    predictor.predict(torch.randn(6, 8), torch.randint(0, 3, (6,)), torch.randn(2, 8))
    return {}
