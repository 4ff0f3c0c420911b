# source: https://github.com/ferdous-alam/GenCAD/issues/24
# label: GG103 25
# effect: graph_built
# note: the trainer's validation epoch asks the model for its loss with grad on: each batch builds (and keeps until the next) a full training graph - the OOM "when the validation step kicks in"
import torch


class CCIPTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train_one_epoch(self, loader):
        self.model.train()
        for batch_cad, batch_image in loader:
            self.optimizer.zero_grad()
            loss = self.model(batch_cad, batch_image)
            loss.backward()
            self.optimizer.step()

    def val_one_epoch(self, loader):
        self.model.eval()
        total = 0.0
        for batch_cad, batch_image in loader:
            loss = self.model(batch_cad, batch_image)
            total += loss.item()
        return total / len(loader)


class Contrastive(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cad = torch.nn.Linear(4, 3)
        self.image = torch.nn.Linear(5, 3)

    def forward(self, cad, image):
        return -(self.cad(cad) * self.image(image)).sum(1).mean()


def observe():
    from corpus.oracle import hook_outputs

    torch.manual_seed(0)
    model = Contrastive()
    built = hook_outputs(model)
    trainer = CCIPTrainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
    trainer.val_one_epoch([(torch.randn(2, 4), torch.randn(2, 5)) for _ in range(2)])
    return {"built": built}
