# source: https://github.com/haowang1992/DSN/issues/2
# label: GG301 68
# effect: wrong_grad
# note: DSN's training step adds a memory loss to the total loss, but computes it on `features[...].detach()`: the term is back-propagated with the rest and sends no gradient to the encoder ("the .detach() causes loss_memory.grad to be none. It's not being used?"). The CSE-ResNet and the memory are cut down to the lines around the report; the total loss is reconstructed from the step
import torch
import torch.nn as nn
import torch.nn.functional as F


class CSEResnet(nn.Module):
    def __init__(self, in_dim=12, feat_dim=16, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(in_dim + 1, feat_dim), nn.ReLU(), nn.Linear(feat_dim, feat_dim))
        self.linear = nn.Linear(feat_dim, num_classes)

    def forward(self, x, tag):
        features = self.features(torch.cat([x, tag], dim=1))
        return self.linear(features), features


class Memory(nn.Module):
    def __init__(self, num_classes=4, feat_dim=16, momentum=0.5):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("sketch_memory", torch.zeros(num_classes, feat_dim))
        self.register_buffer("image_memory", torch.zeros(num_classes, feat_dim))

    def add_entries(self, sketch_features, sketch_labels, image_features, image_labels):
        for f, y in zip(sketch_features, sketch_labels):
            self.sketch_memory[y] = self.momentum * self.sketch_memory[y] + (1 - self.momentum) * F.normalize(f, dim=0)
        for f, y in zip(image_features, image_labels):
            self.image_memory[y] = self.momentum * self.image_memory[y] + (1 - self.momentum) * F.normalize(f, dim=0)

    def memory_loss(self, image_features, image_labels):
        sims = F.cosine_similarity(F.normalize(image_features, dim=1), self.sketch_memory[image_labels], dim=1)
        return sims.mean()


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train(train_loader, train_loader_ext, model, memory, criterion_train, optimizer, epoch, args):
    losses = AverageMeter()
    losses_memory = AverageMeter()

    model.train()
    for i, ((input, target), (input_ext, target_ext)) in enumerate(zip(train_loader, train_loader_ext)):
        input_all = torch.cat([input, input_ext], dim=0)
        tag_zeros = torch.zeros(input.size()[0], 1)
        tag_ones = torch.ones(input_ext.size()[0], 1)
        tag_all = torch.cat([tag_zeros, tag_ones], dim=0)
        target_all = torch.cat([target, target_ext], dim=0)
        label_s = target
        label_i = target_ext

        output, features = model(input_all, tag_all)
        loss = criterion_train(output, target_all)

        memory.add_entries(features[:tag_zeros.size(0)].detach(), label_s.detach(),
                           features[tag_zeros.size(0):tag_all.size(0)].detach(), label_i.detach())
        loss_memory = 1.0 - memory.memory_loss(features[tag_zeros.size(0):tag_all.size(0)].detach(), label_i.detach())

        loss_total = loss + args["memory_lambda"] * loss_memory

        losses.update(loss.item(), input_all.size(0))
        losses_memory.update(loss_memory.item(), input_all.size(0))

        optimizer.zero_grad()
        loss_total.backward()
        optimizer.step()
    return losses.avg, losses_memory.avg


def observe():
    import copy

    model, memory = CSEResnet(), Memory()
    sketches = [(torch.randn(3, 12), torch.tensor([0, 1, 2]))]
    images = [(torch.randn(3, 12), torch.tensor([0, 1, 2]))]
    clean_model, clean_memory = copy.deepcopy(model), copy.deepcopy(memory)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    train(sketches, images, model, memory, nn.CrossEntropyLoss(), optimizer, 0, {"memory_lambda": 1.0})

    # the same step with the memory loss on the features themselves
    (x_s, y_s), (x_i, y_i) = sketches[0], images[0]
    tags = torch.cat([torch.zeros(3, 1), torch.ones(3, 1)])
    output, features = clean_model(torch.cat([x_s, x_i]), tags)
    clean_memory.add_entries(features[:3].detach(), y_s, features[3:].detach(), y_i)
    total = nn.CrossEntropyLoss()(output, torch.cat([y_s, y_i])) + 1.0 - clean_memory.memory_loss(features[3:], y_i)
    total.backward()
    return {"grad": model.features[0].weight.grad, "expected": clean_model.features[0].weight.grad}
