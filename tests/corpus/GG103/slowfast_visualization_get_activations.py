# source: https://github.com/facebookresearch/SlowFast/pull/362
# label: GG103 42
# effect: graph_built
# note: the visualization phase runs the model with grad on to record (detached) activations and plot top-k predictions; only the Grad-CAM branch needs gradients, and it makes its own forward
import torch
from torch import nn


class GetWeightAndActivation:
    """Register forward hooks on the given layers to read their activations."""

    def __init__(self, model, layers):
        self.model = model
        self.hooks = {}
        self.layers_names = layers
        self.model.eval()
        self._register_hooks()

    def _get_layer(self, layer_name):
        layer_ls = layer_name.split("/")
        prev_module = self.model
        for layer in layer_ls:
            prev_module = prev_module._modules[layer]
        return prev_module

    def _register_single_hook(self, layer_name):
        def hook_fn(module, input, output):
            self.hooks[layer_name] = output.clone().detach()

        layer = self._get_layer(layer_name)
        layer.register_forward_hook(hook_fn)

    def _register_hooks(self):
        for layer_name in self.layers_names:
            self._register_single_hook(layer_name)

    def get_activations(self, input, bboxes=None):
        input_clone = [inp.clone() for inp in input]
        if bboxes is not None:
            preds = self.model(input_clone, bboxes)
        else:
            preds = self.model(input_clone)
        activation_dict = {}
        for layer_name, hook in self.hooks.items():
            activation_dict[layer_name] = hook
        return activation_dict, preds


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.acts = {}
        target_layer.register_forward_hook(lambda m, i, o: self.acts.update(out=o))

    def __call__(self, inputs, labels):
        preds = self.model(inputs)
        score = preds.gather(1, labels.view(-1, 1)).sum()
        grads = torch.autograd.grad(score, self.acts["out"])[0]
        cam = torch.relu((grads.mean(0, keepdim=True) * self.acts["out"]).sum(1))
        return cam.detach(), preds.detach()


class TwoPathway(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.s1 = nn.Linear(6, 8)
        self.s2 = nn.Linear(6, 8)
        self.head = nn.Linear(16, num_classes)

    def forward(self, inputs):
        slow, fast = inputs
        return self.head(torch.cat([self.s1(slow).relu(), self.s2(fast).relu()], dim=1)).softmax(1)


class TensorboardWriter:
    def __init__(self):
        self.records = []

    def plot_eval(self, preds, labels):
        self.records.append((preds.topk(2, dim=1).indices.tolist(), labels.tolist()))

    def add_activations(self, activations):
        self.records.append({k: float(v.norm()) for k, v in activations.items()})


def run_visualization(vis_loader, model, layer_ls, grad_cam=False, writer=None):
    model_vis = GetWeightAndActivation(model, layer_ls)
    if grad_cam:
        gradcam = GradCAM(model, model.head)
    for inputs, labels in vis_loader:
        activations, preds = model_vis.get_activations(inputs)
        if grad_cam:
            cams, preds = gradcam(inputs, labels=labels)
        if writer is not None:
            writer.add_activations(activations)
            writer.plot_eval(preds, labels)
    return writer


def observe():
    from corpus.oracle import hook_outputs

    model = TwoPathway()
    built = hook_outputs(model)
    loader = [([torch.randn(3, 6), torch.randn(3, 6)], torch.tensor([0, 4, 2])) for _ in range(2)]
    run_visualization(loader, model, ["s1", "s2"], grad_cam=False, writer=TensorboardWriter())
    return {"built": built}
