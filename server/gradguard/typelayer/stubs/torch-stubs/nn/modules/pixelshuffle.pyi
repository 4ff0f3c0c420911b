from typing import Any

from torch.nn.modules.module import Module

class PixelShuffle(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class PixelUnshuffle(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

