# source: https://github.com/namisan/mt-dnn/pull/92
# label: lookalike GG103
# effect: graph_built
# note: MTDNNModel.predict() has no no_grad of its own, but the prediction entry point loads the checkpoint with torch.load and calls eval_model() inside `with torch.no_grad():` ("turn off autograd during inference")
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SANBertNetwork(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.embeddings = nn.Embedding(opt["vocab_size"], opt["hidden_size"])
        self.pooler = nn.Sequential(nn.Linear(opt["hidden_size"], opt["hidden_size"]), nn.Tanh())
        self.scoring = nn.Linear(opt["hidden_size"], opt["label_size"])

    def forward(self, input_ids, attention_mask):
        h = self.embeddings(input_ids) * attention_mask.unsqueeze(-1)
        pooled = self.pooler(h.sum(1) / attention_mask.sum(1, keepdim=True))
        return self.scoring(pooled)


class MTDNNModel:
    def __init__(self, opt, state_dict=None):
        self.config = opt
        self.network = SANBertNetwork(opt)
        if state_dict:
            self.network.load_state_dict(state_dict["state"], strict=False)
        self.optimizer = torch.optim.Adamax(self.network.parameters(), lr=opt["learning_rate"])

    def update(self, batch_meta, batch_data):
        self.network.train()
        logits = self.network(batch_data["input_ids"], batch_data["attention_mask"])
        loss = F.cross_entropy(logits, batch_data["label"])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def predict(self, batch_meta, batch_data):
        self.network.eval()
        score = self.network(batch_data["input_ids"], batch_data["attention_mask"])
        score = F.softmax(score, dim=1).data.cpu().numpy()
        predict = np.argmax(score, axis=1).tolist()
        return score.tolist(), predict, batch_meta["label"]


def calc_metrics(golds, predictions):
    return {"ACC": 100.0 * float(np.mean(np.asarray(golds) == np.asarray(predictions)))}


def eval_model(model, data, with_label=True):
    predictions, golds, scores, ids = [], [], [], []
    for batch_meta, batch_data in data:
        score, pred, gold = model.predict(batch_meta, batch_data)
        predictions.extend(pred)
        golds.extend(gold)
        scores.extend(score)
        ids.extend(batch_meta["uids"])
    metrics = calc_metrics(golds, predictions) if with_label else {}
    return metrics, predictions, scores, golds, ids


def load_model(checkpoint_path):
    state_dict = torch.load(checkpoint_path, map_location="cpu")
    config = state_dict["config"]
    return MTDNNModel(config, state_dict=state_dict)


def predict_task(model, test_data, with_label=True):
    with torch.no_grad():
        test_metrics, test_predictions, scores, golds, test_ids = eval_model(model, test_data, with_label=with_label)

    return {"metrics": test_metrics, "predictions": test_predictions, "uids": test_ids, "scores": scores}


def observe():
    import io

    from corpus.oracle import hook_outputs

    config = {"vocab_size": 30, "hidden_size": 8, "label_size": 3, "learning_rate": 5e-5}
    buf = io.BytesIO()
    torch.save({"config": config, "state": SANBertNetwork(config).state_dict()}, buf)
    buf.seek(0)
    model = load_model(buf)
    built = hook_outputs(model.network)
    data = []
    for b in range(3):
        ids = torch.randint(0, 30, (2, 5))
        data.append(({"label": [0, 2], "uids": ["%d-0" % b, "%d-1" % b]},
                     {"input_ids": ids, "attention_mask": torch.ones(2, 5)}))
    predict_task(model, data)
    assert built, "the network never ran"
    return {"built": built}
