"""DataLoader worker processes: the loop they run and how batches cross the pipe.

ember.Tensor is not picklable, so a worker packs every tensor of a batch into a
numpy array (`_Packed`) and the main process unpacks them back into tensors.
"""
import collections.abc
import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

import ember

__all__ = ["get_worker_info", "WorkerInfo"]

_worker_info = None


class WorkerInfo:
    """What a worker knows about itself: id, num_workers, seed, dataset (its copy)."""

    def __init__(self, id, num_workers, seed, dataset):
        self.id = id
        self.num_workers = num_workers
        self.seed = seed
        self.dataset = dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


def get_worker_info():
    """This worker's WorkerInfo inside a DataLoader worker process; None in the main process."""
    return _worker_info


class _Packed:
    """A tensor in transit: its values as a numpy array (float32 for bfloat16)."""

    def __init__(self, t):
        t = t.detach()
        self.dtype = str(t.dtype).rsplit(".", 1)[-1]
        if self.dtype == "bfloat16":
            t = t.float()
        self.array = np.ascontiguousarray(t.numpy())

    def unpack(self):
        t = ember.from_numpy(self.array)
        return t.to(ember.bfloat16) if self.dtype == "bfloat16" else t


def pack(data):
    return _map_tree(data, lambda t: _Packed(t), ember.Tensor)


def unpack(data):
    return _map_tree(data, lambda p: p.unpack(), _Packed)


def _map_tree(data, fn, leaf_type):
    if isinstance(data, leaf_type):
        return fn(data)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        items = [(k, _map_tree(v, fn, leaf_type)) for k, v in data.items()]
        try:
            return type(data)(items)
        except TypeError:
            return dict(items)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_map_tree(v, fn, leaf_type) for v in data))
    if isinstance(data, (list, tuple)):
        items = [_map_tree(v, fn, leaf_type) for v in data]
        try:
            return type(data)(items)
        except TypeError:
            return items
    return data


class _KeyErrorMessage(str):
    """KeyError's str() is the repr of its argument; this keeps a multi-line message readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """The exception being handled in a worker, carried to the main process: its type (when the type
    pickles, so the main process can find it) and the worker's traceback as text. reraise() raises the
    same type there, as torch does, with a message naming the worker and holding that traceback; a
    type that cannot be rebuilt from one message string becomes a RuntimeError."""

    def __init__(self, worker_id):
        exc_type = sys.exc_info()[0]
        self.worker_id = worker_id
        self.type_name = exc_type.__name__
        self.exc_type = exc_type if _pickles(exc_type) else None
        self.text = traceback.format_exc()

    def reraise(self):
        msg = f"Caught {self.type_name} in DataLoader worker process {self.worker_id}.\nOriginal {self.text}"
        if self.exc_type is None:
            raise RuntimeError(msg)
        if issubclass(self.exc_type, KeyError):
            msg = _KeyErrorMessage(msg)
        try:
            error = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise error


def _pickles(obj):
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def _seed_numpy(base_seed, worker_id):
    """numpy's global RNG in a worker: seeded from (worker id, the epoch's base seed) through numpy's
    SeedSequence, so that workers (and epochs) draw different numbers, as torch seeds them; a forked
    worker would otherwise repeat its parent's stream, the same in every worker."""
    state = np.random.SeedSequence([worker_id, base_seed]).generate_state(4)
    np.random.seed(state)


class _IterableFetcher:
    def __init__(self, dataset, collate_fn, batch_size, drop_last):
        self.it = iter(dataset)
        self.collate_fn = collate_fn
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, _):
        """The next batch (or sample when batch_size is None); StopIteration at the end."""
        if self.ended:
            raise StopIteration
        if self.batch_size is None:
            return self.collate_fn(next(self.it))
        items = []
        for x in self.it:
            items.append(x)
            if len(items) == self.batch_size:
                break
        if not items or (self.drop_last and len(items) < self.batch_size):
            self.ended = True
            raise StopIteration
        if len(items) < self.batch_size:
            self.ended = True
        return self.collate_fn(items)


class _MapFetcher:
    def __init__(self, dataset, collate_fn, batched):
        self.dataset = dataset
        self.collate_fn = collate_fn
        self.batched = batched

    def fetch(self, index):
        if self.batched:
            return self.collate_fn([self.dataset[i] for i in index])
        return self.collate_fn(self.dataset[index])


def make_fetcher(iterable, dataset, collate_fn, batch_size, drop_last, batched):
    if iterable:
        return _IterableFetcher(dataset, collate_fn, batch_size, drop_last)
    return _MapFetcher(dataset, collate_fn, batched)


class _IterableEnd:
    """Sent by a worker whose iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def worker_loop(iterable, dataset, index_queue, result_queue, collate_fn, batch_size,
                drop_last, batched, seed, init_fn, worker_id, num_workers, parent_pid):
    """Runs in a worker: takes (task id, indices) from index_queue until None arrives."""
    global _worker_info
    try:
        if hasattr(ember, "set_num_threads"):
            ember.set_num_threads(1)  # workers run side by side: no nested thread pools
        ember.manual_seed(seed)
        random.seed(seed)
        _seed_numpy(seed - worker_id, worker_id)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(iterable, dataset, collate_fn, batch_size, drop_last, batched)
    except Exception:
        result_queue.put((None, ExceptionWrapper(worker_id)))
        fetcher = None
    while True:
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            if os.getppid() != parent_pid:
                break  # the main process is gone: nobody will read our results
            continue
        if task is None:
            break
        task_id, index = task
        if fetcher is None:
            continue  # the start-up error was already reported
        try:
            result = pack(fetcher.fetch(index))
        except StopIteration:
            result = _IterableEnd(worker_id)
        except Exception:
            result = ExceptionWrapper(worker_id)
        result_queue.put((task_id, result))
    # Results nobody reads any more (an abandoned epoch) must not block our exit.
    result_queue.cancel_join_thread()
