from typing import Any

from torch.nn.modules.module import Module

class MaxPool1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class MaxPool2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class MaxPool3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AvgPool1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AvgPool2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AvgPool3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AdaptiveAvgPool1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AdaptiveAvgPool2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AdaptiveAvgPool3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AdaptiveMaxPool1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AdaptiveMaxPool2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

