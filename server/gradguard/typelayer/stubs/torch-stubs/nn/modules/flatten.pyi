from typing import Any

from torch.nn.modules.module import Module

class Flatten(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class Unflatten(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

