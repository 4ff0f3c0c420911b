# source: https://pgg1610.github.io/data_blog/posts/2020-10-19-pytorch_transfer_learning_basics.html
# label: lookalike GG103
# effect: graph_built
# note: the tutorial's train_model() runs train and val phases through the same forward, inside `torch.set_grad_enabled(phase == 'train')`: the val phase builds no graph
import copy

import torch
import torch.nn as nn


def train_model(model, dataloaders, dataset_sizes, criterion, optimizer, scheduler, num_epochs=2):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                scheduler.step()
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_model_wts)
    return model


def observe():
    from corpus.oracle import hook_outputs

    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)
    dataloaders = {"train": [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(2)],
                   "val": [(torch.randn(3, 6), torch.randint(0, 2, (3,))) for _ in range(2)]}
    built = hook_outputs(model, where=lambda inputs: inputs[0].shape[0] == 3)
    train_model(model, dataloaders, {"train": 8, "val": 6}, nn.CrossEntropyLoss(), optimizer, scheduler)
    return {"built": built}
