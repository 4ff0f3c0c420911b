# source: https://github.com/hpcaitech/ColossalAI/pull/700
# label: lookalike GG201
# effect: changed
# note: the 2D-parallel matmul's forward takes `A = A.clone().detach()` before reshaping and scaling it in place ("detach will create a tensor which shares the storage ... in-place operations ... incorrect arithmetic results"): the caller's activation is untouched
import torch


class Matmul_AB_2D(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, B, summa_dim=1):
        A = A.clone().detach()
        A_shape = A.shape
        A = A.reshape((-1, A_shape[-1]))
        A.mul_(1.0 / summa_dim)
        ctx.save_for_backward(A, B)
        ctx.A_shape = A_shape
        out = torch.matmul(A, B)
        return out.reshape(A_shape[:-1] + (B.shape[-1],))

    @staticmethod
    def backward(ctx, output_grad):
        A, B = ctx.saved_tensors
        grad = output_grad.reshape(-1, output_grad.shape[-1])
        return (grad @ B.t()).reshape(ctx.A_shape), A.t() @ grad, None


def linear_2d(x, weight, summa_dim=2):
    return Matmul_AB_2D.apply(x, weight, summa_dim)


def observe():
    x = torch.randn(2, 3, 4, requires_grad=True)
    weight = torch.randn(4, 5, requires_grad=True)
    before = x.detach().clone()
    linear_2d(x, weight).sum().backward()
    return {"before": before, "after": x.detach()}
