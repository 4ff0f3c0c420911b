from typing import Any

from torch.optim.optimizer import Optimizer

class Adadelta(Optimizer):
    def __init__(self, params: Any, *args: Any, **kwargs: Any) -> None: ...
