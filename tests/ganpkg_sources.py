"""The sample package both project-wide test files build (tests/cli/test_project.py through the CLI,
tests/lsp/test_lsp_project.py through the server): a model whose `generate()` calls `.numpy()`, and its
only caller, under `@torch.no_grad()`."""

NET = """\
import torch
from torch import nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, z):
        return self.fc(z)

    def generate(self, n):
        z = torch.randn(n, 8)
        return self.forward(z).numpy()


def create_model():
    return Generator()
"""

SAMPLE = """\
import torch

from ganpkg.models import Generator


@torch.no_grad()
def main():
    g = Generator()
    print(g.generate(4))


if __name__ == "__main__":
    main()
"""
