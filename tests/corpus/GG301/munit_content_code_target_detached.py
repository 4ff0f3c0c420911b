# source: https://github.com/eriklindernoren/PyTorch-GAN/issues/142
# label: lookalike GG301
# effect: no_grad
# note: MUNIT's content reconstruction loss compares the re-encoded code with `c_code_1.detach()`: the detached value is the target; the encoder still learns through the prediction side and the image losses
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, in_dim=8, content_dim=4, style_dim=2):
        super().__init__()
        self.content = nn.Linear(in_dim, content_dim)
        self.style = nn.Linear(in_dim, style_dim)

    def forward(self, x):
        return torch.tanh(self.content(x)), self.style(x)


class Decoder(nn.Module):
    def __init__(self, out_dim=8, content_dim=4, style_dim=2):
        super().__init__()
        self.net = nn.Linear(content_dim + style_dim, out_dim)

    def forward(self, content_code, style_code):
        return self.net(torch.cat([content_code, style_code], dim=1))


def train_generators(Enc1, Dec1, Enc2, Dec2, optimizer_G, X1, X2, lambda_gan=1, lambda_id=10, lambda_style=1,
                     lambda_cont=1, style_dim=2):
    criterion_recon = nn.L1Loss()
    style_1 = torch.randn(X1.size(0), style_dim)
    style_2 = torch.randn(X1.size(0), style_dim)
    optimizer_G.zero_grad()
    c_code_1, s_code_1 = Enc1(X1)
    c_code_2, s_code_2 = Enc2(X2)
    X11 = Dec1(c_code_1, s_code_1)
    X22 = Dec2(c_code_2, s_code_2)
    X21 = Dec1(c_code_2, style_1)
    X12 = Dec2(c_code_1, style_2)
    c_code_21, s_code_21 = Enc1(X21)
    c_code_12, s_code_12 = Enc2(X12)
    loss_ID_1 = lambda_id * criterion_recon(X11, X1)
    loss_ID_2 = lambda_id * criterion_recon(X22, X2)
    loss_s_1 = lambda_style * criterion_recon(s_code_21, style_1)
    loss_s_2 = lambda_style * criterion_recon(s_code_12, style_2)
    loss_c_1 = lambda_cont * criterion_recon(c_code_12, c_code_1.detach())
    loss_c_2 = lambda_cont * criterion_recon(c_code_21, c_code_2.detach())
    loss_G = loss_ID_1 + loss_ID_2 + loss_s_1 + loss_s_2 + loss_c_1 + loss_c_2
    loss_G.backward()
    optimizer_G.step()
    return loss_G.item()


def observe():
    Enc1, Dec1, Enc2, Dec2 = Encoder(), Decoder(), Encoder(), Decoder()
    params = [p for m in (Enc1, Dec1, Enc2, Dec2) for p in m.parameters()]
    train_generators(Enc1, Dec1, Enc2, Dec2, torch.optim.Adam(params, lr=1e-4), torch.randn(3, 8), torch.randn(3, 8))
    return {"params": [Enc1.content.weight, Enc2.content.weight]}
