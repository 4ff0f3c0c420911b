# source: https://github.com/materialyzeai/matgl/issues/258
# label: lookalike GG402
# effect: warns "To copy construct from a tensor"
# note: the fix in matgl 0.8: roots[i].clone().detach() copies the row without the warning; torch.tensor(sqrt(...)) of a float is a plain construction
from math import sqrt

import torch

SPHERICAL_BESSEL_ROOTS = torch.tensor([
    [3.14159265, 6.28318531, 9.42477796],
    [4.49340942, 7.72525184, 10.90412166],
    [5.76345920, 9.09501133, 12.32294097],
])


def _j0(x):
    return torch.sin(x) / x


def _j1(x):
    return torch.sin(x) / x**2 - torch.cos(x) / x


def _j2(x):
    return (3 / x**2 - 1) * torch.sin(x) / x - 3 * torch.cos(x) / x**2


class SphericalBesselFunction:
    """Radial basis of spherical Bessel functions j_l(z_ln r / rc), normalised."""

    def __init__(self, max_l, max_n, cutoff=5.0):
        self.max_l = max_l
        self.max_n = max_n
        self.cutoff = cutoff
        self.funcs = [_j0, _j1, _j2]

    def __call__(self, r):
        r_c = r.clone()
        r_c[r_c > self.cutoff] = self.cutoff
        roots = SPHERICAL_BESSEL_ROOTS[: self.max_l, : self.max_n]

        results = []
        factor = torch.tensor(sqrt(2.0 / self.cutoff**3))
        for i in range(self.max_l):
            root = roots[i].clone().detach()
            func = self.funcs[i]
            func_add1 = self.funcs[i + 1]
            results.append(
                func(r_c[:, None] * root[None, :] / self.cutoff) * factor / torch.abs(func_add1(root[None, :]))
            )
        return torch.cat(results, dim=1)


def observe():
    rbf = SphericalBesselFunction(max_l=2, max_n=3, cutoff=5.0)
    return {"basis": rbf(torch.tensor([0.8, 2.5, 4.9, 6.0]))}
