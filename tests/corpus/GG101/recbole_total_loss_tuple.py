# source: https://github.com/RUCAIBox/RecBole/pull/307
# label: GG101 22
# effect: graph_kept
# note: the Trainer sums each batch's loss tensors into total_loss (a tuple when the model returns several losses): every batch's graph stays reachable
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
                total_loss = losses if total_loss is None else tuple(map(sum, zip(total_loss, losses)))
            else:
                loss = losses
                total_loss = losses if total_loss is None else total_loss + losses
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
