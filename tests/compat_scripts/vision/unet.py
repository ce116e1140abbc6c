"""A small U-Net segmenting discs in 16x16 images: dice + BCE, StepLR, checkpoint save and resume.

usage: python unet.py [INIT.pt]   (INIT.pt: shared weights and data, read if present, else written)
"""
import os
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.inc = double_conv(1, c)
        self.down1 = nn.Sequential(nn.MaxPool2d(2), double_conv(c, 2 * c))
        self.down2 = nn.Sequential(nn.MaxPool2d(2), double_conv(2 * c, 4 * c))
        self.up1 = nn.ConvTranspose2d(4 * c, 2 * c, kernel_size=2, stride=2)
        self.conv1 = double_conv(4 * c, 2 * c)
        self.reduce2 = nn.Conv2d(2 * c, c, 1)
        self.conv2 = double_conv(2 * c, c)
        self.outc = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        y = self.conv1(torch.cat([x2, self.up1(x3)], dim=1))
        y = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
        y = self.conv2(torch.cat([x1, self.reduce2(y)], dim=1))
        return self.outc(y)


def dice_loss(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    union = prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def make_data(n=48, size=16):
    yy, xx = torch.meshgrid(torch.arange(size, dtype=torch.float32), torch.arange(size, dtype=torch.float32),
                            indexing="ij")
    centers = torch.rand(n, 2) * (size - 6) + 3
    radii = torch.rand(n) * 3 + 2
    dist = (yy[None] - centers[:, 0, None, None]) ** 2 + (xx[None] - centers[:, 1, None, None]) ** 2
    masks = (dist <= radii[:, None, None] ** 2).float().unsqueeze(1)
    images = masks * 0.8 + 0.3 * torch.randn_like(masks)
    return images, masks


model = UNet()
init_path = sys.argv[1] if len(sys.argv) > 1 else None
if init_path and os.path.exists(init_path):
    init = torch.load(init_path)
    model.load_state_dict(init["model"])
else:
    images, masks = make_data()
    init = {"model": model.state_dict(), "images": images, "masks": masks}
    if init_path:
        torch.save(init, init_path)

loader = DataLoader(TensorDataset(init["images"], init["masks"]), batch_size=16, shuffle=False)
bce = nn.BCEWithLogitsLoss()


def make_optim(model):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    return optimizer, scheduler


def train_epoch(model, optimizer, scheduler):
    model.train()
    total = 0.0
    for images, masks in loader:
        optimizer.zero_grad()
        logits = model(images)
        loss = bce(logits, masks) + dice_loss(logits, masks)
        loss.backward()
        optimizer.step()
        total += loss.item() * images.size(0)
    scheduler.step()
    return total / len(loader.dataset)


optimizer, scheduler = make_optim(model)
losses = [train_epoch(model, optimizer, scheduler) for _ in range(3)]

ckpt_path = os.path.join(tempfile.mkdtemp(), "unet.pt")
torch.save({"epoch": 3, "model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict(),
            "scheduler_state_dict": scheduler.state_dict(), "losses": losses}, ckpt_path)
continued = [train_epoch(model, optimizer, scheduler) for _ in range(2)]

# Resume from the checkpoint into fresh objects: the same two epochs must follow.
checkpoint = torch.load(ckpt_path, weights_only=True)
resumed_model = UNet()
resumed_model.load_state_dict(checkpoint["model_state_dict"])
optimizer2, scheduler2 = make_optim(resumed_model)
optimizer2.load_state_dict(checkpoint["optimizer_state_dict"])
scheduler2.load_state_dict(checkpoint["scheduler_state_dict"])
assert checkpoint["epoch"] == 3 and checkpoint["losses"] == losses
assert scheduler2.get_last_lr() == [1e-2 * 0.5]  # saved after 3 epochs (step_size=2)
resumed = [train_epoch(resumed_model, optimizer2, scheduler2) for _ in range(2)]
assert all(abs(a - b) < 1e-5 for a, b in zip(continued, resumed)), (continued, resumed)
assert abs(optimizer2.param_groups[0]["lr"] - 1e-2 * 0.5 ** 2) < 1e-12, optimizer2.param_groups[0]["lr"]

resumed_model.eval()
with torch.no_grad():
    pred = (torch.sigmoid(resumed_model(init["images"])) > 0.5).float()
    iou = ((pred * init["masks"]).sum() / ((pred + init["masks"]) > 0).float().sum()).item()
all_losses = losses + resumed
assert all_losses[-1] < all_losses[0], all_losses
print("losses", " ".join(f"{v:.6f}" for v in all_losses))
print("iou", f"{iou:.4f}")
print("OK unet")
