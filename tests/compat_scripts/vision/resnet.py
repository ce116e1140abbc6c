"""CIFAR-style ResNet-8 on 3x16x16 synthetic images: random crop/flip augmentation with tensor ops,
label smoothing, SGD nesterov + weight decay, OneCycleLR, gradient accumulation, eval/train toggles.

usage: python resnet.py [INIT.pt]   (INIT.pt: shared weights and data, read if present, else written)
"""
import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
NUM_CLASSES, EPOCHS, ACCUM = 10, 6, 2


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return F.relu(out)


class ResNet8(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.layer1 = BasicBlock(width, width)
        self.layer2 = BasicBlock(width, 2 * width, stride=2)
        self.layer3 = BasicBlock(2 * width, 4 * width, stride=2)
        self.linear = nn.Linear(4 * width, NUM_CLASSES)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer3(self.layer2(self.layer1(out)))
        out = F.adaptive_avg_pool2d(out, 1)
        out = torch.flatten(out, 1)
        return self.linear(out)


def augment(x, pad=2):
    """Random crop with zero padding and random horizontal flip, per image, with tensor ops."""
    n, _, h, w = x.shape
    padded = F.pad(x, (pad, pad, pad, pad))
    dy = torch.randint(0, 2 * pad + 1, (n,))
    dx = torch.randint(0, 2 * pad + 1, (n,))
    crops = torch.stack([padded[i, :, dy[i]:dy[i] + h, dx[i]:dx[i] + w] for i in range(n)])
    flip = torch.rand(n) < 0.5
    return torch.where(flip[:, None, None, None], crops.flip(3), crops)


def make_data(n_train=320, n_test=100):
    templates = torch.randn(NUM_CLASSES, 3, 4, 4)
    templates = F.interpolate(templates, size=(16, 16), mode="nearest")
    mean = torch.tensor([0.49, 0.48, 0.45]).view(1, 3, 1, 1)
    std = torch.tensor([0.25, 0.24, 0.26]).view(1, 3, 1, 1)

    def sample(n):
        y = torch.randint(0, NUM_CLASSES, (n,))
        x = templates[y] + 0.4 * torch.randn(n, 3, 16, 16)
        return (x - mean) / std, y
    return sample(n_train), sample(n_test)


def evaluate(model, loader, criterion):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
            loss_sum += criterion(out, y).item() * y.size(0)
            correct += out.argmax(dim=1).eq(y).sum().item()
            total += y.size(0)
    model.train()
    return loss_sum / total, correct / total


model = ResNet8()
init_path = sys.argv[1] if len(sys.argv) > 1 else None
if init_path and os.path.exists(init_path):
    init = torch.load(init_path)
    model.load_state_dict(init["model"])
else:
    (xtr, ytr), (xte, yte) = make_data()
    init = {"model": model.state_dict(), "train": (xtr, ytr), "test": (xte, yte)}
    if init_path:
        torch.save(init, init_path)

train_loader = DataLoader(TensorDataset(*init["train"]), batch_size=32, shuffle=True, drop_last=True)
test_loader = DataLoader(TensorDataset(*init["test"]), batch_size=50)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
steps_per_epoch = len(train_loader) // ACCUM
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.2, epochs=EPOCHS, steps_per_epoch=steps_per_epoch)

init_loss, init_acc = evaluate(model, test_loader, criterion)

# Sanity check before the real run: a copy must overfit one fixed batch (no augmentation).
probe = copy.deepcopy(model)
probe_opt = torch.optim.SGD(probe.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
xb, yb = init["train"][0][:32], init["train"][1][:32]
probe_losses = []
for _ in range(5):
    probe_opt.zero_grad()
    loss = criterion(probe(xb), yb)
    loss.backward()
    probe_opt.step()
    probe_losses.append(loss.item())
assert probe_losses[-1] < probe_losses[0], probe_losses
assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), init["model"].values()))
assert model.training
for epoch in range(EPOCHS):
    model.train()
    running = 0.0
    optimizer.zero_grad(set_to_none=True)
    for i, (x, y) in enumerate(train_loader):
        loss = criterion(model(augment(x)), y) / ACCUM
        loss.backward()
        running += loss.item()
        if (i + 1) % ACCUM == 0:
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
    test_loss, test_acc = evaluate(model, test_loader, criterion)
    print(f"epoch {epoch} train_loss {running / steps_per_epoch:.4f} test_loss {test_loss:.4f} "
          f"acc {test_acc:.3f} lr {scheduler.get_last_lr()[0]:.5f}")

assert test_acc > 0.4, test_acc  # chance is 0.1
assert test_loss < init_loss
print("init_eval", f"{init_loss:.6f}", f"{init_acc:.4f}")
print("probe_losses", " ".join(f"{v:.6f}" for v in probe_losses))
print("final_acc", f"{test_acc:.3f}")
print("OK resnet")
