# source: https://github.com/PyTorchLightning/PyTorch-Lightning-Bolts/blob/0.2.1/pl_bolts/callbacks/vision/image_generation.py
# label: lookalike GG103
# effect: graph_built
# note: a Callback of a GAN that trains samples images at every epoch end; it runs the generator inside `with torch.no_grad():` itself
import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch import Callback
from torch import nn


class TensorboardGenerativeModelImageSampler(Callback):
    def __init__(self, num_samples=3):
        super().__init__()
        self.num_samples = num_samples
        self.grids = []

    def on_train_epoch_end(self, trainer, pl_module):
        dim = (self.num_samples, pl_module.hparams.latent_dim)
        z = torch.normal(mean=0.0, std=1.0, size=dim, device=pl_module.device)
        with torch.no_grad():
            pl_module.eval()
            images = pl_module(z)
            pl_module.train()
        images = images.view(self.num_samples, *pl_module.img_dim)
        self.grids.append(images.clamp(-1, 1).add(1).div(2).cpu())


class TinyGAN(L.LightningModule):
    def __init__(self, latent_dim=4, img_dim=(1, 3, 3)):
        super().__init__()
        self.save_hyperparameters()
        self.img_dim = img_dim
        self.automatic_optimization = False
        self.generator = nn.Sequential(nn.Linear(latent_dim, 16), nn.ReLU(), nn.Linear(16, 9), nn.Tanh())
        self.discriminator = nn.Sequential(nn.Linear(9, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, z):
        return self.generator(z)

    def training_step(self, batch, batch_idx):
        (real,) = batch
        opt_g, opt_d = self.optimizers()
        z = torch.randn(real.size(0), self.hparams.latent_dim)
        g_loss = F.binary_cross_entropy_with_logits(self.discriminator(self(z)), torch.ones(real.size(0), 1))
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()
        fake = self(z).detach()
        d_loss = (F.binary_cross_entropy_with_logits(self.discriminator(real), torch.ones(real.size(0), 1))
                  + F.binary_cross_entropy_with_logits(self.discriminator(fake), torch.zeros(real.size(0), 1)))
        opt_d.zero_grad()
        self.manual_backward(d_loss)
        opt_d.step()

    def configure_optimizers(self):
        return (torch.optim.Adam(self.generator.parameters(), lr=2e-4),
                torch.optim.Adam(self.discriminator.parameters(), lr=2e-4))


def observe():
    from torch.utils.data import DataLoader, TensorDataset

    from corpus.oracle import hook_outputs

    model = TinyGAN()
    built = hook_outputs(model.generator, where=lambda inputs: inputs[0].shape[0] == 3)
    trainer = L.Trainer(accelerator="cpu", max_epochs=2, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False,
                        callbacks=[TensorboardGenerativeModelImageSampler(num_samples=3)])
    trainer.fit(model, DataLoader(TensorDataset(torch.randn(8, 9)), batch_size=4))
    return {"built": built}
