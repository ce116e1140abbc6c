"""PyTorch's checkpoint format (what torch.save writes since 1.6), read and written without torch.

The file is an uncompressed zip: <name>/data.pkl pickles the object (protocol 2) with every tensor
reduced to torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks), each
storage a persistent id ("storage", torch.<Type>Storage, key, location, numel) whose bytes are
<name>/data/<key>; beside them version, byteorder and a few small records.

Reading unpickles with an allowlist (weights_only=True, torch's default): containers, numbers, strings,
the tensor and parameter rebuilders, storage types, dtypes, devices and numpy scalars; anything else
raises an UnpicklingError naming the global. Storages become 1-D ember tensors and tensors views of them
(ember.as_strided), so tensors that shared a storage in torch share one here. Writing gives each tensor a
storage of its own (contiguous)."""
import _compat_pickle
import codecs
import collections
import io
import os
import pickle
import zipfile

import numpy as np

import ember
from ember import _safe_globals

__all__ = ["is_torch_zip", "is_legacy_torch", "load_torch", "save_torch"]

# torch storage type -> (ember dtype, numpy dtype of its bytes)
_STORAGES = {
    "FloatStorage": (ember.float32, np.dtype("<f4")),
    "DoubleStorage": (ember.float64, np.dtype("<f8")),
    "HalfStorage": (ember.float16, np.dtype("<f2")),
    "BFloat16Storage": (ember.bfloat16, np.dtype("<u2")),  # raw bits; numpy has no bfloat16
    "LongStorage": (ember.int64, np.dtype("<i8")),
    "IntStorage": (ember.int32, np.dtype("<i4")),
    "ShortStorage": (getattr(ember, "int16", None), np.dtype("<i2")),
    "CharStorage": (ember.int8, np.dtype("i1")),
    "ByteStorage": (ember.uint8, np.dtype("u1")),
    "BoolStorage": (ember.bool, np.dtype("?")),
    "ComplexFloatStorage": (ember.complex64, np.dtype("<c8")),
    "ComplexDoubleStorage": (ember.complex128, np.dtype("<c16")),
}
_STORAGE_OF = {str(e): name for name, (e, _) in _STORAGES.items() if e is not None}
_DTYPE_NAMES = {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
                "complex64", "complex128", "cfloat", "cdouble", "float", "double", "half", "long", "int", "short"}
_LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"


def is_torch_zip(data):
    return bytes(data[:4]) == b"PK\x03\x04"


def is_legacy_torch(data):
    return bytes(data[:len(_LEGACY_MAGIC)]) == _LEGACY_MAGIC


# ---------------------------------------------------------------- reading

class _StorageType:
    """What GLOBAL torch.<Type>Storage unpickles to: the dtype of a storage."""

    def __init__(self, name):
        self.name = name
        self.dtype, self.np_dtype = _STORAGES[name]


def _rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                    metadata=None):
    t = ember.as_strided(storage, tuple(size), tuple(stride), storage_offset)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype=None,
                       metadata=None):
    return _rebuild_tensor(storage, storage_offset, size, stride, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks, *state):
    return ember.nn.Parameter(data, requires_grad=requires_grad)


_SAFE = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch", "Size"): ember.Size,
    ("torch", "device"): ember.device,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "slice"): slice,
    ("builtins", "complex"): complex, ("builtins", "bytearray"): bytearray,
    ("numpy", "dtype"): np.dtype,
    ("_codecs", "encode"): codecs.encode,  # protocol 2 writes bytes (a numpy scalar's) through it
}


def _numpy_scalar(dtype, data=None):
    """numpy's scalar reconstructor for plain dtypes: the value from its bytes."""
    if data is None or dtype.hasobject:
        raise pickle.UnpicklingError(f"ember.load: refusing a numpy scalar of dtype {dtype}")
    return np.frombuffer(data, dtype=dtype)[0]


def _torch_global(module, name, weights_only):
    if (module, name) in _SAFE and _SAFE[(module, name)] is not None:
        return _SAFE[(module, name)]
    if module in ("numpy.core.multiarray", "numpy._core.multiarray") and name == "scalar":
        return _numpy_scalar
    if module == "torch" and name in _STORAGES:
        return _StorageType(name)
    if module == "torch" and name in _DTYPE_NAMES and hasattr(ember, name):
        return getattr(ember, name)
    if module.startswith("numpy") and name.endswith("DType"):  # numpy >= 1.25 pickles dtypes by class
        return getattr(np.dtypes, name, None) or np.dtype
    allowed = _safe_globals.lookup(module, name)
    if allowed is not None:
        return allowed
    if weights_only:
        raise pickle.UnpicklingError(
            f"ember.load: weights_only=True refuses the global {module}.{name} in this checkpoint (only tensors, "
            "containers, numbers, strings and a few torch and numpy types load this way). If you trust the file, "
            "pass weights_only=False, or allow it with ember.serialization.add_safe_globals([...])")
    return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, storages, weights_only):
        super().__init__(file)
        self._storages = storages
        self._weights_only = weights_only

    def find_class(self, module, name):
        # Protocol 2 writes Python 2's names (__builtin__.set): the allowlist knows Python 3's.
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        found = _torch_global(module, name, self._weights_only)
        return found if found is not None else super().find_class(module, name)

    def persistent_load(self, saved_id):
        if not (isinstance(saved_id, tuple) and saved_id and saved_id[0] == "storage"):
            raise pickle.UnpicklingError(f"ember.load: unknown persistent id {saved_id!r}")
        kind, key, location = saved_id[1], saved_id[2], saved_id[3]
        if not isinstance(kind, _StorageType):
            raise pickle.UnpicklingError(f"ember.load: unsupported storage type {kind!r}")
        return self._storages(kind, str(key), str(location))


def _target_device(location, map_location):
    """Where a storage saved at `location` goes, torch's map_location rules (a callable gets the location)."""
    if map_location is None:
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif callable(map_location):
        target = map_location(None, location)
        target = location if target is None else target
    else:
        target = map_location
    target = str(target)
    if target.startswith("cuda") and not ember.cuda.is_available():
        raise RuntimeError("ember.load: the checkpoint holds tensors saved on a CUDA device, but CUDA is not "
                           "available here. On a machine without a GPU, pass map_location='cpu'")
    return target


def load_torch(data, where, map_location=None, weights_only=True):
    """The object a torch.save file (its bytes in `data`) holds."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as e:
        raise RuntimeError(f"{where}: starts like a zip file (PyTorch's checkpoint format) but is not a readable "
                           f"one ({e}); the file may be truncated") from None
    with archive as z:
        names = z.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pkl) != 1:
            raise RuntimeError(f"{where}: a zip file without exactly one data.pkl is not a PyTorch checkpoint")
        prefix = pkl[0][:-len("data.pkl")]
        cache = {}

        def storage(kind, key, location):
            if key not in cache:
                record = f"{prefix}data/{key}"
                try:
                    raw = z.read(record)
                except KeyError:
                    raise RuntimeError(f"{where}: the checkpoint names storage {key!r} but has no {record}") from None
                values = np.frombuffer(raw, dtype=kind.np_dtype)
                if kind.name == "BFloat16Storage":  # the top half of a float32: exact through float32
                    t = ember.tensor((values.astype(np.uint32) << 16).view(np.float32)).to(ember.bfloat16)
                elif kind.name == "BoolStorage":  # any nonzero byte is True: bools must hold only 0 and 1
                    t = ember.tensor(np.frombuffer(raw, dtype=np.uint8) != 0)
                else:
                    t = ember.tensor(values.copy(), dtype=kind.dtype)
                cache[key] = t.to(_target_device(location, map_location))
            return cache[key]

        return _Unpickler(io.BytesIO(z.read(pkl[0])), storage, weights_only).load()


# ---------------------------------------------------------------- writing

class _Global:
    """A name the pickle must refer to as GLOBAL module.name (torch's), which need not be importable here."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # the pickler only checks that a reduce's function is callable
        raise RuntimeError(f"{self.module}.{self.name} is a name in a checkpoint, not a function here")


class _Storage:
    def __init__(self, key, tensor):
        self.key, self.tensor = key, tensor


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = _Global("collections", "OrderedDict")
_TORCH_SIZE = _Global("torch", "Size")
_TORCH_DEVICE = _Global("torch", "device")


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, taught to write _Global names and to put tensors in storages."""
    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages = []

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            name = _STORAGE_OF.get(str(obj.tensor.dtype))
            location = "cpu"
            return ("storage", _Global("torch", name), obj.key, location, obj.tensor.numel())
        return None

    def reducer_override(self, obj):
        if isinstance(obj, ember.Tensor):
            if str(obj.dtype) not in _STORAGE_OF:
                raise TypeError(f"ember.save: tensors of dtype {obj.dtype} cannot be saved in PyTorch's format")
            data = obj.detach().cpu().contiguous()
            storage = _Storage(str(len(self.storages)), data)
            self.storages.append(storage)
            stride = tuple(int(s) for s in data.stride())
            hooks = _Reduced(_ORDERED_DICT, ())
            if isinstance(obj, ember.nn.Parameter):  # torch: the parameter's flag, around a plain tensor
                inner = _Reduced(_REBUILD_TENSOR, (storage, 0, tuple(data.shape), stride, False, hooks))
                return (_REBUILD_PARAMETER, (inner, bool(obj.requires_grad), hooks))
            return (_REBUILD_TENSOR, (storage, 0, tuple(data.shape), stride, bool(obj.requires_grad), hooks))
        if isinstance(obj, collections.OrderedDict):  # with its attributes: a state dict's _metadata
            return (_ORDERED_DICT, (), dict(vars(obj)) or None, None, iter(obj.items()))
        # ember's Size and device under torch's names, so that torch.load (weights_only too) reads them.
        if isinstance(obj, ember.Size):
            return (_TORCH_SIZE, (tuple(int(v) for v in obj),))
        if isinstance(obj, ember.device):
            return (_TORCH_DEVICE, (str(obj),))
        return NotImplemented

    def _save_dtype(self, obj):  # torch.float32 and co. are globals of the torch module
        self._save_global_name(_Global("torch", str(obj).rpartition(".")[2]))


class _Reduced:
    """An object that pickles as func(*args) (a nested reduce inside a reduce's arguments)."""

    def __init__(self, func, args):
        self.func, self.args = func, args


def _save_reduced(pickler, obj):
    pickler.save_reduce(obj.func, obj.args, obj=obj)


_Pickler.dispatch[_Reduced] = _save_reduced
_Pickler.dispatch[type(ember.float32)] = _Pickler._save_dtype


def _storage_bytes(t):
    if str(t.dtype) == str(ember.bfloat16):  # exact in float32; its top half is the bfloat16
        bits = t.to(ember.float32).numpy().view(np.uint32) >> 16
        return bits.astype("<u2").tobytes()
    return t.numpy().astype(_STORAGES[_STORAGE_OF[str(t.dtype)]][1], copy=False).tobytes()


def save_torch(obj, f):
    """Writes obj as torch.save would: PyTorch (and ember.load) read the file back."""
    buffer = io.BytesIO()
    pickler = _Pickler(buffer)
    pickler.dump(obj)
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    else:
        stem = "archive"
    records = [("data.pkl", buffer.getvalue()), (".format_version", b"1"), (".storage_alignment", b"64"),
               ("byteorder", b"little")]
    records += [(f"data/{s.key}", _storage_bytes(s.tensor)) for s in pickler.storages]
    records += [("version", b"3\n")]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
        for name, payload in records:
            z.writestr(zipfile.ZipInfo(f"{stem}/{name}", date_time=(1980, 1, 1, 0, 0, 0)), payload)
    return out.getvalue()
