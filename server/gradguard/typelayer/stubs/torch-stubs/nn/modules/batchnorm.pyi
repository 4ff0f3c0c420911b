from typing import Any

from torch.nn.modules.module import Module

class BatchNorm1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class BatchNorm2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class BatchNorm3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class SyncBatchNorm(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

