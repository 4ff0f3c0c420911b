# source: https://github.com/scraed/LanPaint/issues/38
# label: GG402 14
# effect: warns "To copy construct from a tensor"
# note: the sampler's sigmas are already a tensor: torch.tensor() copies them and warns on every call
import torch


class InpaintSampler:
    def __init__(self, model_sampling):
        self.model_sampling = model_sampling

    def schedule(self, sigmas):
        self.model_sigmas = torch.cat((torch.tensor([0.0], device=sigmas.device),
                                       torch.tensor(self.model_sampling.sigmas, device=sigmas.device)))
        return self.model_sigmas


def observe():
    class Sampling:
        sigmas = torch.linspace(0.1, 10.0, 5)

    return {"sigmas": InpaintSampler(Sampling()).schedule(torch.ones(3))}
