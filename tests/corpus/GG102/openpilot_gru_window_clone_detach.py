# source: https://github.com/OpenDriveLab/Openpilot-Deepdive/issues/6
# label: lookalike GG102
# effect: graph_grows
# note: the GRU hidden state is carried through the whole driving sequence but cut with hidden.clone().detach() every optimize_per_n_step frames, right where the accumulated loss is back-propagated (truncated BPTT); each batch starts from zeros
import torch
import torch.nn as nn
import torch.nn.functional as F


class SequencePlanningNetwork(nn.Module):
    def __init__(self, M, num_pts, in_features=24, hidden_size=32):
        super().__init__()
        self.M = M
        self.num_pts = num_pts
        self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(in_features, hidden_size), nn.ReLU())
        self.gru = nn.GRU(hidden_size, hidden_size, num_layers=2)
        self.plan_head = nn.Linear(hidden_size, M * (num_pts * 3 + 1))

    def forward(self, x, hidden):
        features = self.backbone(x).unsqueeze(0)
        out, hidden = self.gru(features, hidden)
        raw = self.plan_head(out[0])
        pred_cls = raw[:, : self.M]
        pred_trajectory = raw[:, self.M:].reshape(-1, self.M, self.num_pts, 3)
        return pred_cls, pred_trajectory, hidden


class MultipleTrajectoryPredictionLoss(nn.Module):
    def forward(self, pred_cls, pred_trajectory, gt):
        distances = (pred_trajectory - gt.unsqueeze(1)).abs().mean(dim=(2, 3))
        best = distances.argmin(dim=1)
        cls_loss = F.cross_entropy(pred_cls, best)
        best_traj = pred_trajectory[torch.arange(len(best)), best]
        reg_loss = F.smooth_l1_loss(best_traj, gt, reduction="none").mean(dim=(0, 1))
        return cls_loss, reg_loss


def train_one_epoch(model, loader, loss, optimizer, optimize_per_n_step=4, mtp_alpha=1.0):
    model.train()
    for batch_idx, data in enumerate(loader):
        seq_inputs, seq_labels = data["seq_input_img"], data["seq_future_poses"]
        bs = seq_labels.size(0)
        seq_length = seq_labels.size(1)

        hidden = torch.zeros((2, bs, 32))
        total_loss = 0
        for t in range(seq_length):
            inputs, labels = seq_inputs[:, t], seq_labels[:, t]
            pred_cls, pred_trajectory, hidden = model(inputs, hidden)
            cls_loss, reg_loss = loss(pred_cls, pred_trajectory, labels)
            total_loss += (cls_loss + mtp_alpha * reg_loss.mean()) / optimize_per_n_step

            if (t + 1) % optimize_per_n_step == 0:
                hidden = hidden.clone().detach()
                optimizer.zero_grad()
                total_loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                total_loss = 0

        if not isinstance(total_loss, int):
            optimizer.zero_grad()
            total_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()


def observe():
    from corpus.oracle import graph_size

    model = SequencePlanningNetwork(M=3, num_pts=5)
    per_step = []
    model.gru.register_forward_hook(lambda m, i, out: per_step.append(graph_size(out[1])))
    loader = [{"seq_input_img": torch.randn(2, 12, 6, 4), "seq_future_poses": torch.randn(2, 12, 5, 3)}
              for _ in range(2)]
    train_one_epoch(model, loader, MultipleTrajectoryPredictionLoss(),
                    torch.optim.SGD(model.parameters(), lr=1e-2), optimize_per_n_step=4)
    # the carried hidden state's graph at the start of every truncation window
    return {"sizes": per_step[::4]}
