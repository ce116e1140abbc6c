"""DCGAN on 16x16 single-channel images (a tiny PyTorch training script).

usage: python dcgan.py [INIT.pt]
With INIT.pt: the weights, data and noise are read from it when it exists,
else made here and written to it (so two frameworks can start identically).
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
NZ, NGF, NDF, BATCH, STEPS = 8, 8, 8, 16, 6


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False),       # 4x4
            nn.BatchNorm2d(NGF * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False),  # 8x8
            nn.BatchNorm2d(NGF * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 2, 1, 4, 2, 1, bias=False),        # 16x16
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, NDF, 4, 2, 1, bias=False),                     # 8x8
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),               # 4x4
            nn.BatchNorm2d(NDF * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False),                 # 1x1
        )

    def forward(self, x):
        return self.main(x).view(-1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


netG, netD = Generator(), Discriminator()
netG.apply(weights_init)
netD.apply(weights_init)

init_path = sys.argv[1] if len(sys.argv) > 1 else None
if init_path and os.path.exists(init_path):
    init = torch.load(init_path)
    netG.load_state_dict(init["G"])
    netD.load_state_dict(init["D"])
else:
    # "Real" images: blurred blobs, scaled to [-1, 1] like Normalize((0.5,), (0.5,)).
    blobs = torch.rand(64, 1, 4, 4)
    real = F.interpolate(blobs, size=(16, 16), mode="bilinear", align_corners=False)
    real = (real - 0.5) / 0.5
    init = {"G": netG.state_dict(), "D": netD.state_dict(), "real": real,
            "noise": torch.randn(STEPS, BATCH, NZ, 1, 1), "fixed_noise": torch.randn(4, NZ, 1, 1)}
    if init_path:
        torch.save(init, init_path)

criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

losses = []
for step in range(STEPS):
    real = init["real"][(step * BATCH) % 64:(step * BATCH) % 64 + BATCH]
    b_size = real.size(0)
    # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    label = torch.full((b_size,), real_label, dtype=torch.float)
    output = netD(real)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = torch.sigmoid(output).mean().item()

    fake = netG(init["noise"][step])
    label.fill_(fake_label)
    output = netD(fake.detach())
    errD_fake = criterion(output, label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optimizerD.step()

    # (2) Update G: maximize log(D(G(z)))
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()
    losses.append((errD.item(), errG.item()))
    print(f"[{step}/{STEPS}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} D(x): {D_x:.4f}")

netG.eval()
with torch.no_grad():
    samples = netG(init["fixed_noise"]).detach().cpu()
assert samples.shape == (4, 1, 16, 16), samples.shape
assert samples.min() >= -1 and samples.max() <= 1
assert not samples.requires_grad
print("losses", " ".join(f"{d:.6f},{g:.6f}" for d, g in losses))
print("sample_mean", f"{samples.mean().item():.6f}")
print("OK dcgan")
