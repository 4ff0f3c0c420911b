# source: https://github.com/sktime/pytorch-forecasting/pull/1924
# label: GG101 25
# effect: graph_kept
# note: training_step() appends its log dict (the loss and the prediction, with their graphs) to self.training_step_outputs for the epoch-end aggregation; every batch's graph is kept for the whole epoch (the PR detaches the log before appending)
import torch
import torch.nn as nn


class BaseModel(nn.Module):
    def __init__(self, loss=None):
        super().__init__()
        self.loss = loss if loss is not None else nn.L1Loss()
        self.training_step_outputs = []
        self.epoch_losses = []

    def step(self, x, y, batch_idx):
        prediction = self(x)
        loss = self.loss(prediction, y)
        log = {"loss": loss, "n_samples": x["encoder_cont"].size(0), "prediction": prediction}
        return log, prediction

    def training_step(self, batch, batch_idx):
        x, y = batch
        log, _out = self.step(x, y, batch_idx)
        self.training_step_outputs.append(log)
        return log

    def on_train_epoch_end(self):
        losses = torch.stack([out["loss"] for out in self.training_step_outputs])
        self.epoch_losses.append(losses.mean().item())
        self.training_step_outputs.clear()


class LinearForecaster(BaseModel):
    def __init__(self, encoder_length=6, n_features=2, horizon=3):
        super().__init__()
        self.net = nn.Linear(encoder_length * n_features, horizon)

    def forward(self, x):
        return self.net(x["encoder_cont"].flatten(1))


def observe():
    model = LinearForecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    batches = [({"encoder_cont": torch.randn(4, 6, 2)}, torch.randn(4, 3)) for _ in range(3)]
    for batch_idx, batch in enumerate(batches):  # what Lightning's fit loop does with the returned log
        log = model.training_step(batch, batch_idx)
        optimizer.zero_grad()
        log["loss"].backward()
        optimizer.step()
    return {"kept": list(model.training_step_outputs)}
