from typing import Any

from torch.nn.modules.module import Module

class Transformer(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class TransformerEncoder(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class TransformerDecoder(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class TransformerEncoderLayer(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class TransformerDecoderLayer(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

