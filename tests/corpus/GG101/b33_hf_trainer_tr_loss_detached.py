# source: https://github.com/huggingface/transformers/pull/6999
# label: lookalike GG101
# effect: graph_kept
# note: the PR's fix: training_step() returns loss.detach(), so the running tr_loss tensor sums plain values (and stays on the device without an .item() sync every step)
import torch
import torch.nn as nn
import torch.nn.functional as F


class TrainingArguments:
    def __init__(self, num_train_epochs=1, gradient_accumulation_steps=1, logging_steps=2, max_grad_norm=1.0):
        self.num_train_epochs = num_train_epochs
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.logging_steps = logging_steps
        self.max_grad_norm = max_grad_norm


class TinyClassifier(nn.Module):
    def __init__(self, vocab_size=20, dim=8, num_labels=2):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim)
        self.head = nn.Linear(dim, num_labels)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids))
        if labels is None:
            return (logits,)
        return (F.cross_entropy(logits, labels), logits)


class Trainer:
    def __init__(self, model, args, train_dataloader, optimizer):
        self.model = model
        self.args = args
        self.train_dataloader = train_dataloader
        self.optimizer = optimizer
        self.global_step = 0
        self.log_history = []

    def training_step(self, model, inputs):
        model.train()
        outputs = model(**inputs)
        loss = outputs[0]
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss.detach()

    def train(self):
        model = self.model
        tr_loss = torch.tensor(0.0)
        logging_loss_scalar = 0.0
        model.zero_grad()
        for _epoch in range(self.args.num_train_epochs):
            for step, inputs in enumerate(self.train_dataloader):
                tr_loss += self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    model.zero_grad()
                    self.global_step += 1
                    if self.global_step % self.args.logging_steps == 0:
                        tr_loss_scalar = tr_loss.item()
                        self.log_history.append(
                            {"loss": (tr_loss_scalar - logging_loss_scalar) / self.args.logging_steps,
                             "step": self.global_step})
                        logging_loss_scalar = tr_loss_scalar
        return self.global_step, tr_loss.item() / self.global_step


def observe():
    import sys

    model = TinyClassifier()
    loader = [{"input_ids": torch.randint(0, 20, (4, 5)), "labels": torch.randint(0, 2, (4,))} for _ in range(4)]
    trainer = Trainer(model, TrainingArguments(), loader, torch.optim.SGD(model.parameters(), lr=0.1))
    seen = {}

    def profile(frame, event, _arg):
        if event == "return" and frame.f_code is Trainer.train.__code__:
            seen["tr_loss"] = frame.f_locals["tr_loss"]

    sys.setprofile(profile)
    try:
        trainer.train()
    finally:
        sys.setprofile(None)
    return {"kept": seen["tr_loss"]}
