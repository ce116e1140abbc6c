"""A tiny GPT trained on tiny Shakespeare, generating with a KV cache and top-k / top-p sampling."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "..", "data", "tinyshakespeare.txt")) as f:
    text = f.read()[:30000]
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text])
V, T, D, H, L = len(chars), 32, 48, 4, 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(approximate="tanh"), nn.Linear(4 * D, D))
        self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)).view(1, 1, T, T))

    def attend(self, x, cache=None, use_sdpa=True):
        B, S, _ = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q, k, v = (t.view(B, S, H, D // H).transpose(1, 2) for t in (q, k, v))
        if cache is not None:
            if cache.get("k") is not None:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        if use_sdpa and cache is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
            P = k.size(2)
            att = att.masked_fill(~self.mask[:, :, P - S:P, :P], float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, S, D))

    def forward(self, x, cache=None, use_sdpa=True):
        x = x + self.attend(self.ln1(x), cache, use_sdpa)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(V, D)
        self.wpe = nn.Embedding(T, D)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.ln_f = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, V, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying
        self.apply(self._init)

    def _init(self, m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, targets=None, caches=None, pos0=0, use_sdpa=True):
        pos = torch.arange(pos0, pos0 + idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches[i], use_sdpa)
        logits = self.lm_head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, V), targets.view(-1))
        return logits, loss


def top_k_top_p(logits, top_k=10, top_p=0.9):
    if top_k:
        kth = torch.topk(logits, top_k).values[..., -1, None]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    sorted_logits, sorted_idx = torch.sort(logits, descending=True)
    cum = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
    remove = cum > top_p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    remove = remove.scatter(-1, sorted_idx, remove)
    return logits.masked_fill(remove, float("-inf"))


model = GPT()
init = sys.argv[1] if len(sys.argv) > 1 else None  # share initial weights between runs
if init and os.path.exists(init):
    model.load_state_dict(torch.load(init, weights_only=True))
elif init:
    torch.save(model.state_dict(), init)
with torch.no_grad():
    x0 = data[:4 * T].view(4, T)
    init_loss = model(x0, data[1:4 * T + 1].view(4, T))[1].item()
n_params = sum(p.numel() for p in model.parameters())
assert model.lm_head.weight is model.wte.weight
assert model.lm_head.weight.data_ptr() == model.wte.weight.data_ptr()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95))
losses = []
for step in range(40):
    ix = torch.randint(len(data) - T - 1, (16,))
    x = torch.stack([data[i:i + T] for i in ix])
    y = torch.stack([data[i + 1:i + T + 1] for i in ix])
    _, loss = compiled(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    losses.append(loss.item())

model.eval()
prompt = torch.tensor([[stoi[c] for c in "ROMEO:"]])
with torch.no_grad():
    # the cached path and the full recompute agree on the last position's logits
    full_sdpa, _ = model(prompt)
    full_manual, _ = model(prompt, use_sdpa=False)
    caches = [dict() for _ in range(L)]
    for t in range(prompt.size(1)):
        step_logits, _ = model(prompt[:, t:t + 1], caches=caches, pos0=t)
    cache_err = (step_logits[:, -1] - full_sdpa[:, -1]).abs().max().item()
    sdpa_err = (full_manual - full_sdpa).abs().max().item()

with torch.inference_mode():
    out = prompt
    caches = [dict() for _ in range(L)]
    logits, _ = model(out, caches=caches)
    for _ in range(20):
        probs = F.softmax(top_k_top_p(logits[:, -1] / 0.8), dim=-1)
        nxt = torch.multinomial(probs, 1)
        out = torch.cat([out, nxt], dim=1)
        logits, _ = model(nxt, caches=caches, pos0=out.size(1) - 1)
    assert not out.requires_grad
itos = {i: c for c, i in stoi.items()}
print(repr("".join(itos[i] for i in out[0].tolist())))
first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
print(f"params {n_params} loss {first:.3f} -> {last:.3f} cache_err {cache_err:.1e} sdpa_err {sdpa_err:.1e}")
ok = (last < first and out.shape == (1, 26) and cache_err < 1e-4 and sdpa_err < 1e-4
      and compiled(prompt)[0].shape == (1, 6, V))
print("RESULT", "ok" if ok else "bad", n_params, f"{init_loss:.5f}")
