from typing import Any

from torch._tensor import Tensor

class Parameter(Tensor):
    def __init__(self, data: Any = ..., requires_grad: bool = ...) -> None: ...

class Buffer(Tensor):
    def __init__(self, data: Any = ..., persistent: bool = ...) -> None: ...
