from typing import Any

from torch.nn.modules.module import Module

class Conv1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class Conv2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class Conv3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class ConvTranspose1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class ConvTranspose2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class ConvTranspose3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class LazyConv1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class LazyConv2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class LazyConv3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

