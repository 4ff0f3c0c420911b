# source: https://lightning.ai/docs/pytorch/1.6.1/_sources/common/lightning_module.rst.txt
# label: lookalike GG103
# effect: graph_built
# note: test_step() and predict_step() run the network without a no_grad of their own and only return metrics / class indices; the Trainer runs them under inference mode
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn


class LitTagger(L.LightningModule):
    def __init__(self, in_features=6, num_tags=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_features, 16), nn.ReLU())
        self.tagger = nn.Linear(16, num_tags)

    def forward(self, x):
        return self.tagger(self.encoder(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def test_step(self, batch, batch_idx):
        x, y = batch
        scores = self.tagger(self.encoder(x))
        self.log("test_acc", (scores.argmax(dim=-1) == y).float().mean())

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        x, _ = batch
        return self(x).argmax(dim=-1).tolist()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def observe():
    from torch.utils.data import DataLoader, TensorDataset

    from corpus.oracle import hook_outputs

    model = LitTagger()
    built = hook_outputs(model.tagger)
    trainer = L.Trainer(accelerator="cpu", logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    loader = DataLoader(TensorDataset(torch.randn(6, 6), torch.randint(0, 3, (6,))), batch_size=3)
    trainer.test(model, dataloaders=loader, verbose=False)
    trainer.predict(model, dataloaders=loader)
    return {"built": built}
