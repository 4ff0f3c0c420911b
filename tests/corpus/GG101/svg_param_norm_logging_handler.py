# source: https://github.com/d3sm0/svg/blob/3133d71c95812ad2b1c46820bea7332b69689e29/utils.py
# label: lookalike GG101
# effect: graph_kept
# note: a logging handler builds a dict of parameter norms (each p.norm() carries a graph) inside the call and writes only .item() values out; the dict dies with the call
import torch
import torch.nn as nn


class ScalarWriter:
    def __init__(self):
        self.scalars = []

    def add_scalar(self, tag, value, step):
        self.scalars.append((tag, value, step))


def log_param_norms(model, writer, step):
    norms = {}
    for name, p in model.named_parameters():
        if "bias" in name:
            continue
        norms[name] = p.norm()
    total = sum(norms.values())
    writer.add_scalar("param_norm/total", total.item(), step)
    for name, value in norms.items():
        writer.add_scalar(f"param_norm/{name}", value.item(), step)


def train(actor, batches, optimizer, writer, log_every=1):
    for step, (obs, target) in enumerate(batches):
        loss = nn.functional.mse_loss(actor(obs), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            log_param_norms(actor, writer, step)
            writer.add_scalar("loss", loss.item(), step)


def observe():
    actor = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    writer = ScalarWriter()
    train(actor, [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)],
          torch.optim.Adam(actor.parameters(), lr=1e-3), writer)
    return {"kept": [value for _, value, _ in writer.scalars]}
