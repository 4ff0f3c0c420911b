# source: https://github.com/ray-project/ray/pull/40940
# label: GG101 20
# effect: graph_kept
# note: loss_sum += loss in the fine-tuning loop, reported as the epoch's mean: every step's graph stays reachable
import torch


def training_function(model, train_dataloader, optimizer, lr_scheduler, num_epochs):
    results = []
    for epoch in range(num_epochs):
        model.train()
        loss_sum = torch.tensor(0.0)
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs["loss"]
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            loss_sum += loss
        results.append({"epoch": epoch, "train_loss_mean": loss_sum / (step + 1)})
    return results


class TinyCausalLM(torch.nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, input_ids, labels):
        logits = self.head(self.embed(input_ids))
        return {"loss": torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()), "logits": logits}


def observe():
    model = TinyCausalLM()
    batches = [{"input_ids": torch.randint(0, 11, (2, 5)), "labels": torch.randint(0, 11, (2, 5))} for _ in range(3)]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    results = training_function(model, batches, opt, sched, 1)
    return {"kept": [r["train_loss_mean"] for r in results]}
