# source: https://github.com/nianticlabs/monodepth2/issues/24
# label: GG302 44
# effect: raises "element 0 of tensors does not require grad"
# note: a modified trainer back-propagates the validation losses, but val() computes them inside `with torch.no_grad():` ("It seems that you are trying to backpropagate on the validation set")
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, models, val_loader, learning_rate=1e-4):
        self.models = models
        self.parameters_to_train = [p for m in models.values() for p in m.parameters()]
        self.model_optimizer = torch.optim.Adam(self.parameters_to_train, learning_rate)
        self.val_loader = val_loader
        self.val_iter = iter(self.val_loader)

    def set_train(self):
        for m in self.models.values():
            m.train()

    def set_eval(self):
        for m in self.models.values():
            m.eval()

    def process_batch(self, inputs):
        features = self.models["encoder"](inputs["color"])
        outputs = {"disp": torch.sigmoid(self.models["depth"](features))}
        losses = {"loss": F.l1_loss(outputs["disp"], inputs["target"])}
        return outputs, losses

    def val(self):
        """Validate the model on a single minibatch"""
        self.set_eval()
        try:
            inputs = next(self.val_iter)
        except StopIteration:
            self.val_iter = iter(self.val_loader)
            inputs = next(self.val_iter)

        with torch.no_grad():
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            losses["loss"].backward()
            self.model_optimizer.step()
            del inputs, outputs, losses

        self.set_train()


def observe():
    models = {"encoder": nn.Linear(6, 8), "depth": nn.Linear(8, 1)}
    trainer = Trainer(models, [{"color": torch.randn(2, 6), "target": torch.rand(2, 1)}])
    trainer.val()
    return {}
