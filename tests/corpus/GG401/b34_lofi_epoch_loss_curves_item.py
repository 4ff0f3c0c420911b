# source: https://github.com/jacbz/Lofi/issues/14
# label: lookalike GG401
# effect: raises "Can't call numpy() on Tensor that requires grad"
# note: the fix for the error: each batch's losses are kept as loss_chords.item() / loss_melody.item(), so the epoch averages and the plotted curves are Python floats
import math

import numpy as np
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in=12, n_chords=6, n_notes=8):
        super().__init__()
        self.encoder = nn.Linear(n_in, 16)
        self.chords = nn.Linear(16, n_chords)
        self.notes = nn.Linear(16, n_notes)
        self.mu = nn.Linear(16, 4)

    def forward(self, x, sampling_rate_chords, sampling_rate_melodies):
        h = torch.relu(self.encoder(x))
        mu = self.mu(h)
        kl = 0.5 * mu.pow(2).mean()
        return self.chords(h), self.notes(h), kl


def compute_loss(model, data, ce_loss, sampling_rate_chords, sampling_rate_melodies):
    pred_chords, pred_notes, kl = model(data["embedding"], sampling_rate_chords, sampling_rate_melodies)
    loss_chords = ce_loss(pred_chords, data["chords"]).mean()
    loss_melody = ce_loss(pred_notes, data["melody_notes"]).mean()
    loss_kl = kl * 1e-2
    loss_total = loss_chords + loss_kl + loss_melody
    tp_chords = (pred_chords.argmax(dim=1) == data["chords"]).tolist()
    tp_melodies = (pred_notes.argmax(dim=1) == data["melody_notes"]).tolist()
    return loss_total, loss_chords, loss_kl, loss_melody, tp_chords, tp_melodies


def train(model, train_dataloader, optimizer, num_epochs):
    ce_loss = nn.CrossEntropyLoss(reduction="none")
    epochs = []
    training_losses_chords = []
    training_losses_melodies = []
    training_accuracies_chords = []
    curves = None
    for epoch in range(num_epochs):
        epochs.append(epoch)
        epoch_training_losses_chords = []
        epoch_training_losses_melodies = []
        epoch_training_tp_chords = []
        sampling_rate_chords = 0.5 * (1 + math.cos((epoch / num_epochs) * math.pi))
        sampling_rate_melodies = sampling_rate_chords

        model.train()
        for batch, data in enumerate(train_dataloader):
            loss, loss_chords, kl_loss, loss_melody, batch_tp_chords, batch_tp_melodies = \
                compute_loss(model, data, ce_loss, sampling_rate_chords, sampling_rate_melodies)
            epoch_training_losses_chords.append(loss_chords.item())
            epoch_training_losses_melodies.append(loss_melody.item())
            epoch_training_tp_chords.extend(batch_tp_chords)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss = loss.item()

        epoch_training_loss_chord = sum(epoch_training_losses_chords) / len(epoch_training_losses_chords)
        epoch_training_loss_melody = sum(epoch_training_losses_melodies) / len(epoch_training_losses_melodies)
        epoch_training_chord_accuracy = (sum(epoch_training_tp_chords) / len(epoch_training_tp_chords)) * 100
        print(f"Epoch chord loss: {epoch_training_loss_chord:.3f}, melody loss: {epoch_training_loss_melody:.3f}, "
              f"chord accuracy: {epoch_training_chord_accuracy:.3f}")

        training_losses_chords.append(epoch_training_loss_chord)
        training_losses_melodies.append(epoch_training_loss_melody)
        training_accuracies_chords.append(epoch_training_chord_accuracy)

        # the curves handed to the plot (matplotlib converts each sequence with np.asarray)
        curves = {
            "chords_loss": np.asarray(training_losses_chords),
            "melody_loss": np.asarray(training_losses_melodies),
            "chords_accuracy": np.asarray(training_accuracies_chords),
        }
    return epochs, curves


def observe():
    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    loader = [{"embedding": torch.randn(4, 12), "chords": torch.randint(0, 6, (4,)),
               "melody_notes": torch.randint(0, 8, (4,))} for _ in range(2)]
    train(model, loader, optimizer, num_epochs=2)
    return {}
