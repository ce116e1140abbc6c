"""Trains the classic MNIST convnet (BENCHMARKS.md W2, the model of PyTorch's
MNIST example) with ember, on the GPU when there is one.

    python3 examples/mnist.py                 # the 10,000 bundled images: 8,000 train / 2,000 test
    python3 examples/mnist.py --data DIR      # the standard IDX files in DIR (train-* and t10k-*)
    python3 examples/mnist.py --resume        # continue from the last checkpoint

Prints a progress bar while training, a line per epoch (loss, held-out
accuracy, throughput), and saves a checkpoint (model and optimizer state, a
safetensors file) after every epoch.
"""
import argparse
import os
import sys
import time

import ember
import ember.nn.functional as F
from ember.datasets import MNIST
from ember.utils.data import DataLoader, TensorDataset

from models import mnist_cnn

MEAN, STD = 0.1307, 0.3081  # of the MNIST training images


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="folder with the MNIST IDX files (default: the bundled images)")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--test-batch-size", type=int, default=1000)
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (the GPU when there is one)")
    p.add_argument("--num-workers", type=int, default=0)
    p.add_argument("--checkpoint", default="checkpoints/mnist.safetensors")
    p.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    p.add_argument("--limit", type=int, default=0, help="use only this many training images (smoke tests)")
    return p.parse_args(argv)


def load_split(data, train, limit=0):
    """(images as float32 [N, 1, 28, 28] normalized, labels int64 [N])."""
    ds = MNIST(data, train=train) if data else MNIST.bundled("train" if train else "test")
    images, labels = ds.data, ds.targets
    if limit:
        images, labels = images[:limit], labels[:limit]
    x = (images.float().unsqueeze(1) / 255.0 - MEAN) / STD
    return x, labels.long()


class ProgressBar:
    """One line, redrawn in place on a terminal, else printed every quarter."""

    def __init__(self, total, prefix):
        self.total, self.prefix, self.start = total, prefix, time.perf_counter()
        self.tty = sys.stdout.isatty()

    def update(self, done, loss):
        if not self.tty and done % max(1, self.total // 4) and done != self.total:
            return
        width = 30
        filled = width * done // self.total
        rate = done / max(time.perf_counter() - self.start, 1e-9)
        line = f"{self.prefix} [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} loss {loss:.4f} {rate:.1f} it/s"
        print(("\r" + line) if self.tty else line, end="" if self.tty else "\n", flush=True)
        if self.tty and done == self.total:
            print()


def evaluate(model, loader, device):
    model.eval()
    loss, correct, n = 0.0, 0, 0
    with ember.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            loss += F.cross_entropy(out, y, reduction="sum").item()
            correct += (out.argmax(dim=1) == y).sum().item()
            n += y.shape[0]
    return loss / n, correct / n


def main(argv=None):
    args = parse_args(argv)
    device = ember.device("cuda" if args.device == "auto" and ember.cuda.is_available() else
                          "cpu" if args.device == "auto" else args.device)
    ember.manual_seed(args.seed)

    x_train, y_train = load_split(args.data, True, args.limit)
    x_test, y_test = load_split(args.data, False)
    train = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True,
                       num_workers=args.num_workers, drop_last=False)
    test = DataLoader(TensorDataset(x_test, y_test), batch_size=args.test_batch_size)
    print(f"ember {ember.__version__} on {device}: {len(x_train)} training and {len(x_test)} held-out images, "
          f"batch {args.batch_size}, Adam lr {args.lr}", flush=True)

    model = mnist_cnn(ember).to(device)
    optimizer = ember.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = ember.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    first_epoch = 1
    if args.resume and os.path.exists(args.checkpoint):
        state = ember.load(args.checkpoint, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        first_epoch = state["epoch"] + 1
        print(f"resumed from {args.checkpoint} after epoch {state['epoch']}")

    accuracy = 0.0
    for epoch in range(first_epoch, args.epochs + 1):
        model.train()
        bar = ProgressBar(len(train), f"epoch {epoch}/{args.epochs}")
        start, seen, total_loss = time.perf_counter(), 0, 0.0
        for i, (x, y) in enumerate(train, 1):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            seen += y.shape[0]
            total_loss += loss.item() * y.shape[0]
            bar.update(i, loss.item())
        elapsed = time.perf_counter() - start
        scheduler.step()
        test_loss, accuracy = evaluate(model, test, device)
        print(f"epoch {epoch}: train loss {total_loss / seen:.4f}  test loss {test_loss:.4f}  "
              f"test accuracy {100 * accuracy:.2f}%  {seen / elapsed:.0f} images/s  ({elapsed:.1f} s)", flush=True)
        os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
        ember.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch}, args.checkpoint)
    print(f"final test accuracy {100 * accuracy:.2f}% on {len(x_test)} held-out images; checkpoint {args.checkpoint}")
    return accuracy


if __name__ == "__main__":
    main()
