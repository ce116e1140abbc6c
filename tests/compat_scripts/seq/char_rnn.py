"""Char-RNN on tiny Shakespeare: Embedding + 2-layer LSTM + Linear, truncated BPTT."""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "..", "data", "tinyshakespeare.txt")
with open(DATA) as f:
    text = f.read()[:20000]
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)


class CharRNN(nn.Module):
    def __init__(self, vocab, emb=32, hidden=64, layers=2, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, hidden=None):
        out, hidden = self.lstm(self.embed(x), hidden)
        return self.head(out), hidden


model = CharRNN(len(chars))
init = sys.argv[1] if len(sys.argv) > 1 else None
if init and os.path.exists(init):
    model.load_state_dict(torch.load(init))
elif init:
    torch.save(model.state_dict(), init)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)

batch, bptt = 8, 32
n = data.size(0) // batch
streams = data[: n * batch].view(batch, n)  # each row one contiguous stream


def evaluate():
    model.eval()
    with torch.no_grad():
        x, y = streams[:, :200], streams[:, 1:201]
        logits, _ = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item()


first_loss = evaluate()
hidden = None
model.train()
losses = []
for step, start in enumerate(range(0, 40 * bptt, bptt)):
    x = streams[:, start:start + bptt]
    y = streams[:, start + 1:start + bptt + 1]
    if hidden is not None:
        hidden = tuple(h.detach() for h in hidden)
    logits, hidden = model(x, hidden)
    loss = F.cross_entropy(logits.view(-1, len(chars)), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss.item())
last_loss = evaluate()
print(f"ppl {math.exp(first_loss):.2f} -> {math.exp(last_loss):.2f} grad_norm {float(norm):.3f}")


def sample(prompt, length=50, temperature=0.8):
    model.eval()
    idx = torch.tensor([[stoi[c] for c in prompt]])
    out = list(prompt)
    hidden = None
    with torch.no_grad():
        logits, hidden = model(idx, hidden)
        for _ in range(length):
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1)
            out.append(itos[nxt.item()])
            logits, hidden = model(nxt, hidden)
    return "".join(out)


s = sample("ROMEO:")
print(repr(s[:40]))
ok = last_loss < first_loss and len(s) == 56 and all(c in stoi for c in s)
print("RESULT", "ok" if ok else "bad", f"{first_loss:.4f} {last_loss:.4f}")
