# source: https://discuss.pytorch.org/t/another-way-to-implement-maml-model-agnostic-meta-learning/164439
# label: lookalike GG103
# effect: graph_unused
# note: the query forward over the adapted (fast) weights also feeds a logged accuracy, but its loss is back-propagated through the inner step into the meta-parameters
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call


def adapt_and_score(learner, params, support, query, inner_lr=0.4, inner_steps=1):
    xs, ys = support
    xq, yq = query
    fast = dict(params)
    for _ in range(inner_steps):
        support_logits = functional_call(learner, fast, (xs,))
        support_loss = F.cross_entropy(support_logits, ys)
        grads = torch.autograd.grad(support_loss, list(fast.values()), create_graph=True)
        fast = {name: p - inner_lr * g for (name, p), g in zip(fast.items(), grads)}
    query_logits = functional_call(learner, fast, (xq,))
    query_loss = F.cross_entropy(query_logits, yq)
    query_acc = (query_logits.argmax(dim=1) == yq).float().mean().item()
    return query_loss, query_acc


def meta_train(learner, tasks, meta_lr=1e-3):
    meta_opt = torch.optim.Adam(learner.parameters(), lr=meta_lr)
    params = dict(learner.named_parameters())
    accs = []
    for support, query in tasks:
        meta_opt.zero_grad()
        query_loss, query_acc = adapt_and_score(learner, params, support, query)
        query_loss.backward()
        meta_opt.step()
        accs.append(query_acc)
    return accs


def observe():
    from corpus.oracle import output_flows

    learner = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    flows = output_flows(learner)
    tasks = [((torch.randn(6, 5), torch.randint(0, 3, (6,))), (torch.randn(6, 5), torch.randint(0, 3, (6,))))
             for _ in range(2)]
    meta_train(learner, tasks)
    return {"flows": flows}
