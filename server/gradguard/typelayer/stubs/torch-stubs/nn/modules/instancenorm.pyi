from typing import Any

from torch.nn.modules.module import Module

class InstanceNorm1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class InstanceNorm2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class InstanceNorm3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

