# source: https://github.com/facebookresearch/moco/blob/main/moco/builder.py
# label: lookalike GG104
# effect: raises "Trying to backward through the graph a second time"
# note: MoCo's forward writes the keys into self.queue through _dequeue_and_enqueue(), decorated @torch.no_grad(); the next batch reads the queue without reaching this one
import torch
import torch.nn.functional as F
from torch import nn


class MoCo(nn.Module):
    def __init__(self, base_encoder, dim=8, K=12, m=0.999, T=0.07):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = base_encoder(num_classes=dim)
        self.encoder_k = base_encoder(num_classes=dim)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        batch_size = keys.shape[0]
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + batch_size] = keys.T
        self.queue_ptr[0] = (ptr + batch_size) % self.K

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self._dequeue_and_enqueue(k)
        return logits, labels


class TinyEncoder(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(12, num_classes))

    def forward(self, x):
        return self.net(x)


def observe():
    model = MoCo(TinyEncoder)
    opt = torch.optim.SGD(model.parameters(), lr=0.03)
    for _ in range(3):
        img = torch.randn(4, 3, 2, 2)
        output, target = model(img + 0.1 * torch.randn_like(img), img)
        opt.zero_grad()
        F.cross_entropy(output, target).backward()
        opt.step()
    return {}
