"""PyTorch's legacy tensor constructors, still common in older scripts: torch.Tensor(2, 3),
torch.Tensor([1, 2]), torch.FloatTensor(...), torch.LongTensor(labels), isinstance(x, torch.FloatTensor)
and x.type(torch.DoubleTensor) / x.type("torch.DoubleTensor")."""
import re

import ember
from ember import Tensor

_LEGACY = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
           "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
           "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}


def _construct(dtype, args, device, what):
    """torch's legacy constructor rules: sizes (ints or a Size) give uninitialized storage; one sequence,
    array or number-list gives a copy converted to dtype; one tensor of that dtype gives an alias."""
    if not args:
        return ember.empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], ember.Size):
        return ember.empty(tuple(args[0]), dtype=dtype, device=device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return ember.empty(args, dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype != dtype:
                raise TypeError(f"{what}: expected {dtype} (got {data.dtype})")
            return data.detach()
        return ember.tensor(data, dtype=dtype, device=device)
    raise TypeError(f"{what}: expected sizes (ints), a torch.Size, a sequence or a tensor, got "
                    f"{', '.join(type(a).__name__ for a in args)}")


def _tensor_new(cls, *args, device=None):
    t = _construct(ember.float32, args, device, "Tensor")
    if cls is not Tensor:  # a subclass without its own __new__ (its layout must match, as Parameter's)
        t.__class__ = cls
    return t


def _tensor_init(self, *args, **kwargs):
    pass  # everything happens in __new__: the C++ object has no Python constructor


Tensor.__new__ = _tensor_new
Tensor.__init__ = _tensor_init


class _LegacyTypeMeta(type):
    def __call__(cls, *args, device=None):
        return _construct(cls.dtype, args, device, cls.__name__)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"


def _legacy_class(name, dtype_name):
    return _LegacyTypeMeta(name, (), {"dtype": getattr(ember, dtype_name), "__module__": "ember",
                                      "__doc__": f"Legacy constructor of {dtype_name} CPU tensors."})


_LEGACY = {name: dtype for name, dtype in _LEGACY.items() if hasattr(ember, dtype)}  # ember has no int16
_CLASSES = {name: _legacy_class(name, dtype) for name, dtype in _LEGACY.items()}
globals().update(_CLASSES)
__all__ = list(_CLASSES)

_type_by_dtype = Tensor.type
_NAME = re.compile(r"(?:torch|ember)\.(cuda\.)?(\w+Tensor)")


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """x.type() (the dtype's name), x.type(ember.float64), x.type(torch.DoubleTensor), x.type("torch.DoubleTensor")."""
    if isinstance(dtype, _LegacyTypeMeta):
        return self.to(dtype.dtype, non_blocking=non_blocking)
    if isinstance(dtype, str):
        match = _NAME.fullmatch(dtype)
        if match is None or match.group(2) not in _LEGACY:
            raise ValueError(f"Tensor.type: invalid type {dtype!r}")
        target = getattr(ember, _LEGACY[match.group(2)])
        return self.to("cuda" if match.group(1) else "cpu", target, non_blocking=non_blocking)
    return _type_by_dtype(self, dtype)


Tensor.type = _type
