# source: https://github.com/dragen1860/MAML-Pytorch/issues/40
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: only the loss before the first update is an under-no_grad report; the query loss after the first update keeps its graph (the accuracy alone is counted under no_grad), so with update_step=1 the meta-loss losses_q[-1] back-propagates through the fast weights
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner(nn.Module):
    def __init__(self, in_dim, hidden, n_way):
        super().__init__()
        self.vars = nn.ParameterList([
            nn.Parameter(torch.randn(hidden, in_dim) * 0.1), nn.Parameter(torch.zeros(hidden)),
            nn.Parameter(torch.randn(n_way, hidden) * 0.1), nn.Parameter(torch.zeros(n_way)),
        ])

    def forward(self, x, vars=None):
        if vars is None:
            vars = self.vars
        w1, b1, w2, b2 = vars
        return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)


class Meta(nn.Module):
    def __init__(self, args, learner):
        super().__init__()
        self.update_lr = args.update_lr
        self.update_step = args.update_step
        self.net = learner
        self.meta_optim = torch.optim.Adam(self.net.parameters(), lr=args.meta_lr)

    def forward(self, x_spt, y_spt, x_qry, y_qry):
        task_num, querysz = x_spt.size(0), x_qry.size(1)
        losses_q = [0 for _ in range(self.update_step + 1)]
        corrects = [0 for _ in range(self.update_step + 1)]
        for i in range(task_num):
            logits = self.net(x_spt[i], vars=None)
            loss = F.cross_entropy(logits, y_spt[i])
            grad = torch.autograd.grad(loss, self.net.parameters())
            fast_weights = [p - self.update_lr * g for g, p in zip(grad, self.net.parameters())]

            # loss and accuracy before the first update
            with torch.no_grad():
                logits_q = self.net(x_qry[i], list(self.net.parameters()))
                loss_q = F.cross_entropy(logits_q, y_qry[i])
                losses_q[0] += loss_q
                corrects[0] += torch.eq(logits_q.argmax(dim=1), y_qry[i]).sum().item()

            # loss and accuracy after the first update
            logits_q = self.net(x_qry[i], fast_weights)
            loss_q = F.cross_entropy(logits_q, y_qry[i])
            losses_q[1] += loss_q
            with torch.no_grad():
                corrects[1] += torch.eq(logits_q.argmax(dim=1), y_qry[i]).sum().item()

            for k in range(1, self.update_step):
                logits = self.net(x_spt[i], fast_weights)
                loss = F.cross_entropy(logits, y_spt[i])
                grad = torch.autograd.grad(loss, fast_weights)
                fast_weights = [p - self.update_lr * g for g, p in zip(grad, fast_weights)]
                logits_q = self.net(x_qry[i], fast_weights)
                loss_q = F.cross_entropy(logits_q, y_qry[i])
                losses_q[k + 1] += loss_q
                with torch.no_grad():
                    corrects[k + 1] += torch.eq(logits_q.argmax(dim=1), y_qry[i]).sum().item()

        loss_q = losses_q[-1] / task_num
        self.meta_optim.zero_grad()
        loss_q.backward()
        self.meta_optim.step()
        return np.array(corrects) / (querysz * task_num)


def observe():
    from types import SimpleNamespace

    args = SimpleNamespace(update_lr=0.4, meta_lr=1e-3, update_step=1)
    maml = Meta(args, Learner(in_dim=6, hidden=8, n_way=3))
    x_spt, y_spt = torch.randn(2, 6, 6), torch.randint(0, 3, (2, 6))
    x_qry, y_qry = torch.randn(2, 9, 6), torch.randint(0, 3, (2, 9))
    maml(x_spt, y_spt, x_qry, y_qry)
    return {}
