"""Skip-gram word2vec with negative sampling (sparse embeddings, SparseAdam) on tiny Shakespeare,
then a BiLSTM-CRF tagger (forward algorithm with logsumexp, Viterbi decoding) on a toy task."""
import collections
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "..", "data", "tinyshakespeare.txt")) as f:
    words = f.read()[:40000].lower().split()
counts = collections.Counter(words)
vocab = [w for w, c in counts.most_common(300)]
stoi = {w: i for i, w in enumerate(vocab)}
ids = torch.tensor([stoi[w] for w in words if w in stoi])
freq = torch.tensor([counts[w] for w in vocab], dtype=torch.float) ** 0.75
noise = freq / freq.sum()


class SkipGram(nn.Module):
    def __init__(self, n, d=32):
        super().__init__()
        self.center = nn.Embedding(n, d, sparse=True)
        self.context = nn.Embedding(n, d, sparse=True)
        nn.init.uniform_(self.center.weight, -0.5 / d, 0.5 / d)
        nn.init.zeros_(self.context.weight)

    def forward(self, c, o, neg):
        vc = self.center(c)
        pos = F.logsigmoid((vc * self.context(o)).sum(-1))
        negs = F.logsigmoid(-torch.bmm(self.context(neg), vc.unsqueeze(2)).squeeze(2)).sum(-1)
        return -(pos + negs).mean()


sg = SkipGram(len(vocab))
opt = torch.optim.SparseAdam(sg.parameters(), lr=0.01)
w2v_losses = []
for step in range(150):
    pos = torch.randint(2, len(ids) - 2, (128,))
    offset = torch.randint(1, 3, (128,)) * (torch.randint(0, 2, (128,)) * 2 - 1)
    c, o = ids[pos], ids[pos + offset]
    neg = torch.multinomial(noise, 128 * 5, replacement=True).view(128, 5)
    loss = sg(c, o, neg)
    opt.zero_grad()
    loss.backward()
    opt.step()
    w2v_losses.append(loss.item())
first, last = sum(w2v_losses[:10]) / 10, sum(w2v_losses[-10:]) / 10
print(f"word2vec loss {first:.3f} -> {last:.3f}")

# ---- BiLSTM-CRF: tag each token 1 if it equals the previous token, else 0 (needs context) ----
K, V = 2, 6


class BiLSTMCRF(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, 16)
        self.lstm = nn.LSTM(16, 16, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(32, K)
        self.trans = nn.Parameter(torch.zeros(K, K))

    def emissions(self, x):
        return self.emit(self.lstm(self.embed(x))[0])

    def nll(self, x, y):
        e = self.emissions(x)  # (B, T, K)
        score = e[:, 0]
        for t in range(1, x.size(1)):
            score = torch.logsumexp(score.unsqueeze(2) + self.trans + e[:, t].unsqueeze(1), dim=1)
        log_z = torch.logsumexp(score, dim=1)
        gold = e.gather(2, y.unsqueeze(2)).squeeze(2).sum(1) + self.trans[y[:, :-1], y[:, 1:]].sum(1)
        return (log_z - gold).mean()

    @torch.no_grad()
    def decode(self, x):
        e = self.emissions(x)
        score, back = e[:, 0], []
        for t in range(1, x.size(1)):
            score, idx = (score.unsqueeze(2) + self.trans + e[:, t].unsqueeze(1)).max(dim=1)
            back.append(idx)
        best = [score.argmax(dim=1)]
        for idx in reversed(back):
            best.append(idx.gather(1, best[-1].unsqueeze(1)).squeeze(1))
        return torch.stack(best[::-1], dim=1)


def toy(n):
    x = torch.randint(0, 3, (n, 8))
    y = torch.zeros_like(x)
    y[:, 1:] = (x[:, 1:] == x[:, :-1]).long()
    return x, y


crf = BiLSTMCRF()
opt = torch.optim.Adam(crf.parameters(), lr=0.02)
crf_losses = []
for step in range(80):
    x, y = toy(32)
    loss = crf.nll(x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    crf_losses.append(loss.item())
x, y = toy(200)
acc = (crf.decode(x) == y).float().mean()
print(f"crf nll {crf_losses[0]:.3f} -> {crf_losses[-1]:.3f} tag accuracy {acc:.3f}")
ok = last < first and crf_losses[-1] < crf_losses[0] and acc > 0.9 and crf.decode(x).shape == (200, 8)
print("RESULT", "ok" if ok else "bad", f"{acc:.3f}")
