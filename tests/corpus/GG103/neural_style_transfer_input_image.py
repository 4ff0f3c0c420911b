# source: http://pytorch.org/tutorials/advanced/neural_style_tutorial.html
# label: lookalike GG103
# effect: no_grad_arrived
# note: the network is in eval mode with frozen weights, but its output is no inference: the style and content losses computed from it are back-propagated into the input image, which the optimizer updates
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def gram_matrix(input):
    a, b, c = input.size()
    features = input.view(a * b, c)
    G = torch.mm(features, features.t())
    return G.div(a * b * c)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super(ContentLoss, self).__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        self.loss = F.mse_loss(gram_matrix(input), self.target)
        return input


def get_style_model_and_losses(cnn, style_img, content_img):
    model = nn.Sequential()
    content_losses, style_losses = [], []
    for i, layer in enumerate(cnn.children()):
        model.add_module(f"layer_{i}", layer)
        if isinstance(layer, nn.Conv1d):
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module(f"content_loss_{i}", content_loss)
            content_losses.append(content_loss)
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module(f"style_loss_{i}", style_loss)
            style_losses.append(style_loss)
    return model, style_losses, content_losses


def run_style_transfer(cnn, content_img, style_img, input_img, num_steps=3, style_weight=1000000, content_weight=1):
    model, style_losses, content_losses = get_style_model_and_losses(cnn, style_img, content_img)
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = optim.LBFGS([input_img])
    run = [0]
    while run[0] <= num_steps:
        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = sum(sl.loss for sl in style_losses)
            content_score = sum(cl.loss for cl in content_losses)
            loss = style_score * style_weight + content_score * content_weight
            loss.backward()
            run[0] += 1
            return style_score + content_score
        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img


def observe():
    from corpus.oracle import grad_arrivals

    cnn = nn.Sequential(nn.Conv1d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv1d(4, 4, 3, padding=1))
    content_img, style_img = torch.rand(1, 3, 6), torch.rand(1, 3, 6)
    input_img = content_img.clone().requires_grad_(True)
    arrived = grad_arrivals([input_img])
    run_style_transfer(cnn, content_img, style_img, input_img, num_steps=1)
    return {"arrived": arrived}
