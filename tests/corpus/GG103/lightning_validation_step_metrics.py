# source: https://lightning.ai/docs/pytorch/1.5.0/_sources/common/lightning_module.rst.txt
# label: lookalike GG103
# effect: graph_built
# note: validation_step has no no_grad of its own and only logs a loss and an accuracy; the Trainer runs it with grad disabled
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn


class LitClassifier(L.LightningModule):
    def __init__(self, in_features=6, num_classes=3, learning_rate=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.backbone = nn.Sequential(nn.Linear(in_features, 16), nn.ReLU(), nn.Linear(16, num_classes))

    def forward(self, x):
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.backbone(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log("val_loss", loss)
        self.log("val_acc", acc)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)


def observe():
    from torch.utils.data import DataLoader, TensorDataset

    from corpus.oracle import hook_outputs

    model = LitClassifier()
    built = hook_outputs(model.backbone)
    trainer = L.Trainer(accelerator="cpu", logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    val_loader = DataLoader(TensorDataset(torch.randn(6, 6), torch.randint(0, 3, (6,))), batch_size=3)
    trainer.validate(model, dataloaders=val_loader, verbose=False)
    return {"built": built}
