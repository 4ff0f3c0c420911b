from typing import Any

from torch.nn.modules.module import Module

class Identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class Linear(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class Bilinear(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class LazyLinear(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

