"""Trains a character-level GPT (BENCHMARKS.md W3, CPU size: 4 layers, 6 heads,
192 channels, context 128) on tiny-Shakespeare with ember, then samples text.

    python3 examples/gpt.py                   # about 10-20 minutes on 2 CPU cores
    python3 examples/gpt.py --iters 200       # a quicker, rougher run
    python3 examples/gpt.py --top-k 10        # sample among the 10 likeliest characters

Prints the training loss as it goes, the validation loss (nats per character)
at every evaluation, and a sample of generated text at the end.
"""
import argparse
import os
import time

import ember
import ember.nn.functional as F

from models import gpt

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEXT = os.path.join(HERE, "..", "data", "tinyshakespeare.txt")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--text", default=DEFAULT_TEXT, help="a plain-text corpus")
    p.add_argument("--iters", type=int, default=1500)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--n-embd", type=int, default=192)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=6)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-batches", type=int, default=20)
    p.add_argument("--sample-chars", type=int, default=400)
    p.add_argument("--top-k", type=int, default=0, help="sample among the k likeliest characters (0: all)")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--device", default="auto")
    return p.parse_args(argv)


class CharData:
    """The corpus as int64 character ids, split 90% train / 10% validation."""

    def __init__(self, path, block_size, device):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}
        ids = ember.tensor([self.index[c] for c in text], dtype=ember.int64)
        cut = int(0.9 * len(ids))
        self.splits = {"train": ids[:cut], "val": ids[cut:]}
        self.block_size, self.device = block_size, device

    def batch(self, split, batch_size):
        data = self.splits[split]
        starts = ember.randint(0, len(data) - self.block_size - 1, (batch_size,))
        offsets = ember.arange(self.block_size + 1)
        rows = data[starts.unsqueeze(1) + offsets]  # [B, T + 1]
        return rows[:, :-1].to(self.device), rows[:, 1:].to(self.device)

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


@ember.no_grad()
def estimate_loss(model, data, batches, batch_size):
    model.eval()
    out = {}
    for split in ("train", "val"):
        total = 0.0
        for _ in range(batches):
            x, y = data.batch(split, batch_size)
            total += model(x, y)[1].item()
        out[split] = total / batches
    model.train()
    return out


@ember.no_grad()
def sample(model, data, length, device, top_k=0):
    model.eval()
    idx = ember.tensor([[data.index["\n"]]], device=device)
    for _ in range(length):
        logits, _ = model(idx[:, -model.block_size:])
        logits = logits[:, -1, :]
        if top_k > 0:  # everything below the k-th largest logit gets probability 0
            kth = ember.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = F.softmax(logits, dim=-1)
        idx = ember.cat([idx, ember.multinomial(probs, 1)], dim=1)
    return data.decode(idx[0].tolist())


def main(argv=None):
    args = parse_args(argv)
    device = ember.device("cuda" if args.device == "auto" and ember.cuda.is_available() else
                          "cpu" if args.device == "auto" else args.device)
    ember.manual_seed(args.seed)
    data = CharData(args.text, args.block_size, device)
    model = gpt(ember, len(data.chars), args.block_size, args.n_embd, args.n_layer, args.n_head).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"ember {ember.__version__} on {device}: GPT with {n_params / 1e6:.2f}M parameters, vocabulary "
          f"{len(data.chars)}, {len(data.splits['train'])} training characters", flush=True)
    optimizer = ember.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.iters, eta_min=args.lr / 10)

    start = time.perf_counter()
    losses = {}
    for it in range(1, args.iters + 1):
        x, y = data.batch("train", args.batch_size)
        _, loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        ember.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if it % 25 == 0 or it == 1:
            ms = (time.perf_counter() - start) / it * 1e3
            print(f"iter {it}/{args.iters}: loss {loss.item():.4f} ({ms:.0f} ms/iter)", flush=True)
        if it % args.eval_every == 0 or it == args.iters:
            losses = estimate_loss(model, data, args.eval_batches, args.batch_size)
            print(f"iter {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f} nats/char", flush=True)
    print("\n--- sample ---")
    print(sample(model, data, args.sample_chars, device, args.top_k))
    print("--- end of sample ---")
    print(f"final validation loss {losses.get('val', float('nan')):.4f} nats/char "
          f"after {args.iters} iterations ({time.perf_counter() - start:.0f} s)")
    return losses.get("val")


if __name__ == "__main__":
    main()
