"""ChainDataset (iterable datasets one after the other) and StackDataset (several
map-style datasets of one length read side by side), as torch.utils.data."""
from ember.utils.data.dataset import Dataset, IterableDataset

__all__ = ["ChainDataset", "StackDataset"]


class ChainDataset(IterableDataset):
    """Iterates each dataset of `datasets` to its end, in order (made lazily: datasets may be streams)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class StackDataset(Dataset):
    """Item i is (d0[i], d1[i], ...) for StackDataset(d0, d1, ...), or {name: d[i]} for StackDataset(name=d, ...)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = list(args) if args else list(kwargs.values())
        self._length = len(datasets[0])
        for d in datasets:
            if len(d) != self._length:
                raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {name: d[index] for name, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """A batch of items; datasets with their own __getitems__ fetch their column at once."""
        named = isinstance(self.datasets, dict)
        items = [dict() if named else [] for _ in indices]
        for name, d in (self.datasets.items() if named else enumerate(self.datasets)):
            if callable(getattr(d, "__getitems__", None)):
                column = d.__getitems__(indices)
                if len(column) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(column)}")
            else:
                column = [d[i] for i in indices]
            for item, value in zip(items, column):
                if named:
                    item[name] = value
                else:
                    item.append(value)
        return items if named else [tuple(item) for item in items]

    def __len__(self):
        return self._length
