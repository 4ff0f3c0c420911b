# source: https://github.com/kitzeslab/opensoundscape/issues/1121
# label: lookalike GG402
# effect: warns "To copy construct from a tensor"
# note: the maintainers' pattern for a batch that may or may not already be a tensor: torch.as_tensor keeps a tensor as it is (no copy, no warning) and converts anything else
import torch
from torch.utils.data import DataLoader, TensorDataset


def fit(classifier, train_loader, optimizer, criterion, steps=3, device=torch.device("cpu")):
    classifier.to(device)
    batches = iter(train_loader)
    for step in range(steps):
        classifier.train()
        try:
            batch_features, batch_labels = next(batches)
        except StopIteration:
            batches = iter(train_loader)
            batch_features, batch_labels = next(batches)

        batch_features = torch.as_tensor(batch_features, dtype=torch.float32).to(device)
        batch_labels = torch.as_tensor(batch_labels, dtype=torch.float32).to(device)

        optimizer.zero_grad()
        outputs = classifier(batch_features)
        loss = criterion(outputs, batch_labels)
        loss.backward()
        optimizer.step()
    return loss.item()


def observe():
    torch.manual_seed(0)
    classifier = torch.nn.Linear(8, 3)
    dataset = TensorDataset(torch.randn(10, 8), torch.randint(0, 2, (10, 3)))
    loader = DataLoader(dataset, batch_size=4, shuffle=True)
    loss = fit(classifier, loader, torch.optim.AdamW(classifier.parameters()), torch.nn.BCEWithLogitsLoss())
    return {"loss": loss}
