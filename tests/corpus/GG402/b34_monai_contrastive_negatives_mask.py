# source: https://github.com/Project-MONAI/MONAI/issues/3872
# label: GG402 37
# effect: warns "To copy construct from a tensor"
# note: MONAI's ContrastiveLoss built its negatives mask with ~torch.eye(...) and then converted it with torch.tensor(negatives_mask, dtype=torch.float): a copy-construct of a tensor that warns on every call (the issue; PR 3873 removed the duplicate conversions)
import torch
from torch.nn import functional as F
from torch.nn.modules.loss import _Loss


class ContrastiveLoss(_Loss):
    """
    Compute the Contrastive loss defined in:

        Chen, Ting, et al. "A simple framework for contrastive learning of visual representations."
    """

    def __init__(self, temperature: float = 0.5, batch_size: int = 1) -> None:
        super().__init__()
        self.batch_size = batch_size
        self.temperature = temperature

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if len(target.shape) > 2 or len(input.shape) > 2:
            raise ValueError(
                f"Either target or input has dimensions greater than 2 where target "
                f"shape is ({target.shape}) and input shape is ({input.shape})"
            )
        if target.shape != input.shape:
            raise ValueError(f"ground truth has differing shape ({target.shape}) from input ({input.shape})")

        temperature_tensor = torch.tensor(self.temperature).to(input.device)

        norm_i = F.normalize(input, dim=1)
        norm_j = F.normalize(target, dim=1)

        negatives_mask = ~torch.eye(self.batch_size * 2, self.batch_size * 2, dtype=torch.bool)
        negatives_mask = torch.tensor(negatives_mask, dtype=torch.float)
        negatives_mask = torch.clone(torch.as_tensor(negatives_mask)).to(input.device)

        repr = torch.cat([norm_i, norm_j], dim=0)
        sim_matrix = F.cosine_similarity(repr.unsqueeze(1), repr.unsqueeze(0), dim=2)
        sim_ij = torch.diag(sim_matrix, self.batch_size)
        sim_ji = torch.diag(sim_matrix, -self.batch_size)

        positives = torch.cat([sim_ij, sim_ji], dim=0)
        nominator = torch.exp(positives / temperature_tensor)
        denominator = negatives_mask * torch.exp(sim_matrix / temperature_tensor)

        loss_partial = -torch.log(nominator / torch.sum(denominator, dim=1))

        return torch.sum(loss_partial) / (2 * self.batch_size)


def observe():
    inp = torch.randn([2, 10])
    target = torch.randn([2, 10])
    loss = ContrastiveLoss(batch_size=2)
    loss(inp, target)
    return {}
