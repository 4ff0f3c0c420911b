from typing import Any

from torch.nn.modules.module import Module

class Embedding(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

class EmbeddingBag(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

