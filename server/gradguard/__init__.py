"""GradGuard: catches PyTorch's quiet autograd and storage mistakes."""

__version__ = "0.1.0"
