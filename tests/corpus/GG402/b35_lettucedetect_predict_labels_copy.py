# source: https://github.com/KRLabsOrg/LettuceDetect/pull/18
# label: GG402 58
# effect: warns "To copy construct from a tensor"
# note: TransformerDetector._predict() builds the label tensor with torch.full_like(...) and then copies it again with `labels = torch.tensor(labels, device=self.device)`, which warns on every prediction (the PR first used the recommended copy, then removed the line). The tokenizer and model are stand-ins for the Hugging Face ones
import torch
import torch.nn as nn


class CharTokenizer:
    def __call__(self, context, answer, max_length):
        ids = [min(ord(ch), 127) for ch in (context + "|" + answer)][:max_length]
        return {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}


class HallucinationDataset:
    @staticmethod
    def prepare_tokenized_input(tokenizer, context, answer, max_length):
        encoding = tokenizer(context, answer, max_length)
        answer_start_token = min(len(context) + 1, encoding["input_ids"].shape[1])
        offsets = [(i, i + 1) for i in range(encoding["input_ids"].shape[1])]
        return encoding, None, offsets, answer_start_token


class TokenClassifier(nn.Module):
    def __init__(self, vocab=128, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.classifier = nn.Linear(hidden, 2)

    def forward(self, input_ids, attention_mask):
        return self.classifier(self.embed(input_ids) * attention_mask.unsqueeze(-1))


class TransformerDetector:
    def __init__(self, model, tokenizer, max_length=64, device="cpu"):
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.device = device
        self.model.eval()

    def _predict(self, context: str, answer: str, output_format: str) -> list:
        # Use the shared tokenization logic from HallucinationDataset
        encoding, labels, offsets, answer_start_token = HallucinationDataset.prepare_tokenized_input(
            self.tokenizer, context, answer, self.max_length
        )

        # Create a label tensor: mark tokens before answer as -100 (ignored) and answer tokens as 0.
        labels = torch.full_like(encoding["input_ids"][0], -100, device=self.device)
        labels[answer_start_token:] = 0

        # Move encoding to the device
        encoding = {
            key: value.to(self.device)
            for key, value in encoding.items()
            if key in ["input_ids", "attention_mask", "labels"]
        }
        labels = torch.tensor(labels, device=self.device)

        # Run model inference
        with torch.no_grad():
            outputs = self.model(**encoding)
        logits = outputs
        token_preds = torch.argmax(logits, dim=-1)[0]
        probabilities = torch.softmax(logits, dim=-1)[0]

        # Mask out predictions for context tokens.
        token_preds = torch.where(labels == -100, labels, token_preds)

        if output_format == "tokens":
            return [
                {"token": i, "pred": token_preds[i].item(), "prob": probabilities[i, 1].item()}
                for i in range(len(token_preds)) if labels[i].item() != -100
            ]
        spans = []
        for i, (start, end) in enumerate(offsets):
            if labels[i].item() != -100 and token_preds[i].item() == 1:
                spans.append({"start": start, "end": end, "confidence": probabilities[i, 1].item()})
        return spans


def observe():
    detector = TransformerDetector(TokenClassifier(), CharTokenizer())
    detector._predict("The capital of France is Paris.", "It is Lyon.", "spans")
    return {}
