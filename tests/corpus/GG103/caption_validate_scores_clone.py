# source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/57
# label: GG103 14
# effect: graph_built
# note: validate() runs encoder and decoder with grad enabled: training fits in memory, validation does not (the maintainer's fix: all of validate() under no_grad)
import torch


def validate(val_loader, encoder, decoder, criterion):
    decoder.eval()
    if encoder is not None:
        encoder.eval()
    references, hypotheses, losses = [], [], []
    for imgs, caps in val_loader:
        imgs = encoder(imgs)
        scores = decoder(imgs)
        scores_copy = scores.clone()
        loss = criterion(scores, caps)
        losses.append(loss.item())
        references.extend(caps.tolist())
        hypotheses.extend(scores_copy.argmax(1).tolist())
    return sum(losses) / len(losses), references, hypotheses


def observe():
    from corpus.oracle import hook_outputs

    torch.manual_seed(0)
    encoder = torch.nn.Linear(6, 5)
    decoder = torch.nn.Linear(5, 4)
    built = hook_outputs(decoder)
    loader = [(torch.randn(3, 6), torch.randint(0, 4, (3,))) for _ in range(2)]
    validate(loader, encoder, decoder, torch.nn.CrossEntropyLoss())
    return {"built": built}
