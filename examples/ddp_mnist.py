"""Trains the MNIST convnet of examples/mnist.py with DistributedDataParallel:
one process per core (gloo) or per GPU (NCCL), each on its share of every
epoch, all ending with the same weights.

    ember-run --nproc-per-node 2 examples/ddp_mnist.py              # CPU, gloo
    ember-run --nproc-per-node gpu examples/ddp_mnist.py            # one process per GPU, NCCL
    ember-run --nnodes 2 --node-rank 0 --master-addr HOST --nproc-per-node 4 examples/ddp_mnist.py

--batch-size is per process: the global batch is world_size times larger.
Rank 0 prints the progress and saves the checkpoint (the inner module's
state_dict, loadable by examples/mnist.py's model without DDP's "module."
prefix).
"""
import argparse
import os
import time

import ember
import ember.distributed as dist
import ember.nn.functional as F
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset

from mnist import load_split
from models import mnist_cnn


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="folder with the MNIST IDX files (default: the bundled images)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64, help="per process")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--backend", default="auto", help="gloo, nccl or auto (nccl when this rank has a GPU)")
    p.add_argument("--checkpoint", default="checkpoints/ddp_mnist.safetensors")
    p.add_argument("--limit", type=int, default=0, help="use only this many training images (smoke tests)")
    return p.parse_args(argv)


def evaluate(model, loader, device):
    """Loss and accuracy over the whole test set: each rank scores its share, then one all_reduce."""
    model.eval()
    totals = ember.zeros(3, dtype=ember.float64, device=device)  # loss sum, correct, count
    with ember.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            totals += ember.stack([F.cross_entropy(out, y, reduction="sum").double(),
                                   (out.argmax(dim=1) == y).sum().double(),
                                   ember.tensor(float(y.shape[0]), dtype=ember.float64, device=device)])
    dist.all_reduce(totals)
    loss, correct, n = totals.tolist()
    return loss / n, correct / n


def main(argv=None):
    args = parse_args(argv)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_gpu = ember.cuda.is_available() and args.backend in ("auto", "nccl")
    backend = ("nccl" if use_gpu else "gloo") if args.backend == "auto" else args.backend
    device = ember.device(f"cuda:{local_rank}") if use_gpu else ember.device("cpu")
    dist.init_process_group(backend)  # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from ember-run
    rank, world = dist.get_rank(), dist.get_world_size()
    ember.manual_seed(args.seed + rank)  # differing seeds: DDP makes rank 0's weights everyone's

    x_train, y_train = load_split(args.data, True, args.limit)
    x_test, y_test = load_split(args.data, False)
    train_set, test_set = TensorDataset(x_train, y_train), TensorDataset(x_test, y_test)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
    train = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    test = DataLoader(test_set, batch_size=1000, sampler=DistributedSampler(test_set, shuffle=False))

    model = DDP(mnist_cnn(ember).to(device), device_ids=[local_rank] if use_gpu else None)
    optimizer = ember.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = ember.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    if rank == 0:
        print(f"ember {ember.__version__}: {world} processes ({backend}, {device.type}), {len(x_train)} training "
              f"images, batch {args.batch_size} per process ({args.batch_size * world} in all)", flush=True)

    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)  # a different shuffle each epoch, the same on every rank
        model.train()
        start, seen, total_loss = time.perf_counter(), 0, 0.0
        for x, y in train:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()  # gradients are averaged across ranks here, bucket by bucket
            optimizer.step()
            seen += y.shape[0]
            total_loss += loss.item() * y.shape[0]
        elapsed = time.perf_counter() - start
        scheduler.step()
        test_loss, accuracy = evaluate(model, test, device)
        if rank == 0:
            print(f"epoch {epoch}: rank 0 train loss {total_loss / seen:.4f}  test loss {test_loss:.4f}  "
                  f"test accuracy {100 * accuracy:.2f}%  {seen * world / elapsed:.0f} images/s in all "
                  f"({elapsed:.1f} s)", flush=True)
            os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
            ember.save(model.module.state_dict(), args.checkpoint)
    if rank == 0:
        print(f"final test accuracy {100 * accuracy:.2f}%; checkpoint {args.checkpoint}")
    dist.destroy_process_group()
    return accuracy


if __name__ == "__main__":
    main()
