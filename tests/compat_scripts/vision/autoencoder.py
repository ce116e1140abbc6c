"""A convolutional autoencoder on the bundled 8x8 digits, logged with SummaryWriter (add_scalar,
add_image, add_histogram), trained twice from torch.manual_seed to show the runs are identical.

usage: python autoencoder.py [LOGDIR]
"""
import gzip
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "data", "digits.csv.gz")


def load_digits():
    with gzip.open(DATA, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    images = torch.from_numpy(table[:, :64]).reshape(-1, 1, 8, 8) / 16.0
    labels = torch.from_numpy(table[:, 64]).long()
    return images[:512], labels[:512]


class AutoEncoder(nn.Module):
    def __init__(self, latent=8):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),    # 4x4
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(),   # 2x2
            nn.Flatten(), nn.Linear(64, latent),
        )
        self.decoder = nn.Sequential(
            nn.Linear(latent, 64), nn.ReLU(), nn.Unflatten(1, (16, 2, 2)),
            nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.ReLU(),   # 4x4
            nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1), nn.Sigmoid(),  # 8x8
        )
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.decoder(self.dropout(self.encoder(x)))


def train(seed, log_dir, images):
    torch.manual_seed(seed)
    model = AutoEncoder()
    g = torch.Generator()
    g.manual_seed(seed)
    loader = DataLoader(TensorDataset(images), batch_size=64, shuffle=True, generator=g)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    writer = SummaryWriter(log_dir=log_dir)
    writer.add_graph(model, images[:2])
    losses = []
    step = 0
    for epoch in range(4):
        for (x,) in loader:
            noisy = (x + 0.1 * torch.randn_like(x)).clamp(0, 1)
            recon = model(noisy)
            loss = F.binary_cross_entropy(recon, x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            writer.add_scalar("loss/train", loss.item(), step)
            step += 1
            losses.append(loss.item())
        writer.add_histogram("encoder/conv1.weight", model.encoder[0].weight, epoch)
        model.eval()
        with torch.no_grad():
            recon = model(images[:8])
        model.train()
        grid = torch.cat([images[:8], recon], dim=0)          # [16, 1, 8, 8]
        grid = grid.view(2, 8, 8, 8).permute(0, 2, 1, 3).reshape(16, 64)  # 2 rows of 8 digits
        writer.add_image("reconstructions", grid.unsqueeze(0), epoch)
        writer.add_images("inputs", images[:8], epoch)
    writer.close()
    # "Save the entire model" recipe: the module pickled whole, then loaded back for inference.
    path = os.path.join(log_dir, "model.pt")
    torch.save(model, path)
    restored = torch.load(path, weights_only=False)
    restored.eval()
    model.eval()
    with torch.no_grad():
        assert torch.equal(restored(images[:4]), model(images[:4]))
    return losses


images, labels = load_digits()
root = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
run1 = train(0, os.path.join(root, "run1"), images)
run2 = train(0, os.path.join(root, "run2"), images)
run3 = train(1, os.path.join(root, "run3"), images)
assert run1 == run2, "same seed, different losses"
assert run1 != run3, "different seeds, same losses"
assert sum(run1[-8:]) / 8 < 0.75 * sum(run1[:8]) / 8, (run1[:8], run1[-8:])
for run in ("run1", "run2"):
    files = [f for f in os.listdir(os.path.join(root, run)) if f.startswith("events.out.tfevents")]
    assert len(files) == 1 and os.path.getsize(os.path.join(root, run, files[0])) > 1000, files
print("first_last", f"{run1[0]:.5f}", f"{run1[-1]:.5f}", "steps", len(run1))
print("OK autoencoder")
