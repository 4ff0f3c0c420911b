from typing import Any

from torch.nn.modules.module import Module

class LayerNorm(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class GroupNorm(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class LocalResponseNorm(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class RMSNorm(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

