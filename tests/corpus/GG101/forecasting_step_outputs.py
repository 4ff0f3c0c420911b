# source: https://github.com/sktime/pytorch-forecasting/pull/1924
# label: GG101 24
# effect: graph_kept
# note: the model's training_step appends its log dict, loss tensor included, to training_step_outputs for the epoch end
import torch
from torch import nn


class BaseModel(nn.Module):
    def __init__(self, n_inputs, horizon):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_inputs, 16), nn.ReLU(), nn.Linear(16, horizon))
        self.loss = nn.L1Loss()
        self.training_step_outputs = []

    def forward(self, x):
        return {"prediction": self.net(x["encoder_cont"])}

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self(x)
        loss = self.loss(out["prediction"], y)
        log = {"loss": loss, "n_samples": x["encoder_cont"].size(0)}
        self.training_step_outputs.append(log)
        return log

    def on_train_epoch_end(self):
        self.training_step_outputs.clear()


def observe():
    model = BaseModel(6, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for i in range(3):
        batch = ({"encoder_cont": torch.randn(4, 6)}, torch.randn(4, 2))
        opt.zero_grad()
        model.training_step(batch, i)["loss"].backward()
        opt.step()
    return {"kept": [o["loss"] for o in model.training_step_outputs]}
