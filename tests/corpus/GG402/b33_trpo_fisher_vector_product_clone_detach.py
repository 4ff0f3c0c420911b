# source: https://github.com/PacktPublishing/Deep-Reinforcement-Learning-Hands-On-Second-Edition/pull/12
# label: lookalike GG402
# effect: warns "To copy construct from a tensor"
# note: the PR's fix: the Fisher-vector product copies the conjugate-gradient direction with v.clone().detach() instead of torch.tensor(v), which warned on every call
import torch
import torch.nn as nn


def flat_grad(output, params, create_graph=False):
    grads = torch.autograd.grad(output, params, create_graph=create_graph)
    return torch.cat([g.contiguous().view(-1) for g in grads])


def conjugate_gradients(Avp, b, nsteps, residual_tol=1e-10):
    x = torch.zeros(b.size())
    r = b.clone()
    p = b.clone()
    rdotr = torch.dot(r, r)
    for _ in range(nsteps):
        _Avp = Avp(p)
        alpha = rdotr / torch.dot(p, _Avp)
        x += alpha * p
        r -= alpha * _Avp
        new_rdotr = torch.dot(r, r)
        p = r + new_rdotr / rdotr * p
        rdotr = new_rdotr
        if rdotr < residual_tol:
            break
    return x


def natural_gradient_step(model, get_loss, get_kl, damping=0.1, device="cpu"):
    params = list(model.parameters())
    loss_grad = flat_grad(get_loss(), params).data

    def Fvp(v):
        kl = get_kl().mean()
        flat_grad_kl = flat_grad(kl, params, create_graph=True)
        v_v = v.clone().detach().to(device)
        kl_v = (flat_grad_kl * v_v).sum()
        flat_grad_grad_kl = flat_grad(kl_v, params).data
        return flat_grad_grad_kl + v * damping

    return conjugate_gradients(Fvp, -loss_grad, 10)


def observe():
    policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    states = torch.randn(6, 4)
    actions = torch.randint(0, 2, (6,))
    advantages = torch.randn(6)
    with torch.no_grad():
        old_log_probs = torch.log_softmax(policy(states), dim=1)

    def get_loss():
        log_probs = torch.log_softmax(policy(states), dim=1)
        ratio = torch.exp(log_probs.gather(1, actions[:, None]).squeeze(1)
                          - old_log_probs.gather(1, actions[:, None]).squeeze(1))
        return -(ratio * advantages).mean()

    def get_kl():
        log_probs = torch.log_softmax(policy(states), dim=1)
        return (old_log_probs.exp() * (old_log_probs - log_probs)).sum(dim=1)

    natural_gradient_step(policy, get_loss, get_kl)
    return {}
