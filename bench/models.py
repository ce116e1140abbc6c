"""Training steps of common small models on the CPU (a ResNet-style convnet with batch norm, an
LSTM and a GRU language/sequence model, a transformer encoder, a VAE, a DCGAN generator, a UNet-style
net with bilinear upsampling, LeNet), each step timed next to PyTorch's in the same process (when
importable), with the same code, shapes and Adam. One JSON line per model with ms per step and
ember/torch.

    PYTHONPATH=python python -m bench.models [--only lstm,gru] [--threads N]

Not one of BENCHMARKS.md's workloads: the shapes users train in tutorials, which W1-W3 do not
cover (recurrent layers, batch norm, transposed convolutions, upsampling).
"""
import json
import os
import sys

if __package__ in (None, ""):  # run as a script: python bench/models.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402

from bench.timing import interleaved_medians, named_cases_arguments, optional_torch, ratio  # noqa: E402


def resnet(fw):
    nn, F = fw.nn, fw.nn.functional

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))

    m = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), Block(32),
                      nn.Conv2d(32, 64, 3, stride=2, padding=1), Block(64), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(64, 10))
    x, y = fw.randn(32, 3, 32, 32), fw.randint(0, 10, (32,))
    return m, lambda: F.cross_entropy(m(x), y)


def lstm(fw):
    nn, F = fw.nn, fw.nn.functional
    emb, rnn, dec = nn.Embedding(1000, 128), nn.LSTM(128, 256, 2), nn.Linear(256, 1000)
    x, y = fw.randint(0, 1000, (35, 20)), fw.randint(0, 1000, (35 * 20,))

    def loss():
        out, _ = rnn(emb(x))
        return F.cross_entropy(dec(out).reshape(-1, 1000), y)
    return nn.ModuleList([emb, rnn, dec]), loss


def gru(fw):
    nn, F = fw.nn, fw.nn.functional
    rnn, fc = nn.GRU(64, 128, batch_first=True), nn.Linear(128, 5)
    x, y = fw.randn(32, 50, 64), fw.randint(0, 5, (32,))

    def loss():
        _, h = rnn(x)
        return F.cross_entropy(fc(h[-1]), y)
    return nn.ModuleList([rnn, fc]), loss


def transformer(fw):
    nn, F = fw.nn, fw.nn.functional
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(128, 4, 512, dropout=0.1, batch_first=True), 2)
    fc = nn.Linear(128, 10)
    x, y = fw.randn(16, 64, 128), fw.randint(0, 10, (16,))
    return nn.ModuleList([enc, fc]), lambda: F.cross_entropy(fc(enc(x).mean(1)), y)


def vae(fw):
    nn, F = fw.nn, fw.nn.functional
    e1, mu, lv = nn.Linear(784, 400), nn.Linear(400, 20), nn.Linear(400, 20)
    d1, d2 = nn.Linear(20, 400), nn.Linear(400, 784)
    x = fw.rand(128, 784)

    def loss():
        h = F.relu(e1(x))
        m, logvar = mu(h), lv(h)
        z = m + fw.randn_like(logvar) * fw.exp(0.5 * logvar)
        r = fw.sigmoid(d2(F.relu(d1(z))))
        kl = -0.5 * fw.sum(1 + logvar - m.pow(2) - logvar.exp())
        return F.binary_cross_entropy(r, x, reduction="sum") + kl
    return nn.ModuleList([e1, mu, lv, d1, d2]), loss


def dcgan(fw):
    nn = fw.nn
    g = nn.Sequential(nn.ConvTranspose2d(64, 128, 4, 1, 0, bias=False), nn.BatchNorm2d(128), nn.ReLU(True),
                      nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
                      nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(True),
                      nn.ConvTranspose2d(32, 3, 4, 2, 1, bias=False), nn.Tanh())
    z = fw.randn(32, 64, 1, 1)
    return g, lambda: g(z).square().mean()


def unet(fw):
    nn, F = fw.nn, fw.nn.functional
    down = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
    up = nn.Conv2d(32, 1, 3, padding=1)
    x, target = fw.randn(8, 3, 64, 64), fw.rand(8, 1, 64, 64)

    def loss():
        h = F.interpolate(down(x), scale_factor=2, mode="bilinear", align_corners=False)
        return F.binary_cross_entropy_with_logits(up(h), target)
    return nn.ModuleList([down, up]), loss


def lenet(fw):
    nn, F = fw.nn, fw.nn.functional
    m = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Dropout(0.5),
                      nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    x, y = fw.randn(64, 1, 28, 28), fw.randint(0, 10, (64,))
    return m, lambda: F.cross_entropy(m(x), y)


MODELS = {"resnet": resnet, "lstm": lstm, "gru": gru, "transformer": transformer, "vae": vae,
          "dcgan": dcgan, "unet": unet, "lenet": lenet}


def training_step(fw, build):
    fw.manual_seed(0)
    model, loss_fn = build(fw)
    opt = fw.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    return step


def main(argv=None):
    args = named_cases_arguments(__doc__, MODELS, argv, kind="model")
    torch = optional_torch()
    threads = args.threads or ember.get_num_threads()
    ember.set_num_threads(threads)
    frameworks = {"ember": ember}
    if torch is not None:
        torch.set_num_threads(threads)
        frameworks["torch"] = torch
    for name in args.only:
        steps = {fw_name: training_step(fw, MODELS[name]) for fw_name, fw in frameworks.items()}
        seconds = interleaved_medians(steps, args.repeats, warmup=3)
        out = {"model": name, "unit": "ms/step", "threads": threads}
        out.update({fw: round(s * 1e3, 2) for fw, s in seconds.items()})
        out["ember/torch"] = ratio(out["ember"], out.get("torch"))
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
