# source: https://github.com/facebookresearch/SlowFast/pull/362
# label: lookalike GG103
# effect: no_grad
# note: the reviewer's answer to "no_grad in the visualization phase": Grad-CAM needs grads - the model's output score is back-propagated to read the target layer's gradients
import torch
import torch.nn as nn
import torch.nn.functional as F


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.gradients = {}
        self.activations = {}
        target_layer.register_forward_hook(self._save_activation)
        target_layer.register_full_backward_hook(self._save_gradient)

    def _save_activation(self, module, input, output):
        self.activations["value"] = output.detach()

    def _save_gradient(self, module, grad_input, grad_output):
        self.gradients["value"] = grad_output[0].detach()

    def _calculate_localization_map(self, inputs, labels=None):
        preds = self.model(inputs)
        if labels is None:
            score = torch.max(preds, dim=-1)[0]
        else:
            score = torch.gather(preds, dim=1, index=labels.unsqueeze(1))
        self.model.zero_grad()
        score = torch.sum(score)
        score.backward()
        weights = self.gradients["value"].mean(dim=-1, keepdim=True)
        localization_map = F.relu((weights * self.activations["value"]).sum(dim=1))
        return localization_map, preds

    def __call__(self, inputs, labels=None):
        localization_map, preds = self._calculate_localization_map(inputs, labels=labels)
        return localization_map.detach(), preds.detach()


def observe():
    model = nn.Sequential(nn.Conv1d(2, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 5, 3))
    model.eval()
    gradcam = GradCAM(model, model[1])
    gradcam(torch.randn(2, 2, 5), labels=torch.tensor([0, 2]))
    return {"params": [model[0].weight]}
