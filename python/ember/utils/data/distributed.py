"""DistributedSampler: each process of a distributed run reads its own share of a dataset."""
import math

import ember
from ember.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


def _default_group_value(name):
    """get_world_size() / get_rank() of the default process group; ValueError when there is none."""
    import ember.distributed as dist
    is_initialized = getattr(dist, "is_initialized", None)
    if is_initialized is None or not is_initialized():
        raise ValueError(f"DistributedSampler: {name} was not given and the default process group has not "
                         "been initialized; call ember.distributed.init_process_group() first or pass "
                         "num_replicas and rank")
    return getattr(dist, "get_" + name)()


class DistributedSampler(Sampler):
    """Splits the indices of `dataset` among `num_replicas` processes, as torch's.

    Each epoch the indices are shuffled (when `shuffle`) with `seed + epoch`, so every
    process draws the same permutation and keeps the positions rank, rank + num_replicas, ...
    Call `set_epoch(epoch)` at the start of each epoch to get a new order. Without
    `drop_last` the list is padded with its own first indices so that every process gets
    the same number of samples; with it the tail that does not divide evenly is dropped.
    num_replicas and rank default to the default process group's world size and rank.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _default_group_value("world_size")
        if rank is None:
            rank = _default_group_value("rank")
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(f"DistributedSampler: num_replicas must be a positive int, got {num_replicas!r}")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last:
            self.num_samples = n // num_replicas  # the uneven tail is left out
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = ember.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ember.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        elif self.total_size > n and n > 0:
            # Pad with the list repeated as often as needed (a dataset smaller than the replicas).
            missing = self.total_size - n
            indices += (indices * math.ceil(missing / n))[:missing]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch the next shuffle is seeded with (seed + epoch), on every process alike."""
        self.epoch = epoch
