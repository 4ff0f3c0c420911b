# source: https://github.com/RUCAIBox/RecBole/pull/307
# label: lookalike GG101
# effect: graph_kept
# note: the PR's fix: the losses are summed with sum() into the loss that is back-propagated, and total_loss accumulates per_loss.item() numbers
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def _train_epoch(self, train_data, epoch_idx, loss_func=None):
        self.model.train()
        loss_func = loss_func or self.model.calculate_loss
        total_loss = None
        for batch_idx, interaction in enumerate(train_data):
            self.optimizer.zero_grad()
            losses = loss_func(interaction)
            if isinstance(losses, tuple):
                loss = sum(losses)
                loss_tuple = tuple(per_loss.item() for per_loss in losses)
                total_loss = loss_tuple if total_loss is None else tuple(map(sum, zip(total_loss, loss_tuple)))
            else:
                loss = losses
                total_loss = losses.item() if total_loss is None else total_loss + losses.item()
            loss.backward()
            self.optimizer.step()
        return total_loss


class BPRWithReg(torch.nn.Module):
    def __init__(self, n_users=10, n_items=12, dim=4, reg=1e-3):
        super().__init__()
        self.user_embedding = torch.nn.Embedding(n_users, dim)
        self.item_embedding = torch.nn.Embedding(n_items, dim)
        self.reg = reg

    def calculate_loss(self, interaction):
        u = self.user_embedding(interaction["user_id"])
        pos, neg = self.item_embedding(interaction["item_id"]), self.item_embedding(interaction["neg_item_id"])
        bpr = -torch.log(torch.sigmoid((u * pos).sum(-1) - (u * neg).sum(-1)) + 1e-10).mean()
        return bpr, self.reg * (u.norm() + pos.norm() + neg.norm())


def observe():
    model = BPRWithReg()
    trainer = Trainer(model, torch.optim.Adam(model.parameters(), lr=1e-3))
    data = [{"user_id": torch.randint(0, 10, (4,)), "item_id": torch.randint(0, 12, (4,)),
             "neg_item_id": torch.randint(0, 12, (4,))} for _ in range(3)]
    return {"kept": list(trainer._train_epoch(data, 0))}
