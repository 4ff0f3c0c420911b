# source: https://github.com/Lightning-AI/pytorch-lightning/issues/655
# label: lookalike GG102
# effect: raises "Trying to backward through the graph a second time"
# note: the answer in the thread: keep the previous hidden state on self, but store detach_tensors(hidden), so each training_step back-propagates through its own batch only
import lightning as L
import torch
from torch import nn


def detach_tensors(tensors):
    return tuple(t.detach() for t in tensors)


class WordLM(L.LightningModule):
    def __init__(self, vocab_size=12, hidden_size=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self.decoder = nn.Linear(hidden_size, vocab_size)
        self.criterion = nn.CrossEntropyLoss()
        self.previous_hidden = None

    def forward(self, text, hidden=None):
        output, hidden = self.lstm(self.embedding(text), hidden)
        return self.decoder(output), hidden

    def training_step(self, batch, batch_idx):
        text, target = batch
        output, hidden = self(text, self.previous_hidden)
        self.previous_hidden = detach_tensors(hidden)
        loss = self.criterion(output.reshape(-1, output.size(-1)), target.reshape(-1))
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def observe():
    from torch.utils.data import DataLoader, TensorDataset

    text = torch.randint(0, 12, (6, 5))
    loader = DataLoader(TensorDataset(text, torch.roll(text, -1, dims=1)), batch_size=2)
    trainer = L.Trainer(accelerator="cpu", max_epochs=1, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(WordLM(), loader)
    return {}
