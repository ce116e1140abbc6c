"""ember.asarray and ember.frombuffer, as torch's: tensors that share memory
with what they are made from when they can.

- ``asarray(obj)`` returns `obj` itself for a tensor of the asked dtype and
  device, shares a numpy array's (or another buffer's) memory on the CPU,
  and copies otherwise; ``copy=True`` always copies and ``copy=False``
  raises ValueError where a copy would be needed.
- ``frombuffer(buffer, dtype=...)`` shares the memory of a writable buffer
  (bytearray, array.array, mmap, numpy array). A read-only buffer (bytes)
  and bfloat16, which numpy cannot hold, get a copy with a UserWarning:
  ember cannot make a tensor over memory it may not write, nor view bytes
  as bfloat16.
"""
import warnings

import numpy as np

import ember

__all__ = ["asarray", "frombuffer"]

# ember dtypes numpy can hold, by name.
_NUMPY_NAMES = ("bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64")


def _numpy_dtype(dtype):
    name = str(dtype).replace("ember.", "")
    return np.dtype(name) if name in _NUMPY_NAMES else None


def _as_device(device):
    """An ember.device from a string ("cuda:1"), a CUDA index or a device; None stays None."""
    if device is None or isinstance(device, ember.device):
        return device
    return ember.device(f"cuda:{device}" if isinstance(device, int) else device)


def _from_tensor(obj, dtype, device, copy):
    target_dtype = obj.dtype if dtype is None else dtype
    if device is not None:
        target_device = _as_device(device)
    else:
        target_device = ember._C._get_default_device() or obj.device
    needs_copy = target_dtype != obj.dtype or target_device != obj.device
    if needs_copy and copy is False:
        what = f"dtype {obj.dtype} into dtype {target_dtype}" if target_dtype != obj.dtype else \
            f"device {obj.device} into device {target_device}"
        raise ValueError(f"asarray: can't alias tensor with {what} with copy=False")
    if needs_copy:
        return obj.to(device=target_device, dtype=target_dtype)
    return obj.detach().clone() if copy else obj


def _buffer_array(obj):
    """obj as a numpy array sharing its memory, or None when it is not a buffer."""
    if isinstance(obj, np.ndarray):
        return obj
    try:
        view = memoryview(obj)
    except TypeError:
        return None
    return np.asarray(view)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """A tensor from a tensor, a numpy array, a buffer, a number or a (nested)
    sequence; see the module docstring for when it shares memory."""
    if isinstance(obj, ember.Tensor):
        out = _from_tensor(obj, dtype, device, copy)
    else:
        array = _buffer_array(obj)
        if array is not None and not isinstance(obj, np.generic) and array.ndim > 0:
            out = _from_array(array, dtype, device, copy)
        else:
            if copy is False:
                raise ValueError(f"asarray: can't alias {type(obj).__name__} into a tensor with copy=False")
            out = ember.tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _from_array(array, dtype, device, copy):
    target_device = _as_device(device) or ember.get_default_device()
    can_share = (target_device.type == "cpu" and array.flags.writeable
                 and (dtype is None or _numpy_dtype(dtype) == array.dtype))
    if can_share and not copy:
        try:
            return ember.from_numpy(array)
        except (TypeError, ValueError):
            pass  # a dtype or layout from_numpy does not take: copy below
    if copy is False:
        raise ValueError(f"asarray: can't alias a numpy array of dtype {array.dtype} into a tensor "
                         f"(dtype={dtype}, device={target_device}) with copy=False")
    return ember.tensor(np.array(array), dtype=dtype, device=target_device)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of `buffer` from `offset`, `count` elements
    of `dtype` (-1: to the end). It shares the buffer's memory when the buffer
    is writable and numpy can hold the dtype (not bfloat16)."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("frombuffer: object does not implement Python buffer protocol.") from None
    nbytes = view.nbytes
    itemsize = ember.empty(0, dtype=dtype).element_size()
    if nbytes <= 0 or count == 0:
        raise ValueError(f"frombuffer: both buffer length ({nbytes}) and count ({count}) must not be 0")
    if offset < 0 or offset >= nbytes:
        raise ValueError(f"frombuffer: offset ({offset} bytes) must be non-negative and no greater than buffer "
                         f"length ({nbytes} bytes) minus 1")
    if count < 0:
        if (nbytes - offset) % itemsize != 0:
            raise ValueError(f"frombuffer: buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) "
                             f"must be a multiple of element size ({itemsize})")
        count = (nbytes - offset) // itemsize
    elif offset + count * itemsize > nbytes:
        raise ValueError(f"frombuffer: requested buffer length ({count} * {itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length ({nbytes} bytes)")
    raw = np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view, dtype=np.uint8,
                        count=count * itemsize, offset=offset)
    np_dtype = _numpy_dtype(dtype)
    if np_dtype is None:  # bfloat16: the upper halves of float32 bit patterns
        warnings.warn(f"frombuffer: ember cannot view bytes as {dtype}; the tensor holds a copy of the buffer",
                      UserWarning, stacklevel=2)
        bits = raw.view(np.uint16).astype(np.uint32) << 16
        out = ember.from_numpy(bits.view(np.float32).copy()).to(dtype)
    elif not raw.flags.writeable:
        warnings.warn("frombuffer: the buffer is not writable and ember tensors must be; the tensor holds a copy "
                      "of it (pass a bytearray to share memory)", UserWarning, stacklevel=2)
        out = ember.from_numpy(raw.view(np_dtype).copy())
    else:
        out = ember.from_numpy(raw.view(np_dtype))
    if requires_grad:
        out.requires_grad_(True)
    return out
