"""read_idx: the IDX format of MNIST (http://yann.lecun.com/exdb/mnist/).

Layout: two zero bytes, a type byte, a byte with the number of dimensions n,
n big-endian uint32 sizes, then the values big-endian in C order. Files may be
gzip-compressed (recognised by their magic bytes, whatever their name).
"""
import gzip
import os

import numpy as np

import ember

__all__ = ["read_idx"]

_TYPES = {
    0x08: np.dtype("u1"),
    0x09: np.dtype("i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def _read_bytes(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (EOFError, OSError, ValueError) as e:
            raise ValueError(f"read_idx: {path}: broken gzip data ({e}); "
                             f"the file may be truncated") from None
    return raw


def read_idx(path, as_numpy=False):
    """Reads an IDX file (plain or gzip) into a tensor, or a numpy array with as_numpy=True.

    ubyte/sbyte/short/int/float/double become uint8/int8/int16/int32/float32/float64
    (short becomes int32 in a tensor when ember has no int16).
    A file that is not IDX or is shorter than its header promises raises ValueError.
    """
    path = os.fspath(path)
    data = _read_bytes(path)
    if len(data) < 4:
        raise ValueError(f"read_idx: {path}: not an IDX file (only {len(data)} bytes)")
    if data[0] != 0 or data[1] != 0 or data[2] not in _TYPES:
        raise ValueError(f"read_idx: {path}: not an IDX file (magic bytes "
                         f"{data[:4].hex()} should be 0000TTNN with type TT in "
                         f"08,09,0b,0c,0d,0e)")
    dtype = _TYPES[data[2]]
    ndim = data[3]
    head = 4 + 4 * ndim
    if len(data) < head:
        raise ValueError(f"read_idx: {path}: truncated header ({len(data)} bytes, "
                         f"{ndim} dimensions need {head})")
    shape = tuple(int(x) for x in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    need = head + count * dtype.itemsize
    if len(data) < need:
        raise ValueError(f"read_idx: {path}: truncated: shape {list(shape)} needs {need} "
                         f"bytes, the file has {len(data)}")
    if len(data) > need:
        raise ValueError(f"read_idx: {path}: {len(data) - need} unexpected bytes after the "
                         f"data of shape {list(shape)}")
    arr = np.frombuffer(data, dtype=dtype, count=count, offset=head).reshape(shape)
    arr = arr.astype(dtype.newbyteorder("="))  # native order, and a writable copy
    if as_numpy:
        return arr
    if arr.dtype == np.int16 and not hasattr(ember, "int16"):
        arr = arr.astype(np.int32)  # ember has no int16 tensors: widen exactly
    return ember.from_numpy(arr)
