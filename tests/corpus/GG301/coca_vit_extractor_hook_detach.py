# source: https://github.com/lucidrains/CoCa-pytorch/issues/6
# label: GG301 32
# effect: no_grad
# note: CoCa reads the image tokens through vit_pytorch's Extractor, whose forward hook saves `output.clone().detach()`: the captioning and contrastive losses never reach the image encoder, which the optimizer holds but never updates
import torch
import torch.nn.functional as F
from torch import nn


class ViT(nn.Module):
    def __init__(self, patch_dim=12, dim=8, num_classes=5):
        super().__init__()
        self.to_patch_embedding = nn.Linear(patch_dim, dim)
        self.transformer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, batch_first=True)
        self.mlp_head = nn.Linear(dim, num_classes)

    def forward(self, patches):
        x = self.transformer(self.to_patch_embedding(patches))
        return self.mlp_head(x.mean(dim=1))


class Extractor(nn.Module):
    def __init__(self, vit, layer_name='transformer', return_embeddings_only=False):
        super().__init__()
        self.vit = vit
        self.latents = None
        self.hook_registered = False
        self.layer_name = layer_name
        self.return_embeddings_only = return_embeddings_only

    def _hook(self, _, inputs, output):
        self.latents = output.clone().detach()

    def _register_hook(self):
        layer = getattr(self.vit, self.layer_name)
        layer.register_forward_hook(self._hook)
        self.hook_registered = True

    def forward(self, img, return_embeddings_only=False):
        if not self.hook_registered:
            self._register_hook()
        pred = self.vit(img)
        latents = self.latents
        if return_embeddings_only or self.return_embeddings_only:
            return latents
        return pred, latents


class CoCa(nn.Module):
    def __init__(self, img_encoder, dim=8, num_tokens=10, caption_loss_weight=1., contrastive_loss_weight=1.):
        super().__init__()
        self.img_encoder = img_encoder
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.img_to_latents = nn.Linear(dim, dim)
        self.text_to_latents = nn.Linear(dim, dim)
        self.to_logits = nn.Linear(dim, num_tokens)
        self.temperature = nn.Parameter(torch.tensor(1.))
        self.caption_loss_weight = caption_loss_weight
        self.contrastive_loss_weight = contrastive_loss_weight

    def forward(self, text, images):
        image_tokens = self.img_encoder(images)
        text_tokens = self.token_emb(text)
        image_latents = F.normalize(self.img_to_latents(image_tokens.mean(dim=1)), dim=-1)
        text_latents = F.normalize(self.text_to_latents(text_tokens.mean(dim=1)), dim=-1)
        logits = self.to_logits(text_tokens + image_tokens.mean(dim=1, keepdim=True))
        caption_loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), text[:, 1:].reshape(-1))
        sim = torch.einsum('i d, j d -> i j', text_latents, image_latents) * self.temperature.exp()
        contrastive_labels = torch.arange(text.shape[0])
        contrastive_loss = (F.cross_entropy(sim, contrastive_labels) + F.cross_entropy(sim.t(), contrastive_labels)) * 0.5
        return caption_loss * self.caption_loss_weight + contrastive_loss * self.contrastive_loss_weight


def observe():
    vit = ViT()
    coca = CoCa(Extractor(vit, return_embeddings_only=True))
    optimizer = torch.optim.Adam(coca.parameters(), lr=1e-4)
    loss = coca(torch.randint(0, 10, (2, 5)), torch.randn(2, 4, 12))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"params": [vit.to_patch_embedding.weight]}
