# source: https://github.com/NVIDIA/DeepLearningExamples/issues/1102
# label: GG101 78
# effect: graph_kept
# note: BERT pretraining keeps its running loss on the device in a sync-free stats object and adds each step's loss in place, `stats.device_stat('average_loss').add_(loss)`; the stat tensor takes on the loss's graph and keeps every step's nodes (even zero_() after a log line only chains onto them: host RAM grows until the run dies). The reporter's change: add_(loss.clone().detach()). SyncFreeStats and the loop are reconstructed from the lines, cut down to CPU
import torch
import torch.nn as nn
import torch.nn.functional as F


class SyncFreeStats:
    def __init__(self):
        self.host_stats = {}
        self.device_stats = {}
        self.device_funcs = {}

    def add_stat(self, name, dtype=torch.int32, device_tensor=None, device_func=None):
        if device_tensor is not None:
            assert dtype == device_tensor.dtype, "Error: dtype do not match: {} {}".format(dtype, device_tensor.dtype)
        self.host_stats[name] = torch.zeros(1, dtype=dtype)
        self.device_stats[name] = device_tensor
        self.device_funcs[name] = device_func

    def copy_from_device(self):
        for name in self.host_stats.keys():
            if self.device_stats[name] is not None and self.device_funcs[name] is not None:
                self.host_stats[name].copy_(self.device_funcs[name](self.device_stats[name]), non_blocking=True)
            elif self.device_stats[name] is not None:
                self.host_stats[name].copy_(self.device_stats[name], non_blocking=True)
            elif self.device_funcs[name] is not None:
                self.host_stats[name].copy_(self.device_funcs[name](), non_blocking=True)

    def host_stat_value(self, name):
        return self.host_stats[name].item()

    def device_stat(self, name):
        assert self.device_stats[name] is not None
        return self.device_stats[name]


class BertPretrainingCriterion(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.vocab_size = vocab_size

    def forward(self, prediction_scores, seq_relationship_score, masked_lm_labels, next_sentence_labels):
        masked_lm_loss = F.cross_entropy(prediction_scores.view(-1, self.vocab_size), masked_lm_labels.view(-1),
                                         ignore_index=-1)
        next_sentence_loss = F.cross_entropy(seq_relationship_score.view(-1, 2), next_sentence_labels.view(-1))
        return masked_lm_loss + next_sentence_loss


class BertForPreTraining(nn.Module):
    def __init__(self, vocab_size=20, hidden=16):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden)
        self.encoder = nn.Linear(hidden, hidden)
        self.cls = nn.Linear(hidden, vocab_size)
        self.seq_relationship = nn.Linear(hidden, 2)

    def forward(self, input_ids):
        h = torch.tanh(self.encoder(self.embeddings(input_ids)))
        return self.cls(h), self.seq_relationship(h[:, 0])


def take_training_step(args, model, criterion, batch, stats):
    prediction_scores, seq_relationship_score = model(batch["input_ids"])
    loss = criterion(prediction_scores, seq_relationship_score, batch["labels"], batch["next_sentence_labels"])
    loss = loss / args["gradient_accumulation_steps"]
    loss.backward()
    return loss


def train(args, model, optimizer, train_dataloader, stats):
    criterion = BertPretrainingCriterion(args["vocab_size"])
    model.train()
    for step, batch in enumerate(train_dataloader):
        loss = take_training_step(args, model, criterion, batch, stats)
        stats.device_stat('average_loss').add_(loss)
        if (step + 1) % args["gradient_accumulation_steps"] == 0:
            optimizer.step()
            optimizer.zero_grad()
        if (step + 1) % args["log_freq"] == 0:
            stats.copy_from_device()
            print("Step:{} Average Loss = {}".format(step + 1, stats.host_stat_value('average_loss') / args["log_freq"]))
            stats.device_stat('average_loss').zero_()


def observe():
    args = {"vocab_size": 20, "gradient_accumulation_steps": 1, "log_freq": 2}
    model = BertForPreTraining()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    stats = SyncFreeStats()
    stats.add_stat('average_loss', dtype=torch.float32, device_tensor=torch.zeros(1, dtype=torch.float32))
    loader = [{"input_ids": torch.randint(0, 20, (2, 6)), "labels": torch.randint(0, 20, (2, 6)),
               "next_sentence_labels": torch.randint(0, 2, (2,))} for _ in range(5)]
    train(args, model, optimizer, loader, stats)
    return {"kept": stats.device_stat('average_loss')}
