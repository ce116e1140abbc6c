"""BERT-style masked-LM pretraining, then classification fine-tuning, on random token data."""
import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
VOCAB, PAD, MASK, CLS = 40, 0, 1, 2
SEQ, D = 16, 32
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):
    def lr_lambda(step):
        if step < num_warmup_steps:
            return float(step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - step) / float(max(1, num_training_steps - num_warmup_steps)))
    return LambdaLR(optimizer, lr_lambda)


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, SEQ, D))
        layer = nn.TransformerEncoderLayer(D, nhead=4, dim_feedforward=64, dropout=0.1,
                                           batch_first=True, norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D)
        self.mlm_head = nn.Linear(D, VOCAB)

    def forward(self, ids, pad_mask):
        h = self.tok(ids) + self.pos[:, : ids.size(1)]
        h = self.encoder(h, src_key_padding_mask=pad_mask)
        return self.norm(h)


def make_data(n):
    # Sequences with a simple structure: token i+1 follows token i (mod range) so MLM is learnable.
    start = torch.randint(3, VOCAB, (n, 1))
    ids = (start + torch.arange(SEQ)) % (VOCAB - 3) + 3
    lengths = torch.randint(SEQ // 2, SEQ + 1, (n,))
    pad_mask = torch.arange(SEQ).unsqueeze(0) >= lengths.unsqueeze(1)
    ids = ids.masked_fill(pad_mask, PAD)
    ids[:, 0] = CLS
    # Fine-tuning's target: is the sequence's first token in the lower half of the range? Learnable
    # in the few steps given (start's parity was not: its loss barely moved, and a run could fail).
    labels = (start.squeeze(1) < (VOCAB + 3) // 2).long()
    return ids, pad_mask, labels


def mask_tokens(ids, pad_mask, prob=0.15):
    labels = ids.clone()
    candidates = ~pad_mask & (ids != CLS)
    chosen = (torch.rand(ids.shape) < prob) & candidates
    labels[~chosen] = -100
    replace = torch.bernoulli(torch.full(ids.shape, 0.8)).bool() & chosen
    inputs = torch.where(replace, torch.full_like(ids, MASK), ids)
    random_tok = torch.bernoulli(torch.full(ids.shape, 0.5)).bool() & chosen & ~replace
    inputs = torch.where(random_tok, torch.randint(3, VOCAB, ids.shape), inputs)
    return inputs, labels


model = Bert().to(device)
no_decay = ["bias", "norm", "LayerNorm.weight"]
groups = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
opt = torch.optim.AdamW(groups, lr=3e-3)
steps = 60
sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=6, num_training_steps=steps)
scaler = torch.cuda.amp.GradScaler(enabled=False)
ids, pad_mask, labels = make_data(512)
loader = DataLoader(TensorDataset(ids, pad_mask, labels), batch_size=32, shuffle=True, drop_last=True)

mlm_losses = []
model.train()
step = 0
while step < steps:
    for b_ids, b_mask, _ in loader:
        inputs, targets = mask_tokens(b_ids, b_mask)
        with torch.autocast(device_type=device.type, enabled=False):
            logits = model.mlm_head(model(inputs.to(device), b_mask.to(device)))
            loss = F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1).to(device), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        sched.step()
        mlm_losses.append(loss.item())
        step += 1
        if step == steps:
            break
print(f"mlm loss {sum(mlm_losses[:5]) / 5:.3f} -> {sum(mlm_losses[-5:]) / 5:.3f} lr {sched.get_last_lr()[0]:.2e}")

buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = Bert()
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(D, 2))

    def forward(self, ids, pad_mask):
        return self.head(self.bert(ids, pad_mask)[:, 0])


clf = Classifier().to(device)
missing, unexpected = clf.bert.load_state_dict(torch.load(buffer, map_location=device), strict=False)
assert not missing and not unexpected, (missing, unexpected)
ft_opt = torch.optim.AdamW(clf.parameters(), lr=2e-3, weight_decay=0.01)
scaler = torch.amp.GradScaler("cuda", enabled=torch.cuda.is_available())
cls_losses = []
for epoch in range(3):
    for b_ids, b_mask, b_labels in loader:
        logits = clf(b_ids.to(device), b_mask.to(device))
        loss = F.cross_entropy(logits, b_labels.to(device))
        ft_opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(ft_opt)
        scaler.update()
        cls_losses.append(loss.item())
clf.eval()
with torch.no_grad():
    t_ids, t_mask, t_labels = (t.to(device) for t in make_data(256))
    acc = (clf(t_ids, t_mask).argmax(-1) == t_labels).float().mean().item()
first, last = sum(cls_losses[:5]) / 5, sum(cls_losses[-5:]) / 5
print(f"cls loss {first:.3f} -> {last:.3f} acc {acc:.3f}")
ok = (sum(mlm_losses[-5:]) < sum(mlm_losses[:5]) and last < first and math.isfinite(last)
      and acc > 0.8 and abs(sched.get_last_lr()[0]) < 1e-12)
print("RESULT", "ok" if ok else "bad", f"{acc:.3f}")
