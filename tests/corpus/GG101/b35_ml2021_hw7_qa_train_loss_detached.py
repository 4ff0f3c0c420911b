# source: https://github.com/pai4451/ML2021/issues/2
# label: lookalike GG101
# effect: graph_kept
# note: the fix from the thread: `train_loss += output.loss.detach()` - the window sum is a tensor with no graph, read with .item() at the log line
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

QuestionAnsweringModelOutput = namedtuple("QuestionAnsweringModelOutput", ["loss", "start_logits", "end_logits"])


class BertForQuestionAnswering(nn.Module):
    def __init__(self, vocab_size=30, hidden_size=16):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden_size)
        self.token_type_embeddings = nn.Embedding(2, hidden_size)
        self.encoder = nn.Linear(hidden_size, hidden_size)
        self.qa_outputs = nn.Linear(hidden_size, 2)

    def forward(self, input_ids, token_type_ids, attention_mask, start_positions=None, end_positions=None):
        h = self.embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        h = torch.tanh(self.encoder(h)) * attention_mask.unsqueeze(-1)
        start_logits, end_logits = self.qa_outputs(h).split(1, dim=-1)
        start_logits, end_logits = start_logits.squeeze(-1), end_logits.squeeze(-1)
        loss = None
        if start_positions is not None and end_positions is not None:
            loss = (F.cross_entropy(start_logits, start_positions) + F.cross_entropy(end_logits, end_positions)) / 2
        return QuestionAnsweringModelOutput(loss, start_logits, end_logits)


def train(model, train_loader, optimizer, num_epoch=1, logging_step=100, device="cpu"):
    model.train()
    print("Start Training ...")
    train_loss = train_acc = 0
    for epoch in range(num_epoch):
        step = 1
        train_loss = train_acc = 0
        for data in train_loader:
            data = [i.to(device) for i in data]
            output = model(input_ids=data[0], token_type_ids=data[1], attention_mask=data[2],
                           start_positions=data[3], end_positions=data[4])
            start_index = torch.argmax(output.start_logits, dim=1)
            end_index = torch.argmax(output.end_logits, dim=1)
            train_acc += ((start_index == data[3]) & (end_index == data[4])).float().mean()
            train_loss += output.loss.detach()
            output.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step % logging_step == 0:
                print(f"Epoch {epoch + 1} | Step {step} | loss = {train_loss.item() / logging_step:.3f}, "
                      f"acc = {train_acc / logging_step:.3f}")
                train_loss = train_acc = 0
    return train_loss, train_acc


def observe():
    model = BertForQuestionAnswering()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = [(torch.randint(0, 30, (2, 8)), torch.randint(0, 2, (2, 8)), torch.ones(2, 8),
               torch.randint(0, 8, (2,)), torch.randint(0, 8, (2,))) for _ in range(3)]
    train_loss, _ = train(model, loader, optimizer)
    return {"kept": train_loss}
