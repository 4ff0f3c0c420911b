# source: https://github.com/nianticlabs/monodepth2/issues/24
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: monodepth2's own Trainer.val(): the validation minibatch runs under torch.no_grad() and its losses are only logged; the training step back-propagates the losses process_batch() computes with grad on (the maintainers: removing the no_grad changes nothing as long as nothing is updated from it)
import torch
import torch.nn as nn
import torch.optim as optim


class ResnetEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())

    def forward(self, input_image):
        return [self.conv(input_image)]


class DepthDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.dispconv = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, input_features):
        return {("disp", 0): torch.sigmoid(self.dispconv(input_features[-1]))}


class Trainer:
    def __init__(self, learning_rate=1e-4, log_frequency=2):
        self.models = {"encoder": ResnetEncoder(), "depth": DepthDecoder()}
        self.parameters_to_train = []
        for m in self.models.values():
            self.parameters_to_train += list(m.parameters())
        self.model_optimizer = optim.Adam(self.parameters_to_train, learning_rate)
        self.log_frequency = log_frequency
        self.step = 0
        self.val_log = []

    def set_train(self):
        for m in self.models.values():
            m.train()

    def set_eval(self):
        for m in self.models.values():
            m.eval()

    def run_epoch(self, train_loader, val_loader):
        self.set_train()
        val_iter = iter(val_loader)
        for batch_idx, inputs in enumerate(train_loader):
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            losses["loss"].backward()
            self.model_optimizer.step()
            if batch_idx % self.log_frequency == 0:
                self.val(val_iter)
            self.step += 1

    def process_batch(self, inputs):
        features = self.models["encoder"](inputs[("color_aug", 0, 0)])
        outputs = self.models["depth"](features)
        losses = self.compute_losses(inputs, outputs)
        return outputs, losses

    def compute_losses(self, inputs, outputs):
        losses = {}
        disp = outputs[("disp", 0)]
        target = inputs[("color", 0, 0)]
        reprojection_loss = (disp - target.mean(1, keepdim=True)).abs().mean()
        mean_disp = disp.mean(2, True).mean(3, True)
        smooth_loss = (disp / (mean_disp + 1e-7)).diff(dim=-1).abs().mean()
        losses["loss"] = reprojection_loss + 1e-3 * smooth_loss
        return losses

    def log(self, mode, inputs, outputs, losses):
        self.val_log.append((mode, self.step, {k: v.item() for k, v in losses.items()}))

    def val(self, val_iter):
        """Validate the model on a single minibatch"""
        self.set_eval()
        inputs = next(val_iter)
        with torch.no_grad():
            outputs, losses = self.process_batch(inputs)
            self.log("val", inputs, outputs, losses)
            del inputs, outputs, losses
        self.set_train()


def observe():
    def batch():
        image = torch.rand(2, 3, 8, 8)
        return {("color_aug", 0, 0): image, ("color", 0, 0): image}

    trainer = Trainer()
    trainer.run_epoch([batch() for _ in range(2)], [batch() for _ in range(2)])
    return {}
