# source: https://github.com/roman-vygon/triplet_loss_kws/issues/6
# label: GG303 59
# effect: no_grad
# note: the L2 regulariser is a non-trainable module whose forward runs without grad, so the triplet loss had no graph; the workaround from the thread, mean_losses.requires_grad = True, makes backward() run while the encoder never learns
from itertools import combinations

import torch
import torch.nn.functional as F
from torch import nn


class L2Regularizer(nn.Module):
    """Performs L2 regularization over samples.
        i.e. makes the sum of squares of embeddings equal to 1
    """

    def regularize(self, embeds):
        l2_embeds = F.normalize(embeds, p=2, dim=-1)
        return l2_embeds

    def forward(self, embeds):
        # non-trainable module: nothing is tracked for autograd here
        with torch.no_grad():
            l2_signal = self.regularize(embeds)
        return l2_signal


class AllTripletSelector:
    """Returns all (anchor, positive, negative) triplets of a batch."""

    def get_triplets(self, embeddings, labels):
        triplets = []
        for label in set(labels.tolist()):
            positives = (labels == label).nonzero().flatten().tolist()
            negatives = (labels != label).nonzero().flatten().tolist()
            for anchor, positive in combinations(positives, 2):
                triplets += [[anchor, positive, negative] for negative in negatives]
        return torch.LongTensor(triplets)


class OnlineTripletLoss(nn.Module):
    """
    Online Triplet loss
    Takes a batch of embeddings and corresponding labels.
    """

    def __init__(self, margin, triplet_selector):
        super().__init__()
        self.margin = margin
        self.triplet_selector = triplet_selector

    def forward(self, embeddings, target):
        embeddings = torch.flatten(embeddings, start_dim=-2)
        triplets = self.triplet_selector.get_triplets(embeddings, target)
        ap_distances = (embeddings[triplets[:, 0]] - embeddings[triplets[:, 1]]).pow(2).sum(1)  # .pow(.5)
        an_distances = (embeddings[triplets[:, 0]] - embeddings[triplets[:, 2]]).pow(2).sum(1)  # .pow(.5)
        losses = F.relu(ap_distances - an_distances + self.margin)
        mean_losses = losses.mean()
        mean_losses.requires_grad = True
        return mean_losses


def train_step(encoder, l2_regularizer, triplet_loss, optimizer, audio_signal, targets):
    encoder.train()
    optimizer.zero_grad()
    embeds = encoder(audio_signal)
    l2_embeds = l2_regularizer(embeds)
    loss = triplet_loss(l2_embeds, targets)
    loss.backward()
    optimizer.step()
    return loss.item()


def observe():
    torch.manual_seed(0)
    encoder = nn.Conv1d(4, 6, 3, padding=1)
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    loss_fn = OnlineTripletLoss(margin=1.0, triplet_selector=AllTripletSelector())
    train_step(encoder, L2Regularizer(), loss_fn, optimizer, torch.randn(4, 4, 5), torch.tensor([0, 0, 1, 1]))
    return {"params": list(encoder.parameters())}
