"""DDP launched the tutorial way (mp.spawn, gloo) training a CTC model on random sequences."""
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

BLANK, CLASSES, FRAMES, FEATS = 0, 6, 20, 10


class ToySpeech(Dataset):
    """Each frame's features encode a label; frames repeat labels, so CTC can learn to collapse them."""

    def __init__(self, n, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.targets = torch.randint(1, CLASSES, (n, 4), generator=g)
        frames = self.targets.repeat_interleave(FRAMES // 4, dim=1)
        self.x = F.one_hot(frames, FEATS).float() + 0.1 * torch.randn(n, FRAMES, FEATS, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.targets[i]


class CTCModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(FEATS, 32, batch_first=True, bidirectional=True)
        self.out = nn.Linear(64, CLASSES)

    def forward(self, x):
        return self.out(self.rnn(x)[0]).log_softmax(-1)


def main(rank, world_size, ckpt_path):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(CTCModel())
    dataset = ToySpeech(128)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    ctc = nn.CTCLoss(blank=BLANK, zero_infinity=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, targets in loader:
            log_probs = model(x).transpose(0, 1)  # (T, N, C) as CTCLoss wants
            input_lengths = torch.full((x.size(0),), FRAMES, dtype=torch.long)
            target_lengths = torch.full((x.size(0),), targets.size(1), dtype=torch.long)
            loss = ctc(log_probs, targets, input_lengths, target_lengths)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    metric = torch.tensor([sum(losses[-4:]) / 4])
    dist.all_reduce(metric, op=dist.ReduceOp.SUM)
    metric /= world_size
    checksum = torch.tensor([sum(p.detach().sum().item() for p in model.parameters())])
    gathered = [torch.zeros(1) for _ in range(world_size)]
    dist.all_gather(gathered, checksum)
    if rank == 0:
        torch.save(model.module.state_dict(), ckpt_path)
    dist.barrier()
    state = torch.load(ckpt_path, map_location="cpu")
    reloaded = CTCModel()
    reloaded.load_state_dict(state)
    with torch.no_grad():
        x, targets = dataset[:8]
        best = reloaded(x).argmax(-1)
    decoded = []
    for row in best.tolist():  # greedy CTC decode: collapse repeats, drop blanks
        seq = [c for i, c in enumerate(row) if c != BLANK and (i == 0 or c != row[i - 1])]
        decoded.append(seq)
    correct = sum(d == t for d, t in zip(decoded, targets.tolist()))
    agree = all(abs(g.item() - gathered[0].item()) < 1e-5 for g in gathered)
    print(f"rank {rank} loss {losses[0]:.3f} -> {losses[-1]:.3f} mean-metric {metric.item():.3f} "
          f"ranks agree {agree} decoded {correct}/8\n", end="", flush=True)  # one write: ranks share stdout
    if rank == 0:
        ok = agree and losses[-1] < losses[0] and metric.item() < losses[0]
        print(f"RESULT {'ok' if ok else 'bad'} {metric.item():.3f}\n", end="", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = 2
    port = sys.argv[1] if len(sys.argv) > 1 else "29512"
    os.environ["MASTER_PORT"] = port
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(main, args=(world_size, os.path.join(tmp, "ckpt.pt")), nprocs=world_size, join=True)
