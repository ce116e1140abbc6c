"""ember.save / ember.load: checkpoints as one safetensors file, or in PyTorch's own format.

ember.load reads both (and any safetensors file); ember.save writes safetensors unless asked for
format="torch" (python/ember/_torch_format.py), the zip file torch.save writes and torch.load reads.

Layout (the safetensors format, written here by hand):
  8 bytes   little-endian u64 N, the header length
  N bytes   JSON header: {name: {"dtype", "shape", "data_offsets": [begin, end]}, ...,
            "__metadata__": {str: str}}
  rest      the tensors' raw little-endian bytes, offsets relative to the end of the header

Tensors of a nested object are stored under flattened names ("layer.weight",
"state.0.exp_avg"); a plain dict of tensors keeps its own keys, so the file is exactly what
safetensors.torch.save_file would write and any safetensors reader loads it. Everything that
is not a tensor (nesting, int keys, numbers, strings, None) is kept as JSON under
__metadata__["ember"], which other readers ignore.
"""
import json
import os
import pickle
import struct
import tempfile

import numpy as np

import ember
from ember import _torch_format
from ember._safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

_FORMAT_KEY = "ember"  # __metadata__ entry holding the non-tensor structure
_FORMAT_VERSION = 1
_MAX_HEADER = 100 * 1024 * 1024  # as the safetensors reference reader

# safetensors dtype name -> (ember dtype, numpy dtype of the stored bytes)
_DTYPES = {
    "F64": (ember.float64, np.dtype("<f8")),
    "F32": (ember.float32, np.dtype("<f4")),
    "F16": (ember.float16, np.dtype("<f2")),
    "BF16": (ember.bfloat16, np.dtype("<u2")),  # raw bits; numpy has no bfloat16
    "I64": (ember.int64, np.dtype("<i8")),
    "I32": (ember.int32, np.dtype("<i4")),
    "I16": (getattr(ember, "int16", None), np.dtype("<i2")),
    "I8": (ember.int8, np.dtype("i1")),
    "U8": (ember.uint8, np.dtype("u1")),
    "BOOL": (ember.bool, np.dtype("?")),
}
_NAME_OF = {str(e): name for name, (e, _) in _DTYPES.items() if e is not None}


class _Error(RuntimeError):
    pass


# ---------------------------------------------------------------- tensors <-> bytes

def _tensor_bytes(t):
    """(dtype name, shape, bytes) of a tensor, always C-order little-endian."""
    name = _NAME_OF.get(str(t.dtype))
    if name is None:
        raise TypeError(f"ember.save: tensors of dtype {t.dtype} cannot be saved")
    t = t.detach()
    if str(t.device) != "cpu":
        t = t.cpu()
    if name == "BF16":
        # bfloat16 is the top half of a float32, so the widening is exact.
        bits = np.ascontiguousarray(t.float().numpy()).view(np.uint32)
        arr = (bits >> 16).astype("<u2")
    else:
        arr = np.ascontiguousarray(t.numpy()).astype(_DTYPES[name][1], copy=False)
    return name, list(t.shape), arr.tobytes()


def _bytes_tensor(name, shape, buf, where):
    edtype, npdtype = _DTYPES[name]
    count = 1
    for s in shape:
        count *= s
    if len(buf) != count * npdtype.itemsize:
        raise _Error(f"{where}: holds {len(buf)} bytes but shape {shape} of {name} "
                     f"needs {count * npdtype.itemsize}")
    arr = np.frombuffer(buf, dtype=npdtype).reshape(shape)
    if name == "BF16":
        f32 = (arr.astype(np.uint32) << 16).view(np.float32)
        return ember.from_numpy(f32.copy()).to(ember.bfloat16)
    if edtype is None:
        raise _Error(f"{where}: dtype {name} is not supported by ember")
    if name == "BOOL":  # any nonzero byte is True: a bool tensor must hold only 0 and 1
        return ember.from_numpy(arr.view(np.uint8) != 0)
    return ember.from_numpy(arr.astype(arr.dtype.newbyteorder("="), copy=True))


# ---------------------------------------------------------------- structure <-> JSON

def _flatten(obj, prefix, tensors):
    """JSON-able description of obj; tensors go into `tensors` under dotted names."""
    if isinstance(obj, ember.Tensor):
        name = prefix or "tensor"
        while name in tensors:  # distinct paths can collide ("a.b" vs {"a": {"b"}})
            name += "_"
        tensors[name] = obj
        return {"T": name}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        if obj != obj or obj in (float("inf"), float("-inf")):
            return {"F": repr(obj)}  # JSON has no nan/inf
        return obj
    if isinstance(obj, (list, tuple)):
        items = [_flatten(v, f"{prefix}.{i}" if prefix else str(i), tensors)
                 for i, v in enumerate(obj)]
        return {"L": items} if isinstance(obj, list) else {"U": items}
    if isinstance(obj, dict):
        keys = []
        for k, v in obj.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise TypeError(f"ember.save: dict keys must be str or int, got {type(k).__name__}")
            keys.append([k, _flatten(v, f"{prefix}.{k}" if prefix else str(k), tensors)])
        return {"D": keys}
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return _flatten(obj.item(), prefix, tensors)
    raise TypeError(f"ember.save: cannot save an object of type {type(obj).__name__} "
                    f"(only tensors, dicts, lists, tuples, numbers, strings and None)")


def _unflatten(desc, tensors, where):
    if isinstance(desc, list):
        raise _Error(f"{where}: malformed ember metadata")
    if not isinstance(desc, dict):
        return desc
    if len(desc) != 1:
        raise _Error(f"{where}: malformed ember metadata")
    (kind, val), = desc.items()
    if kind == "T":
        if val not in tensors:
            raise _Error(f"{where}: metadata names tensor {val!r}, which the file lacks")
        return tensors[val]
    if kind == "F":
        return float(val)
    if kind == "L":
        return [_unflatten(v, tensors, where) for v in val]
    if kind == "U":
        return tuple(_unflatten(v, tensors, where) for v in val)
    if kind == "D":
        return {k: _unflatten(v, tensors, where) for k, v in val}
    raise _Error(f"{where}: malformed ember metadata (unknown tag {kind!r})")


# ---------------------------------------------------------------- save

def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, format="safetensors"):
    """Saves a tensor or a nested dict/list/tuple of tensors and plain values to `f` (a path or a
    writable binary file object).

    format="safetensors" (the default) writes a safetensors file; format="torch" writes PyTorch's zip
    format, which torch.load reads. An object holding an nn.Module (torch.save(model, f)) or anything else
    safetensors cannot hold (argparse.Namespace, sets, numpy arrays, tuple keys, complex tensors) is always written in
    PyTorch's format: loading it needs weights_only=False, as in torch. A path is written atomically: a
    crash mid-write leaves the previous file at `f` intact. torch.save's other arguments are
    accepted: pickle_module must be Python's pickle (or None), and PyTorch's format is always
    written with protocol 2 and the zip layout.
    """
    if isinstance(pickle_module, str):  # save(obj, f, "torch"): format's old place
        format, pickle_module = pickle_module, None
    _check_pickle_module("save", pickle_module)
    if format not in ("safetensors", "torch"):
        raise ValueError(f"ember.save: format must be 'safetensors' or 'torch', got {format!r}")
    if format == "torch" or _holds_module(obj):  # torch.save(model) pickles the whole module, as torch does
        return _write(f, [_torch_format.save_torch(obj, f)])
    tensors = {}
    try:
        structure = _flatten(obj, "", tensors)
    except TypeError:
        # What safetensors + JSON cannot describe (argparse.Namespace, sets, numpy arrays, tuple keys)
        # is pickled in PyTorch's format, as torch.save does; load(weights_only=False) reads it
        return _write(f, [_torch_format.save_torch(obj, f)])
    if any(t.is_complex() for t in tensors.values()):  # safetensors has no complex dtypes
        return _write(f, [_torch_format.save_torch(obj, f)])
    header = {}
    chunks = []
    offset = 0
    # Sorted names, as safetensors writes them; data aligned by the header padding.
    for name in sorted(tensors):
        dtype, shape, data = _tensor_bytes(tensors[name])
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = {_FORMAT_KEY: json.dumps({"version": _FORMAT_VERSION,
                                                        "structure": structure})}
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # keeps the data 8-byte aligned
    _write(f, [struct.pack("<Q", len(head)), head] + chunks)


def _holds_module(obj):
    """Whether obj is, or nests in dicts/lists/tuples, an nn.Module (which only a pickle can hold)."""
    if isinstance(obj, ember.nn.Module):
        return True
    if isinstance(obj, dict):
        return any(_holds_module(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_holds_module(v) for v in obj)
    return False


def _write(f, chunks):
    if hasattr(f, "write"):
        for chunk in chunks:
            f.write(chunk)
        return
    _write_atomic(os.fspath(f), chunks)


def _write_atomic(path, chunks):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ember-save-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # makes the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


# ---------------------------------------------------------------- load

def _read_header(path, data):
    if len(data) < 8:
        raise _Error(f"{path}: not a safetensors file (only {len(data)} bytes, "
                     f"shorter than the 8-byte header length)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _MAX_HEADER or 8 + n > len(data):
        raise _Error(f"{path}: not a safetensors file or truncated (header length {n} "
                     f"but the file has {len(data)} bytes)")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _Error(f"{path}: not a safetensors file (header is not JSON: {e})") from None
    if not isinstance(header, dict):
        raise _Error(f"{path}: not a safetensors file (header is not a JSON object)")
    return header, 8 + n


def _check_entry(path, name, info, data_len):
    where = f"{path}: tensor {name!r}"
    if not isinstance(info, dict):
        raise _Error(f"{where}: malformed header entry")
    dtype, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if dtype not in _DTYPES:
        raise _Error(f"{where}: unsupported dtype {dtype!r}")
    if (not isinstance(shape, list) or
            not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise _Error(f"{where}: malformed shape {shape!r}")
    if (not isinstance(offs, list) or len(offs) != 2 or
            not all(isinstance(o, int) and not isinstance(o, bool) for o in offs) or
            not 0 <= offs[0] <= offs[1]):
        raise _Error(f"{where}: malformed data_offsets {offs!r}")
    if offs[1] > data_len:
        raise _Error(f"{where}: data ends at byte {offs[1]} but the file holds only "
                     f"{data_len} bytes of data (truncated?)")
    return dtype, shape, offs, where


def _check_pickle_module(op, pickle_module):
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError(f"ember.{op}: pickle_module must be Python's pickle, got {pickle_module!r}")


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Loads what ember.save wrote, any safetensors file (as a dict of tensors), or a file torch.save
    wrote (f: a path or a readable binary file object).

    A safetensors file never runs code (it holds only tensors and JSON). A PyTorch file is a pickle:
    with weights_only=True (the default, as in torch) only tensors, containers, numbers, strings and a
    few torch and numpy types load; weights_only=False unpickles anything, so only for trusted files.
    map_location: None (where each tensor was saved), a device or string, a dict from saved location to
    location, or a function (storage, location) -> location. mmap is accepted and changes nothing (the
    file is read whole); pickle_load_args such as encoding= apply to PyTorch's pickles only, which
    the zip format writes in protocol 2, where they have no effect.
    """
    _check_pickle_module("load", pickle_module)
    if hasattr(f, "read"):
        data, path = f.read(), getattr(f, "name", "<file object>")
    else:
        path = os.fspath(f)
        with open(path, "rb") as fh:
            data = fh.read()
    if _torch_format.is_torch_zip(data):
        return _torch_format.load_torch(data, path, map_location, weights_only)
    if _torch_format.is_legacy_torch(data):
        raise _Error(f"{path}: saved in PyTorch's legacy format (before 1.6); load it with torch and save it "
                     "again with a current torch.save, or with safetensors")
    header, start = _read_header(path, data)
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict):
        raise _Error(f"{path}: malformed __metadata__ (must be a map of strings)")
    body = memoryview(data)[start:]
    tensors = {}
    spans = []
    for name, info in header.items():
        dtype, shape, offs, where = _check_entry(path, name, info, len(body))
        t = _bytes_tensor(dtype, shape, body[offs[0]:offs[1]], where)
        if map_location is not None:
            t = t.to(_map_device(map_location))
        tensors[name] = t
        spans.append((offs[0], offs[1], name))
    _check_no_overlap(path, spans)
    if _FORMAT_KEY not in meta:
        return tensors
    try:
        info = json.loads(meta[_FORMAT_KEY])
        structure = info["structure"]
    except (ValueError, TypeError, KeyError):
        raise _Error(f"{path}: malformed ember metadata in __metadata__") from None
    try:
        return _unflatten(structure, tensors, path)
    except (ValueError, TypeError, AttributeError) as e:
        raise _Error(f"{path}: malformed ember metadata ({e})") from None


def _check_no_overlap(path, spans):
    spans = sorted(s for s in spans if s[0] < s[1])  # empty tensors take no bytes
    for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise _Error(f"{path}: tensors {n0!r} and {n1!r} overlap in the data")


def _map_device(loc):
    """Where a tensor of a safetensors file (read on the CPU) goes: torch's map_location rules."""
    return _torch_format._target_device("cpu", loc)


# The names the safetensors package uses.
def save_file(tensors, filename, metadata=None):
    """safetensors-style: writes a flat dict of tensors (metadata must be None)."""
    if metadata is not None:
        raise NotImplementedError("ember.serialization.save_file: metadata is not supported")
    if not isinstance(tensors, dict) or not all(isinstance(v, ember.Tensor) for v in tensors.values()):
        raise TypeError("save_file: expected a dict of str to tensors")
    for name, t in tensors.items():
        if t.is_complex():
            raise TypeError(f"save_file: tensor {name!r} is {t.dtype}, which safetensors cannot hold; "
                            "use ember.save(obj, f, format=\"torch\")")
    save(tensors, filename)


def load_file(filename, device="cpu"):
    """safetensors-style: reads a safetensors file as a dict of tensors."""
    out = load(filename, map_location=None if device == "cpu" else device)
    if not isinstance(out, dict):
        raise RuntimeError(f"{filename}: holds a {type(out).__name__}, not a dict of tensors")
    return out
