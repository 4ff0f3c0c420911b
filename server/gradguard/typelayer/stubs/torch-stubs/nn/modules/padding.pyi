from typing import Any

from torch.nn.modules.module import Module

class ZeroPad2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class ConstantPad1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class ConstantPad2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class ReflectionPad1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class ReflectionPad2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class ReplicationPad2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

