from typing import Any

from torch.nn.modules.module import Module

class Upsample(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class UpsamplingNearest2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class UpsamplingBilinear2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

