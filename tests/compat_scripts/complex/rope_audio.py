"""Two complex-number idioms of current models, in float32:
- LLaMA-style rotary position embeddings (precompute_freqs_cis with torch.polar, view_as_complex,
  multiply, view_as_real) inside a small causal transformer trained to predict a periodic sequence;
- an audio front end: stft magnitude -> log-mel-like features -> a linear classifier, and the
  istft round trip of the signals.

    python rope_audio.py [init.pt]

With an init path: loads the weights from it when it exists, else saves them there first."""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, freqs_cis):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim)
        k = self.wk(x).view(b, t, self.heads, self.head_dim)
        v = self.wv(x).view(b, t, self.heads, self.head_dim)
        q, k = apply_rotary_emb(q, k, freqs_cis)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))


class TinyLlama(nn.Module):
    def __init__(self, vocab=12, dim=32, heads=4, layers=2, max_len=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Attention(dim, heads) for _ in range(layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(dim) for _ in range(layers)])
        self.head = nn.Linear(dim, vocab)
        self.register_buffer("freqs_cis", precompute_freqs_cis(dim // heads, max_len), persistent=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        freqs_cis = self.freqs_cis[: tokens.shape[1]]
        for norm, block in zip(self.norms, self.blocks):
            x = x + block(norm(x), freqs_cis)
        return self.head(x)


class AudioClassifier(nn.Module):
    def __init__(self, n_fft=64, bands=12, classes=3):
        super().__init__()
        self.n_fft = n_fft
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("bands", torch.linspace(0, 1, n_fft // 2 + 1)[None, :] ** torch.arange(1, bands + 1)[:, None].float())
        self.fc = nn.Linear(bands, classes)

    def forward(self, audio):
        spec = torch.stft(audio, self.n_fft, hop_length=16, window=self.window, return_complex=True)
        power = spec.abs() ** 2
        features = torch.log1p(torch.einsum("kf,bft->bkt", self.bands, power)).mean(-1)
        return self.fc(features)


lm, audio_model = TinyLlama(), AudioClassifier()
init = sys.argv[1] if len(sys.argv) > 1 else None
if init and os.path.exists(init):
    state = torch.load(init)
    lm.load_state_dict(state["lm"])
    audio_model.load_state_dict(state["audio"])
elif init:
    torch.save({"lm": lm.state_dict(), "audio": audio_model.state_dict()}, init)

# the language model: token i + 1 follows token i (mod 12), from every start
tokens = (torch.arange(24)[None, :] + torch.arange(6)[:, None]) % 12
opt = torch.optim.AdamW(lm.parameters(), lr=3e-3)
lm_losses = []
for step in range(30):
    opt.zero_grad()
    logits = lm(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 12), tokens[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    lm_losses.append(loss.item())
print(f"lm loss {lm_losses[0]:.4f} -> {lm_losses[-1]:.4f}")

# audio: three tones with fixed phases; the labels are the tones
t = torch.arange(512).float() / 512
audio = torch.stack([torch.sin(2 * math.pi * f * t + p) for f in (20, 60, 140) for p in (0.0, 1.0)])
labels = torch.tensor([0, 0, 1, 1, 2, 2])
opt = torch.optim.Adam(audio_model.parameters(), lr=5e-2)
audio_losses = []
for step in range(30):
    opt.zero_grad()
    loss = F.cross_entropy(audio_model(audio), labels)
    loss.backward()
    opt.step()
    audio_losses.append(loss.item())
spec = torch.stft(audio, 64, hop_length=16, window=torch.hann_window(64), return_complex=True)
back = torch.istft(spec, 64, hop_length=16, window=torch.hann_window(64), length=audio.shape[-1])
round_trip = (back - audio).abs().max().item()
print(f"audio loss {audio_losses[0]:.4f} -> {audio_losses[-1]:.4f}, istft round trip {round_trip:.2e}")
ok = lm_losses[-1] < 0.5 * lm_losses[0] and audio_losses[-1] < 0.5 * audio_losses[0] and round_trip < 1e-4
print("RESULT", "ok" if ok else "bad", f"{lm_losses[0]:.6f} {audio_losses[0]:.6f} {lm_losses[-1]:.4f} {audio_losses[-1]:.4f}")
