from typing import Any

from torch.nn.modules.module import Module

class Dropout(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class Dropout1d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class Dropout2d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class Dropout3d(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class AlphaDropout(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

