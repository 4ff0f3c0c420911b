# source: https://github.com/allenai/longformer/issues/36
# label: lookalike GG101
# effect: graph_kept
# note: the page loop from the thread (output_vec.append(output[1]) per document), run the way the answer says: eval() and torch.no_grad() around the forwards, so the pooled vectors kept for all 2200 pages carry no activations
import torch
import torch.nn as nn


class CharTokenizer:
    cls_token, eos_token, pad_token_id = "\x02", "\x03", 0

    def encode(self, text):
        return [min(ord(c), 127) + 1 for c in text]


class TinyLongformer(nn.Module):
    def __init__(self, vocab_size=130, hidden=16, attention_window=8):
        super().__init__()
        self.attention_window = attention_window
        self.embeddings = nn.Embedding(vocab_size, hidden, padding_idx=0)
        self.layer = nn.TransformerEncoderLayer(hidden, nhead=2, dim_feedforward=32, batch_first=True)
        self.pooler = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())

    def forward(self, input_ids, attention_mask):
        hidden_states = self.layer(self.embeddings(input_ids), src_key_padding_mask=attention_mask == 0)
        return hidden_states, self.pooler(hidden_states[:, 0])


def pad_to_window_size(input_ids, attention_mask, one_sided_window_size, pad_token_id):
    w = 2 * one_sided_window_size
    padding_len = (w - input_ids.size(1) % w) % w
    input_ids = nn.functional.pad(input_ids, (0, padding_len), value=pad_token_id)
    attention_mask = nn.functional.pad(attention_mask, (0, padding_len), value=0)
    return input_ids, attention_mask


def page_vectors(model, tokenizer, pages):
    model.eval()
    output_vec = []
    with torch.no_grad():
        for pg in pages:
            pg = f"{tokenizer.cls_token}{pg}{tokenizer.eos_token}"
            input_ids = torch.tensor(tokenizer.encode(pg)).unsqueeze(0)  # batch of size 1
            attention_mask = torch.ones(input_ids.shape, dtype=torch.long, device=input_ids.device)
            input_ids, attention_mask = pad_to_window_size(
                input_ids, attention_mask, model.attention_window // 2, tokenizer.pad_token_id)
            output = model(input_ids, attention_mask=attention_mask)
            output_vec.append(output[1])
    return output_vec


def observe():
    pages = ["a long document about autograd", "another page", "the third page of the report"]
    return {"kept": page_vectors(TinyLongformer(), CharTokenizer(), pages)}
