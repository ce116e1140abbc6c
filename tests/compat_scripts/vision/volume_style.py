"""Two small scripts in one: a 3-D conv volume classifier (Conv3d, BatchNorm3d, MaxPool3d,
AdaptiveAvgPool3d) and a style-transfer loop (frozen CNN features, Gram matrices with bmm, the image
optimized by LBFGS with a closure, clamp_ under no_grad).

usage: python volume_style.py [INIT.pt]   (INIT.pt: shared weights and data, read if present, else written)
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VolumeNet(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(1, 8, kernel_size=3, padding=1), nn.BatchNorm3d(8), nn.ReLU(inplace=True),
            nn.MaxPool3d(kernel_size=2, stride=2),
            nn.Conv3d(8, 16, kernel_size=3, padding=1), nn.BatchNorm3d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool3d((1, 1, 1)),
        )
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


class FeatureNet(nn.Module):
    """A small "pretrained" CNN whose layer outputs serve as content and style features."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()),
            nn.Sequential(nn.AvgPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU()),
            nn.Sequential(nn.AvgPool2d(2), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU()),
        ])

    def forward(self, x):
        feats = []
        for layer in self.layers:
            x = layer(x)
            feats.append(x)
        return feats


def gram_matrix(feat):
    b, c, h, w = feat.size()
    f = feat.view(b, c, h * w)
    return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)


def make_volumes(n=64, d=8):
    """Class 1 volumes hold a bright cube, class 0 a bright thin plane."""
    y = torch.randint(0, 2, (n,))
    x = 0.5 * torch.randn(n, 1, d, d, d)
    for i in range(n):
        z0 = int(torch.randint(0, d - 3, (1,)))
        if y[i] == 1:
            x[i, 0, z0:z0 + 3, z0:z0 + 3, z0:z0 + 3] += 1.0
        else:
            x[i, 0, z0, :, :] += 1.0
    return x, y


volume_net, feature_net = VolumeNet(), FeatureNet()
init_path = sys.argv[1] if len(sys.argv) > 1 else None
if init_path and os.path.exists(init_path):
    init = torch.load(init_path)
    volume_net.load_state_dict(init["volume_net"])
    feature_net.load_state_dict(init["feature_net"])
else:
    init = {"volume_net": volume_net.state_dict(), "feature_net": feature_net.state_dict(),
            "volumes": make_volumes(), "content": torch.rand(1, 3, 16, 16), "style": torch.rand(1, 3, 16, 16)}
    if init_path:
        torch.save(init, init_path)

# ---- 3-D classifier: full-batch Adam, deterministic given the weights and data ----
x, y = init["volumes"]
optimizer = torch.optim.Adam(volume_net.parameters(), lr=1e-2)
volume_losses = []
for epoch in range(30):
    volume_net.train()
    optimizer.zero_grad()
    loss = F.cross_entropy(volume_net(x), y)
    loss.backward()
    optimizer.step()
    volume_losses.append(loss.item())
volume_net.eval()
with torch.no_grad():
    acc = (volume_net(x).argmax(1) == y).float().mean().item()
assert volume_losses[-1] < volume_losses[0], volume_losses
assert acc > 0.75, acc
print("volume_losses", " ".join(f"{v:.5f}" for v in volume_losses[::10] + volume_losses[-1:]))
print("volume_acc", f"{acc:.3f}")

# ---- style transfer ----
feature_net.eval()
feature_net.requires_grad_(False)
assert not any(p.requires_grad for p in feature_net.parameters())
content, style = init["content"], init["style"]
with torch.no_grad():
    content_target = feature_net(content)[1].detach()
    style_targets = [gram_matrix(f).detach() for f in feature_net(style)]

input_img = content.clone().requires_grad_(True)
lbfgs = torch.optim.LBFGS([input_img], lr=1, max_iter=20)
style_weight, content_weight = 1e4, 1.0
history = []
for outer in range(3):
    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        lbfgs.zero_grad()
        feats = feature_net(input_img)
        style_loss = sum(F.mse_loss(gram_matrix(f), t) for f, t in zip(feats, style_targets))
        content_loss = F.mse_loss(feats[1], content_target)
        loss = style_weight * style_loss + content_weight * content_loss
        loss.backward()
        return loss
    loss = lbfgs.step(closure)
    history.append(loss.item())
    print(f"style round {outer} loss {history[-1]:.6f}")
with torch.no_grad():
    input_img.clamp_(0, 1)
assert history[-1] < history[0], history
assert input_img.grad is not None and input_img.min() >= 0 and input_img.max() <= 1
assert all(p.grad is None for p in feature_net.parameters())
print("style_losses", " ".join(f"{v:.6f}" for v in history))
print("OK volume_style")
