# source: https://github.com/taozh2017/HiNet/issues/11
# label: GG103 59
# effect: graph_built
# note: the synthesis model's test() runs self.generator over the test loader with grad on; its outputs only reach NumPy metrics (MSE, PSNR) collected into pred_eva_set
import numpy as np
import torch
from torch import nn


def prediction_syn_results(pred, target):
    pred_np = pred.detach().cpu().numpy()
    target_np = target.cpu().numpy()
    mse = float(np.mean((pred_np - target_np) ** 2))
    psnr = float(10 * np.log10(1.0 / max(mse, 1e-10)))
    return {"MSE": mse, "SSIM": float(np.corrcoef(pred_np.ravel(), target_np.ravel())[0, 1]), "PSNR": psnr}


def model_task(inputs, task_id):
    t1, t2, flair = inputs
    return [t1, t2, flair] if task_id == 1 else [t1, flair, t2]


class FusionGenerator(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.branch1 = nn.Linear(channels, channels)
        self.branch2 = nn.Linear(channels, channels)
        self.fusion = nn.Linear(2 * channels, channels)

    def forward(self, x_fusion):
        x1, x2 = x_fusion.chunk(2, dim=1)
        out1, out2 = self.branch1(x1), self.branch2(x2)
        return self.fusion(torch.cat([out1, out2], dim=1)), out1, out2


class HiNetSynthModel:
    def __init__(self, opt, generator):
        self.opt = opt
        self.generator = generator
        self.optimizer_G = torch.optim.Adam(self.generator.parameters(), lr=opt["lr"])

    def train(self, tr_loader):
        self.generator.train()
        for inputs in tr_loader:
            x_in1, x_in2, x_out = model_task(inputs, self.opt["task_id"])
            pred_out, pred_out1, pred_out2 = self.generator(torch.cat([x_in1, x_in2], dim=1))
            loss = (nn.functional.l1_loss(pred_out, x_out) + nn.functional.l1_loss(pred_out1, x_out)
                    + nn.functional.l1_loss(pred_out2, x_out))
            self.optimizer_G.zero_grad()
            loss.backward()
            self.optimizer_G.step()

    def test(self, ind_epoch, te_loader):
        self.generator.eval()
        pred_eva_set = []
        for ii, inputs in enumerate(te_loader):
            [x_in1, x_in2, x_out] = model_task(inputs, self.opt["task_id"])
            x_fusion = torch.cat([x_in1, x_in2], dim=1)
            pred_out, pred_out1, pred_out2 = self.generator(x_fusion)
            errors = prediction_syn_results(pred_out, x_out)
            pred_eva_set.append([errors['MSE'], errors['SSIM'], errors['PSNR']])
        pred_eva_set = np.array(pred_eva_set)
        return [ind_epoch, pred_eva_set[:, 0].mean(), pred_eva_set[:, 1].mean(), pred_eva_set[:, 2].mean()]


def observe():
    from corpus.oracle import hook_outputs

    generator = FusionGenerator()
    model = HiNetSynthModel({"lr": 1e-3, "task_id": 1}, generator)
    loader = [(torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4)) for _ in range(2)]
    model.train(loader)
    built = hook_outputs(generator)
    model.test(1, loader)
    return {"built": built}
