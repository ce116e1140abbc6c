"""ChainDataset and StackDataset (torch.utils.data), alone and through DataLoader."""
import numpy as np
import pytest

import ember
from ember.utils.data import (ChainDataset, DataLoader, Dataset, IterableDataset, StackDataset,
                              TensorDataset)


class Count(IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self):
        return self.stop - self.start


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i

    def __len__(self):
        return self.n


class Batched(Squares):
    """A dataset with its own __getitems__ (called once per batch)."""
    calls = 0

    def __getitems__(self, indices):
        Batched.calls += 1
        return [-i for i in indices]


def test_chain_dataset_iterates_in_order_and_has_a_length():
    chain = ChainDataset([Count(0, 3), Count(10, 12)])
    assert list(chain) == [0, 1, 2, 10, 11]
    assert list(chain) == [0, 1, 2, 10, 11]  # iterable again
    assert len(chain) == 5
    assert list(Count(0, 2) + Count(5, 6)) == [0, 1, 5]
    assert isinstance(Count(0, 1) + Count(0, 1), ChainDataset)


def test_chain_dataset_through_dataloader():
    loader = DataLoader(ChainDataset([Count(0, 4), Count(4, 7)]), batch_size=3)
    batches = [b.tolist() for b in loader]
    assert batches == [[0, 1, 2], [3, 4, 5], [6]]


def test_chain_dataset_refuses_map_style_datasets():
    chain = ChainDataset([Count(0, 2), Squares(3)])
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(chain)
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        len(chain)


def test_stack_dataset_tuple_and_dict():
    x = ember.arange(6.0).reshape(3, 2)
    stacked = StackDataset(TensorDataset(x), Squares(3))
    assert len(stacked) == 3
    (row,), sq = stacked[2]
    assert row.tolist() == [4.0, 5.0] and sq == 4
    named = StackDataset(image=Squares(3), label=[7, 8, 9])
    assert named[1] == {"image": 1, "label": 8}
    assert named.__getitems__([0, 2]) == [{"image": 0, "label": 7}, {"image": 4, "label": 9}]
    assert stacked.__getitems__([1])[0][1] == 1


def test_stack_dataset_uses_nested_getitems():
    Batched.calls = 0
    stacked = StackDataset(Batched(4), Squares(4))
    assert stacked.__getitems__([1, 3]) == [(-1, 1), (-3, 9)]
    assert Batched.calls == 1


def test_stack_dataset_through_dataloader():
    labels = ember.tensor([0, 1, 0, 1])
    features = ember.arange(8.0).reshape(4, 2)
    loader = DataLoader(StackDataset(features=TensorDataset(features), label=TensorDataset(labels)), batch_size=2)
    batches = list(loader)
    assert len(batches) == 2
    np.testing.assert_array_equal(batches[1]["features"][0].numpy(), [[4.0, 5.0], [6.0, 7.0]])
    assert batches[0]["label"][0].tolist() == [0, 1]


def test_stack_dataset_errors():
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Squares(2), Squares(3))
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(a=Squares(2), b=[1])
    with pytest.raises(ValueError, match="both types are given"):
        StackDataset(Squares(2), b=Squares(2))
    with pytest.raises(ValueError, match="At least one dataset"):
        StackDataset()
