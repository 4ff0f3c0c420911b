# source: https://androidkt.com/how-to-calculate-running-loss-using-loss-item-in-pytorch/
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: the epoch statistics are built from loss.item() and the predictions' argmax, which carry no graph, but backward() is called on the loss tensor itself
import torch


def train_model(model, criterion, optimizer, scheduler, dataloaders, dataset_size, num_epochs=2):
    history = []
    for epoch in range(num_epochs):
        print(f'Epoch {epoch}/{num_epochs - 1}')
        model.train()  # Set model to training mode
        running_loss = 0.0
        running_corrects = 0
        # Iterate over data.
        for inputs, labels in dataloaders:
            # zero the parameter gradients
            optimizer.zero_grad()
            outputs = model(inputs)
            _, preds = torch.max(outputs, 1)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            # statistics
            running_loss += loss.item() * inputs.size(0)
            running_corrects += torch.sum(preds == labels.data)
        scheduler.step()
        epoch_loss = running_loss / dataset_size
        epoch_acc = running_corrects.double() / dataset_size
        history.append((epoch_loss, epoch_acc.item()))
    return history


def observe():
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)
    loader = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(2)]
    return {"history": train_model(model, torch.nn.CrossEntropyLoss(), optimizer, scheduler, loader, 8)}
