# source: https://github.com/pytorchbearer/torchbearer/issues/414
# label: lookalike GG302
# effect: raises "element 0 of tensors does not require grad"
# note: what the issue asks for: the default loss is torch.zeros(1, requires_grad=True), a leaf backward() accepts; in the epoch before the callback starts the step back-propagates nothing into the model, as intended, and later epochs train on the callback's terms
import torch
import torch.nn as nn
import torch.nn.functional as F


class Callback(object):
    def on_sample(self, state):
        pass

    def on_forward(self, state):
        pass

    def on_criterion(self, state):
        pass

    def on_backward(self, state):
        pass


class CallbackList(Callback):
    def __init__(self, callback_list):
        self.callback_list = list(callback_list)

    def on_sample(self, state):
        for callback in self.callback_list:
            callback.on_sample(state)

    def on_forward(self, state):
        for callback in self.callback_list:
            callback.on_forward(state)

    def on_criterion(self, state):
        for callback in self.callback_list:
            callback.on_criterion(state)

    def on_backward(self, state):
        for callback in self.callback_list:
            callback.on_backward(state)


class Model(object):
    def __init__(self, model, optimizer, criterion=None):
        if criterion is None:
            criterion = lambda y_pred, y_true: torch.zeros(1, device=y_true.device, requires_grad=True)
        self.main_module = model
        self.optimizer = optimizer
        self.criterion = criterion

    def fit_generator(self, generator, epochs=1, callbacks=[]):
        _callbacks = CallbackList(callbacks)
        state = {"model": self.main_module, "optimizer": self.optimizer, "criterion": self.criterion}
        history = []
        for state["epoch"] in range(epochs):
            self.main_module.train()
            for state["x"], state["y_true"] in generator:
                _callbacks.on_sample(state)
                state["optimizer"].zero_grad()
                state["y_pred"] = state["model"](state["x"])
                _callbacks.on_forward(state)
                state["loss"] = state["criterion"](state["y_pred"], state["y_true"])
                _callbacks.on_criterion(state)
                state["loss"].backward()
                _callbacks.on_backward(state)
                state["optimizer"].step()
                history.append(state["loss"].item())
        return history


class VAE(nn.Module):
    def __init__(self, n_in=8, latent=2):
        super().__init__()
        self.encoder = nn.Linear(n_in, 2 * latent)
        self.decoder = nn.Linear(latent, n_in)

    def forward(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decoder(z), mu, logvar


class VAELoss(Callback):
    """Adds the VAE loss (reconstruction and KL) from epoch `start_epoch` on; the epochs before it add nothing (a delayed start of this term)."""

    def __init__(self, start_epoch=1):
        self.start_epoch = start_epoch

    def on_criterion(self, state):
        recon, mu, logvar = state["y_pred"]
        if state["epoch"] >= self.start_epoch:
            kld = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
            state["loss"] = state["loss"] + F.mse_loss(recon, state["x"]) + kld


def observe():
    vae = VAE()
    model = Model(vae, torch.optim.Adam(vae.parameters(), lr=1e-3))
    data = [(torch.randn(4, 8), torch.zeros(4)) for _ in range(2)]
    model.fit_generator(data, epochs=2, callbacks=[VAELoss(start_epoch=1)])
    return {}
