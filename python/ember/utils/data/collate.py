"""default_collate / default_convert: samples -> batches, as torch's."""
import collections.abc

import numpy as np

import ember

__all__ = ["default_collate", "default_convert"]

_BAD_NUMPY = "SaUO"  # numpy kinds (strings, bytes, unicode, objects) that are no tensors


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _rebuild_mapping(elem, items):
    try:
        return type(elem)(items)
    except TypeError:  # a mapping type that cannot be built from pairs
        return dict(items)


def default_convert(data):
    """numpy arrays (and numpy scalars) inside `data` become tensors; the rest is kept."""
    if isinstance(data, ember.Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in _BAD_NUMPY else ember.as_tensor(data)
    if isinstance(data, np.generic):
        return data if data.dtype.kind in _BAD_NUMPY else ember.as_tensor(data)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, [(k, default_convert(v)) for k, v in data.items()])
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stacks a list of samples into a batch, recursing into containers.

    Tensors and numpy arrays are stacked along a new first dimension; Python
    floats become a float64 tensor, ints an int64 one, bools a bool one; strings
    stay a list; dicts, namedtuples, tuples and lists are collated field by field
    (tuples come back as lists, as in torch).
    """
    elem = batch[0]
    if isinstance(elem, ember.Tensor):
        return ember.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in _BAD_NUMPY:
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                            f"dicts or lists; found numpy array of dtype {elem.dtype}")
        return ember.stack([ember.as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic):
        if elem.dtype.kind in _BAD_NUMPY:
            return list(batch)
        return ember.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return ember.tensor(list(batch), dtype=ember.bool)
    if isinstance(elem, int):
        return ember.tensor(list(batch), dtype=ember.int64)
    if isinstance(elem, float):
        return ember.tensor(list(batch), dtype=ember.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, [(k, default_collate([d[k] for d in batch])) for k in elem])
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem).__name__}")
