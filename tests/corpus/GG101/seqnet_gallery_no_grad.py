# source: https://github.com/serend1p1ty/SeqNet/pull/14
# label: lookalike GG101
# effect: activations_alive
# note: the PR's fix: evaluation under torch.no_grad(), the kept embeddings are plain values
import torch


@torch.no_grad()
def evaluate_performance(model, gallery_loader, query_loader):
    model.eval()
    gallery_feats, query_feats = [], []
    for images, _ in gallery_loader:
        outputs = model(images)
        gallery_feats.append(outputs.cpu())
    for images, _ in query_loader:
        query_feats.append(model(images).cpu())
    gallery = torch.cat(gallery_feats)
    query = torch.cat(query_feats)
    return gallery, (query @ gallery.t()).argmax(1)


def observe():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    gallery = [(torch.randn(2, 4), None) for _ in range(3)]
    query = [(torch.randn(1, 4), None)]
    kept, _ = evaluate_performance(model, gallery, query)
    return {"kept": kept}
