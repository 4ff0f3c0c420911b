# source: https://github.com/ajhamdi/MVTN/issues/2
# label: GG101 57
# effect: graph_kept
# note: MVTN's train() sums `total_loss += loss` over the epoch after each loss.backward(): every batch's graph stays reachable from total_loss (the RAM that grows until the process is killed in the second epoch; the reporter's fix, adopted upstream: loss.item())
import torch
import torch.nn as nn


class MVTN(nn.Module):
    """Predicts the azimuth and elevation of each view from the point cloud."""

    def __init__(self, nb_views=4, n_points=16):
        super().__init__()
        self.nb_views = nb_views
        self.regressor = nn.Sequential(nn.Linear(n_points * 3, 32), nn.ReLU(), nn.Linear(32, 2 * nb_views), nn.Tanh())

    def forward(self, points, c_batch_size):
        offsets = self.regressor(points.reshape(c_batch_size, -1))
        azim, elev = offsets.chunk(2, dim=1)
        return azim * 180.0 / self.nb_views, elev * 90.0


class MVNetwork(nn.Module):
    """Encodes every rendered view and pools the views into one class score."""

    def __init__(self, num_classes=5, nb_views=4, n_points=16):
        super().__init__()
        self.nb_views = nb_views
        self.view_encoder = nn.Linear(n_points * 3 + 2, 24)
        self.classifier = nn.Linear(24, num_classes)

    def forward(self, points, azim, elev):
        b = points.shape[0]
        flat = points.reshape(b, 1, -1).expand(b, self.nb_views, -1)
        views = torch.cat([flat, azim.unsqueeze(-1) / 180.0, elev.unsqueeze(-1) / 90.0], dim=-1)
        feats = torch.relu(self.view_encoder(views)).max(dim=1)[0]
        return self.classifier(feats)


def train(data_loader, models_bag, criterion):
    total_loss = 0.0
    n = 0
    all_correct_points = 0
    all_points = 0
    models_bag["mvnetwork"].train()
    models_bag["mvtn"].train()
    for i, (targets, points) in enumerate(data_loader):
        c_batch_size = targets.shape[0]
        azim, elev = models_bag["mvtn"](points, c_batch_size=c_batch_size)
        outputs = models_bag["mvnetwork"](points, azim=azim, elev=elev)
        loss = criterion(outputs, targets)
        _, predicted = torch.max(outputs.data, 1)
        results = predicted == targets
        correct_points = torch.sum(results.long())
        all_correct_points += correct_points.item()
        all_points += results.size()[0]
        total_loss += loss
        n += 1
        models_bag["optimizer"].zero_grad()
        models_bag["mvtn_optimizer"].zero_grad()
        loss.backward()
        models_bag["optimizer"].step()
        models_bag["mvtn_optimizer"].step()
    avg_loss = total_loss / n
    avg_train_acc = all_correct_points / all_points
    return avg_train_acc, avg_loss


def observe():
    mvtn, mvnetwork = MVTN(), MVNetwork()
    models_bag = {
        "mvtn": mvtn,
        "mvnetwork": mvnetwork,
        "optimizer": torch.optim.AdamW(mvnetwork.parameters(), lr=1e-3),
        "mvtn_optimizer": torch.optim.AdamW(mvtn.parameters(), lr=1e-4),
    }
    loader = [(torch.randint(0, 5, (4,)), torch.randn(4, 16, 3)) for _ in range(3)]
    _, avg_loss = train(loader, models_bag, nn.CrossEntropyLoss())
    return {"kept": avg_loss}
