# source: https://github.com/TRI-ML/packnet-sfm/pull/51
# label: lookalike GG101
# effect: graph_kept
# note: the PR's fix: the loss is detached before the output dict joins the epoch's outputs
import torch


def train_epoch(model, dataloader, optimizer, epoch):
    model.train()
    outputs = []
    for i, batch in enumerate(dataloader):
        optimizer.zero_grad()
        batch["epoch"] = epoch
        output = model(batch)
        output["loss"].backward()
        optimizer.step()
        output["loss"] = output["loss"].detach()
        outputs.append(output)
    return outputs


class SelfSupModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.depth_net = torch.nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, batch):
        depth = torch.sigmoid(self.depth_net(batch["rgb"]))
        photometric = (depth - batch["rgb"].mean(1, keepdim=True)).abs().mean()
        return {"loss": photometric, "metrics": {"depth_mean": depth.mean().item()}}


def observe():
    model = SelfSupModel()
    data = [{"rgb": torch.rand(2, 3, 8, 8)} for _ in range(3)]
    outputs = train_epoch(model, data, torch.optim.Adam(model.parameters(), lr=1e-3), 0)
    return {"kept": [o["loss"] for o in outputs]}
