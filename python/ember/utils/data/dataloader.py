"""DataLoader: batches from a dataset, in this process or in worker processes."""
import multiprocessing
import os
import queue
import time
import warnings

import ember

from ember.utils.data import worker as _worker
from ember.utils.data.collate import default_collate, default_convert
from ember.utils.data.dataset import IterableDataset
from ember.utils.data.sampler import (BatchSampler, RandomSampler, Sampler,
                                      SequentialSampler)

__all__ = ["DataLoader"]

_POLL_S = 0.1  # how often the main process checks that its workers are alive


class _InfiniteConstantSampler(Sampler):
    """For iterable datasets: None forever (the dataset decides what comes next)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterates over batches of a dataset, as torch.utils.data.DataLoader."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        # Pinned batches copy to the GPU asynchronously (x.to("cuda", non_blocking=True)).
        self._pin = bool(pin_memory) and ember._C._cuda.is_available()
        if pin_memory and not self._pin:
            warnings.warn("DataLoader: pin_memory=True, but no usable CUDA GPU is present, so batches are not "
                          "pinned (pinned memory only speeds up copies to a GPU)", stacklevel=2)
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.generator = generator

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._persistent_iter = None

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)  # TypeError when the dataset has no length, as torch
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._persistent_iter is None or not self._persistent_iter.reusable():
                self._persistent_iter = _MultiProcessIter(self)
            else:
                _base_seed(self)
                self._persistent_iter.reset()
            return self._persistent_iter
        return _MultiProcessIter(self)


def _pin(data):
    """data with every tensor in it copied to pinned memory, its structure kept."""
    if isinstance(data, ember.Tensor):
        return data.pin_memory()
    if isinstance(data, dict):
        return type(data)((k, _pin(v)) for k, v in data.items())
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(_pin(v) for v in data))
    if isinstance(data, (tuple, list)):
        return type(data)(_pin(v) for v in data)
    if hasattr(data, "pin_memory"):  # a custom batch type, as PyTorch allows
        return data.pin_memory()
    return data


def _pinned(batch, loader):
    return _pin(batch) if loader._pin else batch


def _base_seed(loader):
    # Drawn at the start of every epoch with or without workers, so that the
    # sampler sees the same generator state (and order) for any num_workers.
    return int(ember.randint(0, 2 ** 62, (1,), dtype=ember.int64, generator=loader.generator).item())


class _SingleProcessIter:
    def __init__(self, loader):
        _base_seed(loader)
        self._fetcher = _worker.make_fetcher(loader._iterable, loader.dataset, loader.collate_fn,
                                             loader.batch_size, loader.drop_last,
                                             loader._auto_collation)
        self._indices = iter(loader._index_sampler)
        self._loader = loader

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._indices)  # StopIteration ends the epoch
        return _pinned(self._fetcher.fetch(index), self._loader)

    def __len__(self):
        return len(self._loader)


class _MultiProcessIter:
    """Sends index batches to workers round-robin and yields their results in order."""

    def __init__(self, loader):
        self._loader = loader
        self._n = loader.num_workers
        ctx = loader.multiprocessing_context
        if ctx is None:
            method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
            ctx = multiprocessing.get_context(method)
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        seed = _base_seed(loader)
        self._result_queue = ctx.Queue()
        self._index_queues = []
        self._workers = []
        self._shut = False
        for wid in range(self._n):
            iq = ctx.Queue()
            w = ctx.Process(target=_worker.worker_loop, daemon=True,
                            args=(loader._iterable, loader.dataset, iq, self._result_queue,
                                  loader.collate_fn, loader.batch_size, loader.drop_last,
                                  loader._auto_collation, seed + wid, loader.worker_init_fn,
                                  wid, self._n, os.getpid()))
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self.reset(first=True)

    def reusable(self):
        return not self._shut and not self._loader._iterable

    def reset(self, first=False):
        self._indices = iter(self._loader._index_sampler)
        if first:
            self._send_id = 0    # next task id to hand out; grows across epochs
        # Results of tasks from an abandoned earlier epoch (ids below this) are dropped.
        self._epoch_start = self._send_id
        self._recv_id = self._send_id  # next task id to yield
        self._task_worker = {}   # task id -> worker id, for tasks not yet yielded
        self._done = {}          # results that arrived early
        self._active = [True] * self._n  # False once an iterable worker is exhausted
        self._next_worker = 0
        self._sampler_done = False
        for _ in range(self._loader.prefetch_factor * self._n):
            self._send_task()

    def _send_task(self):
        if self._sampler_done or not any(self._active):
            return
        try:
            index = next(self._indices)
        except StopIteration:
            self._sampler_done = True
            return
        for _ in range(self._n):  # next worker still producing
            wid = self._next_worker
            self._next_worker = (self._next_worker + 1) % self._n
            if self._active[wid]:
                break
        self._index_queues[wid].put((self._send_id, index))
        self._task_worker[self._send_id] = wid
        self._send_id += 1

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        while True:
            if self._recv_id >= self._send_id and (self._sampler_done or not any(self._active)):
                if not self._loader.persistent_workers or self._loader._iterable:
                    self._shutdown()
                raise StopIteration
            if self._recv_id not in self._task_worker:  # dropped by an exhausted worker
                self._recv_id += 1
                continue
            if self._recv_id in self._done:
                result = self._done.pop(self._recv_id)
            else:
                result = self._wait_for(self._recv_id)
            del self._task_worker[self._recv_id]
            self._recv_id += 1
            if isinstance(result, _worker.ExceptionWrapper):
                self._shutdown()  # raised in order, after the batches before it
                result.reraise()
            if isinstance(result, _worker._IterableEnd):
                self._active[result.worker_id] = False
                # Tasks already given to that worker will never be answered.
                for tid, wid in list(self._task_worker.items()):
                    if wid == result.worker_id and tid not in self._done:
                        del self._task_worker[tid]
                self._send_task()
                continue
            self._send_task()
            return _pinned(_worker.unpack(result), self._loader)

    def _wait_for(self, task_id):
        start = time.monotonic()
        while True:
            try:
                tid, result = self._result_queue.get(timeout=_POLL_S)
            except queue.Empty:
                self._check_workers()
                timeout = self._loader.timeout
                if timeout > 0 and time.monotonic() - start > timeout:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds")
                continue
            if tid is None:  # a worker failed to start
                self._shutdown()
                result.reraise()
            if tid == task_id:
                return result
            if tid >= self._epoch_start:
                self._done[tid] = result

    def _check_workers(self):
        for wid, w in enumerate(self._workers):
            if not w.is_alive():
                code = w.exitcode
                self._shutdown()
                how = (f"was killed by signal {-code}" if code is not None and code < 0
                       else f"exited unexpectedly with exit code {code}")
                raise RuntimeError(f"DataLoader worker {wid} (pid {w.pid}) {how}. "
                                   f"The worker may have crashed or run out of memory.")

    def _shutdown(self):
        if self._shut:
            return
        self._shut = True
        for iq, w in zip(self._index_queues, self._workers):
            if w.is_alive():
                try:
                    iq.put(None)
                except (OSError, ValueError):
                    pass
        for w in self._workers:
            w.join(timeout=1.0)
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        for q in self._index_queues + [self._result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            self._shutdown()
        except Exception:
            pass
