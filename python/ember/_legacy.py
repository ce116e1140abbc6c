"""PyTorch's older spellings that scripts still use: the typed tensor classes (ember.FloatTensor,
ember.cuda.LongTensor, ...; constructors and isinstance checks), Tensor.new, Tensor.type with those
classes or their names, Tensor.layout with ember.strided, and top-level aliases of nn.functional ops
that torch also exposes as torch.<name>."""
import numbers

import numpy as np

import ember

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "CharTensor",
           "ByteTensor", "BoolTensor", "layout", "strided", "conv3d", "conv_transpose3d", "ctc_loss", "embedding",
           "binary_cross_entropy_with_logits", "cosine_embedding_loss", "constant_pad_nd", "typename", "is_storage",
           "set_default_tensor_type", "get_num_interop_threads", "set_num_interop_threads"]


class layout:
    """A tensor layout. ember has one, ember.strided (dense, with strides)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"ember.{self._name}"


strided = layout("strided")
ember.Tensor.layout = property(lambda self: strided)


def _is_shape(args):
    if len(args) == 1 and isinstance(args[0], ember.Size):
        return True
    return all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args)


def _legacy_new(dtype, device, args, kind):
    """torch's legacy constructor rules: sizes give an uninitialized tensor, data gives a copy of it."""
    if not args:
        return ember.empty(0, dtype=dtype, device=device)
    if _is_shape(args):
        return ember.empty(*(args[0] if isinstance(args[0], ember.Size) else args), dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, ember.Tensor):
            return data.to(device=device, dtype=dtype)
        if isinstance(data, (list, tuple, np.ndarray, numbers.Number)):
            return ember.tensor(data, dtype=dtype, device=device)
    raise TypeError(f"{kind}(): expected sizes (ints) or data (a sequence, array or tensor), got "
                    f"{tuple(type(a).__name__ for a in args)}")


class _TypedTensorMeta(type):
    """isinstance(t, ember.FloatTensor) is a dtype and device check, as in torch."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, ember.Tensor) and obj.dtype == cls.dtype and obj.device.type == cls.device_type

    def __call__(cls, *args, device=None):
        return _legacy_new(cls.dtype, cls.device_type if device is None else device, args, cls.__name__)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _typed_class(name, dtype, device_type, module):
    return _TypedTensorMeta(name, (), {"dtype": dtype, "device_type": device_type, "__module__": module})


_TYPED = {"FloatTensor": ember.float32, "DoubleTensor": ember.float64, "HalfTensor": ember.float16,
          "BFloat16Tensor": ember.bfloat16, "LongTensor": ember.int64, "IntTensor": ember.int32,
          "CharTensor": ember.int8, "ByteTensor": ember.uint8, "BoolTensor": ember.bool}
_CLASSES = {}
for _name, _dtype in _TYPED.items():
    _CLASSES[("cpu", _name)] = globals()[_name] = _typed_class(_name, _dtype, "cpu", "ember")
    _CLASSES[("cuda", _name)] = _typed_class(_name, _dtype, "cuda", "ember.cuda")
    setattr(ember.cuda, _name, _CLASSES[("cuda", _name)])


def _type_name(t):
    name = next((n for n, d in _TYPED.items() if d == t.dtype), None)
    if name is None:
        return str(t.dtype)
    return f"ember.cuda.{name}" if t.device.type == "cuda" else f"ember.{name}"


_native_type = ember.Tensor.type


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """x.type() names the typed class ('ember.FloatTensor'); x.type(t) converts to a dtype, a typed class,
    or a class name ('torch.cuda.LongTensor' and 'ember.cuda.LongTensor' alike)."""
    if dtype is None:
        return _type_name(self)
    if isinstance(dtype, str):
        parts = dtype.split(".")
        device_type = "cuda" if len(parts) == 3 and parts[1] == "cuda" else "cpu"
        if parts[-1] not in _TYPED or parts[0] not in ("torch", "ember"):
            raise ValueError(f"Tensor.type: invalid type: {dtype!r}")
        return self.to(device=device_type, dtype=_TYPED[parts[-1]], non_blocking=non_blocking)
    if isinstance(dtype, _TypedTensorMeta):
        return self.to(device=dtype.device_type, dtype=dtype.dtype, non_blocking=non_blocking)
    return _native_type(self, dtype)


ember.Tensor.type = _type


def _new(self, *args, **kwargs):
    """The legacy x.new(...): sizes give an uninitialized tensor, data a copy, of x's dtype and device."""
    dtype = kwargs.pop("dtype", self.dtype)
    device = kwargs.pop("device", self.device)
    if kwargs:
        raise TypeError(f"Tensor.new: unexpected keyword arguments {sorted(kwargs)}")
    return _legacy_new(dtype, device, args, "Tensor.new")


ember.Tensor.new = _new


# ---- torch.<name> aliases of nn.functional ops

def _functional(name):
    def call(*args, **kwargs):
        return getattr(ember.nn.functional, name)(*args, **kwargs)
    call.__name__ = name
    call.__doc__ = f"ember.nn.functional.{name}, as torch.{name}."
    return call


conv3d, conv_transpose3d, ctc_loss, embedding, binary_cross_entropy_with_logits, cosine_embedding_loss = (
    _functional(n) for n in ("conv3d", "conv_transpose3d", "ctc_loss", "embedding",
                             "binary_cross_entropy_with_logits", "cosine_embedding_loss"))


def constant_pad_nd(input, pad, value=0):
    return ember.nn.functional.pad(input, list(pad), mode="constant", value=value)


# ---- small torch functions older scripts call

def typename(obj):
    """'ember.FloatTensor' for a float32 CPU tensor (torch.typename's names), else the type's qualified name."""
    if isinstance(obj, ember.Tensor):
        return _type_name(obj)
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def is_storage(obj):
    """ember has no storage objects apart from tensors: always False."""
    return False


def set_default_tensor_type(t):
    """The legacy form of set_default_dtype: a typed class or its name ('torch.DoubleTensor' too)."""
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    base = name.rpartition(".")[2]
    if base not in _TYPED or not _TYPED[base].is_floating_point:
        raise TypeError(f"set_default_tensor_type: only floating-point types are supported as the default type, "
                        f"got {t!r}")
    ember.set_default_dtype(_TYPED[base])


_interop_threads = [1]  # ember runs no inter-op thread pool; the number is kept for scripts that read it back


def get_num_interop_threads():
    return _interop_threads[0]


def set_num_interop_threads(n):
    if int(n) < 1:
        raise RuntimeError(f"set_num_interop_threads: expected a positive number of threads, got {n}")
    _interop_threads[0] = int(n)
