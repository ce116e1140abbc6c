"""A 2-D Fourier neural operator (complex spectral weights, rfft2 / irfft2, slice assignment into a
complex spectrum, Adam on complex parameters) learning a heat-equation step, in float64.

    python fourier_neural_operator.py [init.pt]

With an init path: loads the weights from it when it exists, else saves them there first, so two
frameworks can start from the same weights. The data are deterministic (no random draws)."""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


class SpectralConv2d(nn.Module):
    def __init__(self, cin, cout, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (cin * cout)
        self.w1 = nn.Parameter(scale * torch.rand(cin, cout, modes, modes, dtype=torch.cdouble))
        self.w2 = nn.Parameter(scale * torch.rand(cin, cout, modes, modes, dtype=torch.cdouble))

    def forward(self, x):
        b, _, h, w = x.shape
        m = self.modes
        x_ft = torch.fft.rfft2(x, norm="ortho")
        out_ft = torch.zeros(b, self.w1.shape[1], h, w // 2 + 1, dtype=torch.cdouble, device=x.device)
        out_ft[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m, :m], self.w1)
        out_ft[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m:, :m], self.w2)
        return torch.fft.irfft2(out_ft, s=(h, w), norm="ortho")


class FNO(nn.Module):
    def __init__(self, width=8, modes=5):
        super().__init__()
        self.lift = nn.Conv2d(1, width, 1)
        self.spectral = nn.ModuleList([SpectralConv2d(width, width, modes) for _ in range(2)])
        self.pointwise = nn.ModuleList([nn.Conv2d(width, width, 1) for _ in range(2)])
        self.project = nn.Conv2d(width, 1, 1)

    def forward(self, x):
        x = self.lift(x)
        for spectral, pointwise in zip(self.spectral, self.pointwise):
            x = F.gelu(spectral(x) + pointwise(x))
        return self.project(x)


def fields(n=8, size=16):
    """Smooth periodic fields: sums of a few sines and cosines with fixed frequencies and phases."""
    grid = torch.linspace(0, 2 * math.pi, size + 1)[:-1]
    yy, xx = torch.meshgrid(grid, grid, indexing="ij")
    out = []
    for i in range(n):
        f = sum(math.cos(1.3 * i + k) * torch.sin((k + 1) * xx + 0.5 * i) * torch.cos((i % 3 + 1) * yy + k)
                for k in range(3))
        out.append(f)
    return torch.stack(out).unsqueeze(1)


def heat_step(u, t=0.05):
    """The exact solution operator of u_t = Laplacian(u) over time t, through the spectrum."""
    h, w = u.shape[-2:]
    ky = torch.fft.fftfreq(h, d=1.0 / h)
    kx = torch.fft.rfftfreq(w, d=1.0 / w)
    decay = torch.exp(-t * (ky[:, None] ** 2 + kx[None, :] ** 2))
    return torch.fft.irfft2(torch.fft.rfft2(u) * decay, s=(h, w))


model = FNO()
init = sys.argv[1] if len(sys.argv) > 1 else None
if init and os.path.exists(init):
    model.load_state_dict(torch.load(init))
elif init:
    torch.save(model.state_dict(), init)

x = fields()
y = heat_step(x)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
losses = []
for step in range(40):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.6f}")
complex_params = sum(p.numel() for p in model.parameters() if p.is_complex())
ok = losses[-1] < 0.5 * losses[0] and complex_params == 2 * 2 * 8 * 8 * 5 * 5
print("RESULT", "ok" if ok else "bad", f"{losses[0]:.10f} {losses[-1]:.10f} {complex_params}")
