"""ember.utils.data: datasets, samplers, collation and the DataLoader (with workers)."""
import collections
import os
import signal
import time

import numpy as np
import pytest

import ember
from ember.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                              IterableDataset, RandomSampler, SequentialSampler, Subset,
                              SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                              default_collate, default_convert, get_worker_info, random_split)
from harness import torch


def gen(seed):
    g = ember.Generator()
    g.manual_seed(seed)
    return g


def tolist(batches):
    """Batches (nested lists/tuples/dicts of tensors) as plain Python values."""
    if isinstance(batches, ember.Tensor):
        return batches.tolist()
    if isinstance(batches, dict):
        return {k: tolist(v) for k, v in batches.items()}
    if isinstance(batches, (list, tuple)):
        return [tolist(b) for b in batches]
    return batches


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"x": ember.tensor([float(i), float(i * i)]), "y": i, "name": f"s{i}"}


# ---- datasets

def test_tensor_dataset():
    x, y = ember.randn(5, 3), ember.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5
    a, b = ds[2]
    np.testing.assert_array_equal(a.numpy(), x.numpy()[2])
    assert b.item() == 2
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(ember.zeros(3), ember.zeros(4))


def test_subset_concat():
    ds = Squares(5)
    sub = Subset(ds, [4, 0, 2])
    assert len(sub) == 3 and sub[0]["y"] == 4 and sub[2]["y"] == 2
    cat = ConcatDataset([Squares(2), Squares(3)])
    assert len(cat) == 5
    assert [cat[i]["y"] for i in range(5)] == [0, 1, 0, 1, 2]
    assert cat[-1]["y"] == 2
    with pytest.raises(IndexError):
        cat[5]
    assert len(Squares(2) + Squares(4)) == 6


def test_random_split():
    ds = Squares(10)
    a, b = random_split(ds, [7, 3], generator=gen(0))
    assert len(a) == 7 and len(b) == 3
    assert sorted(a.indices + b.indices) == list(range(10))
    a2, _ = random_split(ds, [7, 3], generator=gen(0))
    assert a.indices == a2.indices
    parts = random_split(ds, [0.5, 0.3, 0.2], generator=gen(1))
    assert [len(p) for p in parts] == [5, 3, 2]
    parts = random_split(Squares(11), [0.5, 0.5], generator=gen(1))
    assert [len(p) for p in parts] == [6, 5]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])


# ---- samplers

def test_sequential_and_random_samplers():
    ds = Squares(6)
    assert list(SequentialSampler(ds)) == list(range(6))
    order = list(RandomSampler(ds, generator=gen(3)))
    assert sorted(order) == list(range(6))
    assert order == list(RandomSampler(ds, generator=gen(3)))
    with_repl = list(RandomSampler(ds, replacement=True, num_samples=50, generator=gen(2)))
    assert len(with_repl) == 50 and set(with_repl) <= set(range(6))
    assert len(set(with_repl)) < 50
    more = list(RandomSampler(ds, num_samples=9, generator=gen(2)))
    assert len(more) == 9 and sorted(more[:6]) == list(range(6))
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(ds, num_samples=0)
    with pytest.raises(TypeError, match="replacement"):
        RandomSampler(ds, replacement=1)


def test_random_sampler_follows_manual_seed():
    ds = Squares(20)
    ember.manual_seed(5)
    a = [list(RandomSampler(ds)) for _ in range(2)]
    ember.manual_seed(5)
    b = [list(RandomSampler(ds)) for _ in range(2)]
    assert a == b and a[0] != a[1]


def test_subset_random_and_weighted_samplers():
    s = list(SubsetRandomSampler([10, 20, 30], generator=gen(0)))
    assert sorted(s) == [10, 20, 30]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=gen(0)))
    assert set(w) == {1, 3} and w.count(3) > w.count(1)
    nr = list(WeightedRandomSampler([1, 1, 1, 0], 3, replacement=False, generator=gen(0)))
    assert sorted(nr) == [0, 1, 2]
    with pytest.raises(ValueError):
        WeightedRandomSampler([1.0, -1.0], 2)


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3
    assert len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(range(3), 0, False)


# ---- collation

Point = collections.namedtuple("Point", "a b")


def test_default_collate_types():
    b = default_collate([1, 2, 3])
    assert b.dtype == ember.int64 and b.tolist() == [1, 2, 3]
    assert default_collate([1.5, 2.0]).dtype == ember.float64
    assert default_collate([True, False]).dtype == ember.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    arr = default_collate([np.zeros(2, np.float32), np.ones(2, np.float32)])
    assert arr.dtype == ember.float32 and list(arr.shape) == [2, 2]
    scal = default_collate([np.float32(1), np.float32(2)])
    assert scal.dtype == ember.float32 and scal.tolist() == [1.0, 2.0]
    t = default_collate([ember.ones(2, 3), ember.zeros(2, 3)])
    assert list(t.shape) == [2, 2, 3]


def test_default_collate_nested():
    batch = [{"x": ember.tensor([1.0]), "p": Point(1, "u"), "l": [1, (2.0, 3)]},
             {"x": ember.tensor([2.0]), "p": Point(2, "v"), "l": [4, (5.0, 6)]}]
    out = default_collate(batch)
    assert out["x"].tolist() == [[1.0], [2.0]]
    assert isinstance(out["p"], Point) and out["p"].a.tolist() == [1, 2] and out["p"].b == ["u", "v"]
    assert isinstance(out["l"], list)
    assert out["l"][0].tolist() == [1, 4]
    assert out["l"][1][0].tolist() == [2.0, 5.0] and out["l"][1][1].tolist() == [3, 6]
    tup = default_collate([(ember.ones(1), 0), (ember.zeros(1), 1)])
    assert isinstance(tup, list) and len(tup) == 2
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError):
        default_collate([object(), object()])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": 1, "c": (np.float64(2.0), "s")})
    assert isinstance(out["a"], ember.Tensor) and out["a"].tolist() == [0, 1, 2]
    assert out["b"] == 1 and isinstance(out["c"][0], ember.Tensor) and out["c"][1] == "s"


# ---- DataLoader

def test_batches_and_len():
    ds = TensorDataset(ember.arange(10).float(), ember.arange(10))
    dl = DataLoader(ds, batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert batches[0][0].tolist() == [0.0, 1.0, 2.0, 3.0] and batches[2][1].tolist() == [8, 9]
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and [len(b[1]) for b in dl] == [4, 4]
    one = list(DataLoader(ds))
    assert len(one) == 10 and list(one[0][0].shape) == [1]
    unbatched = list(DataLoader(ds, batch_size=None))
    assert len(unbatched) == 10 and unbatched[3][1].item() == 3


def test_nested_batches():
    dl = DataLoader(Squares(5), batch_size=2)
    b = next(iter(dl))
    assert b["x"].tolist() == [[0.0, 0.0], [1.0, 1.0]] and b["y"].tolist() == [0, 1]
    assert b["name"] == ["s0", "s1"]


def test_shuffle_reproducible_with_seed():
    ds = TensorDataset(ember.arange(30))
    epochs = lambda dl: [[b[0].tolist() for b in dl] for _ in range(2)]
    ember.manual_seed(0)
    a = epochs(DataLoader(ds, batch_size=4, shuffle=True))
    ember.manual_seed(0)
    b = epochs(DataLoader(ds, batch_size=4, shuffle=True))
    assert a == b and a[0] != a[1]
    assert sorted(sum(a[0], [])) == list(range(30))
    c = epochs(DataLoader(ds, batch_size=4, shuffle=True, generator=gen(1)))
    d = epochs(DataLoader(ds, batch_size=4, shuffle=True, generator=gen(1)))
    assert c == d


def test_argument_validation():
    ds = Squares(4)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=BatchSampler(range(4), 2, False), batch_size=2)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=BatchSampler(range(4), 2, False), drop_last=True)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(Stream(3), shuffle=True)
    dl = DataLoader(ds, batch_sampler=BatchSampler(range(4), 3, False), pin_memory=True)
    assert [b["y"].tolist() for b in dl] == [[0, 1, 2], [3]]


def test_custom_collate_and_sampler():
    dl = DataLoader(Squares(6), batch_size=3, sampler=[5, 4, 3, 2, 1, 0],
                    collate_fn=lambda items: [it["y"] for it in items])
    assert list(dl) == [[5, 4, 3], [2, 1, 0]]


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def test_iterable_dataset():
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(list(DataLoader(Stream(7), batch_size=3, drop_last=True))) == 2
    got = sum((b.tolist() for b in DataLoader(Stream(11), batch_size=2, num_workers=2)), [])
    assert sorted(got) == list(range(11))


# ---- workers

def test_workers_match_single_process():
    ds = Squares(23)
    for kw in [dict(batch_size=4), dict(batch_size=3, shuffle=True, drop_last=True)]:
        ref = tolist(list(DataLoader(ds, generator=gen(7), **kw)))
        got = tolist(list(DataLoader(ds, num_workers=2, generator=gen(7), **kw)))
        assert got == ref
    dl = DataLoader(TensorDataset(ember.randn(9, 2).to(ember.bfloat16)), batch_size=5, num_workers=2)
    assert [b[0].dtype for b in dl] == [ember.bfloat16] * 2


def test_persistent_workers_epochs():
    dl = DataLoader(Squares(10), batch_size=3, num_workers=2, persistent_workers=True)
    first = tolist(list(dl))
    assert tolist(list(dl)) == first
    assert tolist(list(DataLoader(Squares(10), batch_size=3))) == first


def record_worker(worker_id):
    info = get_worker_info()
    assert info.id == worker_id and info.num_workers == 2
    os.environ["EMBER_TEST_WORKER"] = str(worker_id)


class WhichWorker(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return int(os.environ.get("EMBER_TEST_WORKER", "-1")), get_worker_info().id


def test_worker_init_fn_and_info():
    assert get_worker_info() is None
    got = tolist(list(DataLoader(WhichWorker(), batch_size=2, num_workers=2,
                                 worker_init_fn=record_worker)))
    # batches alternate between workers 0 and 1, in order
    assert got == [[[0, 0], [0, 0]], [[1, 1], [1, 1]]] * 2


class Faulty(Dataset):
    def __init__(self, action):
        self.action = action

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 6:
            if self.action == "raise":
                raise KeyError("bad sample 6")
            if self.action == "exit":
                os._exit(7)
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def test_worker_exception_names_worker():
    # Re-raised with its own type (as torch), the message naming the worker and holding its traceback.
    with pytest.raises(KeyError, match=r"Caught KeyError in DataLoader worker process 1\.\nOriginal Traceback"
                                       r"(.|\n)*bad sample 6") as info:
        list(DataLoader(Faulty("raise"), batch_size=2, num_workers=2))
    assert str(info.value).startswith("Caught KeyError")  # KeyError's quoting kept out of the message


class TwoArgError(Exception):
    def __init__(self, code, detail):
        super().__init__(code, detail)


class RaisesAny(Dataset):
    def __init__(self, make_error):
        self.make_error = make_error

    def __len__(self):
        return 4

    def __getitem__(self, i):
        raise self.make_error()


def _local_error_type():
    class Local(ValueError):  # cannot be pickled: its type cannot reach the main process
        pass
    return Local("local")


@pytest.mark.parametrize("make_error,raised,caught", [
    (lambda: ValueError("bad value"), ValueError, "ValueError"),
    (lambda: TwoArgError(3, "detail"), RuntimeError, "TwoArgError"),  # not rebuildable from one message
    (_local_error_type, RuntimeError, "Local"),
], ids=["builtin", "two-arg", "unpicklable"])
def test_worker_exception_type(make_error, raised, caught):
    with pytest.raises(raised, match=f"Caught {caught} in DataLoader worker process 0"):
        list(DataLoader(RaisesAny(make_error), batch_size=2, num_workers=1))
    if torch is not None and raised is ValueError:
        class TorchSide(torch.utils.data.Dataset):
            def __len__(self):
                return 2

            def __getitem__(self, i):
                raise ValueError("bad value")
        with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 0"):
            list(torch.utils.data.DataLoader(TorchSide(), num_workers=1))


@pytest.mark.parametrize("action,why", [("exit", "exit code 7"), ("kill", "signal 9")])
def test_dead_worker_raises_not_hangs(action, why):
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=f"worker 1 .*{why}"):
        list(DataLoader(Faulty(action), batch_size=2, num_workers=2))
    assert time.monotonic() - start < 20


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(3)
        return i


def test_timeout():
    with pytest.raises(RuntimeError, match="timed out"):
        list(DataLoader(Slow(), num_workers=1, timeout=0.3))


def test_worker_start_error():
    def bad_init(worker_id):
        raise ValueError("cannot start")
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process (.|\n)*cannot start"):
        list(DataLoader(Squares(4), num_workers=2, worker_init_fn=bad_init))


def test_worker_error_comes_in_order():
    it = iter(DataLoader(Faulty("raise"), batch_size=2, num_workers=2))
    assert [next(it).tolist() for _ in range(3)] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(KeyError, match="worker process 1"):
        next(it)


def test_persistent_workers_abandoned_epoch():
    dl = DataLoader(Squares(12), batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(dl)
    next(it)  # leave the epoch with tasks still in flight
    assert [b["y"].tolist() for b in dl] == [[i, i + 1] for i in range(0, 12, 2)]


def test_break_out_of_epoch_is_cheap():
    start = time.monotonic()
    for _ in range(3):
        for b in DataLoader(Squares(100), batch_size=2, num_workers=2):
            break
    assert time.monotonic() - start < 10


class RandomItems(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return ember.rand(2)


def test_worker_random_state_follows_generator():
    runs = [tolist(list(DataLoader(RandomItems(), batch_size=2, num_workers=2, generator=gen(4))))
            for _ in range(2)]
    assert runs[0] == runs[1]
    other = tolist(list(DataLoader(RandomItems(), batch_size=2, num_workers=2, generator=gen(5))))
    assert other != runs[0]
    flat = sum(runs[0], [])
    assert len({tuple(x) for x in flat}) == 8  # workers do not repeat each other's draws


class NumpyDraws(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return float(np.random.rand())


def test_workers_seed_numpy_differently():
    # Forked workers would all continue the parent's numpy stream: each is seeded from its id and the
    # epoch's base seed instead (as torch does), so no two draw the same numbers.
    values = [v for batch in DataLoader(NumpyDraws(), batch_size=2, num_workers=2) for v in batch.tolist()]
    assert len(set(values)) == 8
    again = [v for batch in DataLoader(NumpyDraws(), batch_size=2, num_workers=2) for v in batch.tolist()]
    assert set(again).isdisjoint(values)  # a new epoch, a new base seed
    runs = [[v for batch in DataLoader(NumpyDraws(), batch_size=2, num_workers=2, generator=gen(3))
             for v in batch.tolist()] for _ in range(2)]
    assert runs[0] == runs[1]  # reproducible from the loader's generator
    if torch is not None:
        ref = [v for batch in torch.utils.data.DataLoader(NumpyDraws(), batch_size=2, num_workers=2)
               for v in batch.tolist()]
        assert len(set(ref)) == 8


def test_spawned_workers_get_pickled_tensors():
    # 'spawn' starts fresh interpreters, so the dataset's tensors travel by pickle.
    x = ember.arange(14).float().reshape(7, 2)
    y = ember.arange(7)
    dl = DataLoader(TensorDataset(x, y), batch_size=3, num_workers=2, multiprocessing_context="spawn",
                    timeout=30)
    batches = list(dl)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6]]
    assert batches[1][0].tolist() == [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]
    assert batches[0][0].dtype == ember.float32
