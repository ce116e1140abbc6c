"""Samplers: which dataset indices a DataLoader reads, in which order."""
import ember

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Base class: an iterable of indices (or of lists of indices for batch samplers)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _seeded_generator(generator):
    """The given generator, or a fresh one seeded from ember's global generator.

    Drawing the seed from the global generator makes ember.manual_seed fix the
    whole sequence of epochs, as in torch.
    """
    if generator is not None:
        return generator
    g = ember.Generator()
    g.manual_seed(int(ember.randint(0, 2 ** 62, (1,), dtype=ember.int64).item()))
    return g


class RandomSampler(Sampler):
    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = _seeded_generator(self.generator)
        if self.replacement:
            for start in range(0, self.num_samples, 32):
                count = min(32, self.num_samples - start)
                yield from ember.randint(0, n, (count,), dtype=ember.int64, generator=g).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from ember.randperm(n, generator=g).tolist()
        yield from ember.randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in ember.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probability proportional to `weights`."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = weights.tolist() if isinstance(weights, ember.Tensor) else list(weights)
        if not w or any(not x >= 0 for x in w) or sum(w) <= 0:
            raise ValueError("weights must be non-negative, finite and not all zero")
        if not replacement and num_samples > sum(1 for x in w if x > 0):
            raise RuntimeError("WeightedRandomSampler: cannot draw more samples without "
                               "replacement than there are non-zero weights")
        self.weights = ember.tensor(w, dtype=ember.float64)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        g = _seeded_generator(self.generator)
        weights = self.weights.tolist()
        u = ember.rand(self.num_samples, dtype=ember.float64, generator=g).tolist()
        if self.replacement:
            # Inverse CDF: index of the first cumulative weight above u * total.
            import bisect
            cum, total = [], 0.0
            for x in weights:
                total += x
                cum.append(total)
            for r in u:
                yield min(bisect.bisect_right(cum, r * total), len(cum) - 1)
            return
        # Without replacement: the k largest keys u^(1/w) (Efraimidis–Spirakis).
        keys = [(r ** (1.0 / w) if w > 0 else -1.0, i)
                for i, (r, w) in enumerate(zip(ember.rand(len(weights), dtype=ember.float64,
                                                          generator=g).tolist(), weights))]
        keys.sort(reverse=True)
        for _, i in keys[:self.num_samples]:
            yield i

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
