"""GRU encoder/decoder with additive attention learning to reverse random sequences."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
random.seed(0)
PAD, SOS, EOS, VOCAB = 0, 1, 2, 12


def make_batch(n):
    srcs, tgts = [], []
    for _ in range(n):
        seq = torch.randint(3, VOCAB, (random.randint(3, 7),))
        srcs.append(seq)
        tgts.append(torch.cat([seq.flip(0), torch.tensor([EOS])]))
    lengths = torch.tensor([len(s) for s in srcs])
    return (pad_sequence(srcs, batch_first=True, padding_value=PAD), lengths,
            pad_sequence(tgts, batch_first=True, padding_value=PAD))


class Encoder(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden, padding_idx=PAD)
        self.gru = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, hidden)

    def forward(self, src, lengths):
        packed = pack_padded_sequence(self.embed(src), lengths, batch_first=True, enforce_sorted=False)
        out, h = self.gru(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        assert torch.equal(out_lengths, lengths)
        h = torch.tanh(self.proj(torch.cat([h[0], h[1]], dim=-1)))
        return self.proj(out), h.unsqueeze(0)


class AdditiveAttention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w_q = nn.Linear(hidden, hidden, bias=False)
        self.w_k = nn.Linear(hidden, hidden, bias=False)
        self.v = nn.Linear(hidden, 1, bias=False)

    def forward(self, query, keys, mask):
        scores = self.v(torch.tanh(self.w_q(query).unsqueeze(1) + self.w_k(keys))).squeeze(-1)
        scores = scores.masked_fill(mask, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)
        return context, weights


class Decoder(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden, padding_idx=PAD)
        self.attn = AdditiveAttention(hidden)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(2 * hidden, VOCAB)

    def forward(self, token, hidden, enc_out, mask):
        context, weights = self.attn(hidden[-1], enc_out, mask)
        x = torch.cat([self.embed(token), context], dim=-1).unsqueeze(1)
        out, hidden = self.gru(x, hidden)
        return self.out(torch.cat([out.squeeze(1), context], dim=-1)), hidden, weights


encoder, decoder = Encoder(), Decoder()
params = list(encoder.parameters()) + list(decoder.parameters())
opt = torch.optim.Adam(params, lr=5e-3)
criterion = nn.CrossEntropyLoss(ignore_index=PAD)


def run(src, lengths, tgt, teacher_forcing):
    enc_out, hidden = encoder(src, lengths)
    mask = src == PAD
    token = torch.full((src.size(0),), SOS, dtype=torch.long)
    logits_all, attn_all = [], []
    for t in range(tgt.size(1)):
        logits, hidden, weights = decoder(token, hidden, enc_out, mask)
        logits_all.append(logits)
        attn_all.append(weights)
        use_teacher = random.random() < teacher_forcing
        token = tgt[:, t] if use_teacher else logits.argmax(-1)
    return torch.stack(logits_all, 1), torch.stack(attn_all, 1)


losses = []
for step in range(60):
    src, lengths, tgt = make_batch(16)
    logits, attn = run(src, lengths, tgt, teacher_forcing=0.5)
    loss = criterion(logits.reshape(-1, VOCAB), tgt.reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    losses.append(loss.item())

src, lengths, tgt = make_batch(32)
with torch.no_grad():
    logits, attn = run(src, lengths, tgt, teacher_forcing=0.0)
pred = logits.argmax(-1)
keep = tgt != PAD
acc = (pred[keep] == tgt[keep]).float().mean().item()
pad = (src == PAD).unsqueeze(1).expand_as(attn)
pad_attention = attn.masked_select(pad).abs().max().item() if pad.any() else 0.0
first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
print(f"loss {first:.3f} -> {last:.3f} acc {acc:.3f} attention on padding {pad_attention:.2e}")
ok = last < first and pad_attention == 0.0 and attn.shape == (32, tgt.size(1), src.size(1))
print("RESULT", "ok" if ok else "bad", f"{first:.4f} {last:.4f}")
