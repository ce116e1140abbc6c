"""A tiny ViT: Conv2d patch embedding, cls token, learned position embedding resized with bicubic
interpolation, nn.TransformerEncoder(batch_first), AdamW parameter groups, clip_grad_norm_, and a
bfloat16 autocast evaluation.

usage: python vit.py [INIT.pt]   (INIT.pt: shared weights and data, read if present, else written)
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchEmbed(nn.Module):
    def __init__(self, patch=4, in_chans=1, dim=32):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # [B, N, D]


class ViT(nn.Module):
    def __init__(self, img=16, patch=4, dim=32, depth=2, heads=4, num_classes=4, dropout=0.1):
        super().__init__()
        self.patch = patch
        self.patch_embed = PatchEmbed(patch, 1, dim)
        self.grid = img // patch
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, 1 + self.grid * self.grid, dim))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.pos_drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def interpolate_pos_embed(self, h, w):
        """Resize the patch part of the position embedding to an h x w grid (bicubic), as when
        fine-tuning at a new resolution."""
        cls_pos, patch_pos = self.pos_embed[:, :1], self.pos_embed[:, 1:]
        if (h, w) == (self.grid, self.grid):
            return self.pos_embed
        dim = patch_pos.shape[-1]
        patch_pos = patch_pos.reshape(1, self.grid, self.grid, dim).permute(0, 3, 1, 2)
        patch_pos = F.interpolate(patch_pos, size=(h, w), mode="bicubic", align_corners=False)
        patch_pos = patch_pos.permute(0, 2, 3, 1).reshape(1, h * w, dim)
        return torch.cat((cls_pos, patch_pos), dim=1)

    def forward(self, x):
        b = x.shape[0]
        h, w = x.shape[2] // self.patch, x.shape[3] // self.patch
        x = self.patch_embed(x)
        cls = self.cls_token.expand(b, -1, -1)
        x = torch.cat((cls, x), dim=1) + self.interpolate_pos_embed(h, w)
        x = self.encoder(self.pos_drop(x))
        return self.head(self.norm(x[:, 0]))


def make_data(n, size=16):
    """Four classes: a bright bar in the top/bottom/left/right half."""
    y = torch.randint(0, 4, (n,))
    x = 0.2 * torch.randn(n, 1, size, size)
    half = size // 2
    for i in range(n):
        k = int(y[i])
        if k == 0:
            x[i, 0, :half, half - 1:half + 1] += 1.5
        elif k == 1:
            x[i, 0, half:, half - 1:half + 1] += 1.5
        elif k == 2:
            x[i, 0, half - 1:half + 1, :half] += 1.5
        else:
            x[i, 0, half - 1:half + 1, half:] += 1.5
    return x, y


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim <= 1 or name.endswith(".bias") or name in ("cls_token", "pos_embed"):
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


model = ViT()
init_path = sys.argv[1] if len(sys.argv) > 1 else None
if init_path and os.path.exists(init_path):
    init = torch.load(init_path)
    model.load_state_dict(init["model"])
else:
    init = {"model": model.state_dict(), "train": make_data(256), "test": make_data(64)}
    if init_path:
        torch.save(init, init_path)

groups = param_groups(model, 0.05)
optimizer = torch.optim.AdamW(groups, lr=3e-3, betas=(0.9, 0.999))
steps = 80
warmup = 5
scheduler = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / steps)))

# Sanity check before the real run: without dropout, a copy overfits one batch deterministically.
probe = ViT(dropout=0.0)
probe.load_state_dict(model.state_dict())
probe_opt = torch.optim.AdamW(param_groups(probe, 0.05), lr=3e-3)
probe_losses = []
for _ in range(5):
    loss = F.cross_entropy(probe(init["train"][0][:32]), init["train"][1][:32])
    probe_opt.zero_grad()
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(probe.parameters(), max_norm=0.5)
    probe_opt.step()
    probe_losses.append((loss.item(), total_norm.item()))
assert probe_losses[-1][0] < probe_losses[0][0], probe_losses

model.eval()
with torch.no_grad():
    xte, yte = init["test"]
    init_logits = model(xte)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        init_logits_bf16 = model(xte[:2]).float()
    init_pos_big = model.interpolate_pos_embed(6, 6)  # the 4x4 grid, bicubic to 6x6
model.train()

xtr, ytr = init["train"]
norms = []
for step in range(steps):
    idx = torch.arange(step * 32, step * 32 + 32) % xtr.shape[0]
    logits = model(xtr[idx])
    loss = F.cross_entropy(logits, ytr[idx])
    optimizer.zero_grad()
    loss.backward()
    norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)))
    optimizer.step()
    scheduler.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss:.4f} grad_norm {norms[-1]:.3f} lr {scheduler.get_last_lr()[0]:.5f}")

model.eval()
with torch.no_grad():
    acc = (model(xte).argmax(-1) == yte).float().mean().item()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits_bf16 = model(xte)
    acc_bf16 = (logits_bf16.float().argmax(-1) == yte).float().mean().item()
    # Fine-tuning at 24x24: the 4x4 position grid is resized to 6x6.
    big = F.interpolate(xte, size=(24, 24), mode="bilinear", align_corners=False)
    logits_big = model(big)

assert logits_bf16.dtype == torch.bfloat16, logits_bf16.dtype
assert logits_big.shape == (64, 4)
assert acc > 0.6 and acc_bf16 > 0.6, (acc, acc_bf16)  # chance is 0.25
assert all(g["weight_decay"] == 0.0 for g in optimizer.param_groups[1:])
assert len(optimizer.param_groups[0]["params"]) + len(optimizer.param_groups[1]["params"]) == len(list(model.parameters()))
print("groups", len(optimizer.param_groups[0]["params"]), len(optimizer.param_groups[1]["params"]))
print("init_logits", " ".join(f"{v:.5f}" for v in init_logits[:2].flatten().tolist()))
print("init_pos_embed_6x6", " ".join(f"{v:.5f}" for v in init_pos_big[0, 1:8, 0].tolist()))
print("init_logits_bf16", " ".join(f"{v:.5f}" for v in init_logits_bf16.flatten().tolist()))
print("probe_losses", " ".join(f"{v:.6f},{n:.6f}" for v, n in probe_losses))
print("acc", f"{acc:.3f}", "acc_bf16", f"{acc_bf16:.3f}")
print("OK vit")
