"""The losses' reduction argument, as torch.nn._reduction (get_enum, legacy_get_string, legacy_get_enum,
which custom losses import), and reduction_arg, the one place where ember's losses and loss modules
turn torch's legacy size_average / reduce flags into a reduction.

The legacy rule: given either flag, reduce=False means 'none', else size_average=False means 'sum',
else 'mean' (a flag left None counts as True); the caller's reduction is then ignored, with torch's
UserWarning naming the reduction to use instead."""
import numbers
import warnings

import numpy as np

import ember

__all__ = ["get_enum", "legacy_get_string", "legacy_get_enum", "reduction_arg", "reduce_loss"]

_ENUM = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction):
    """'none' -> 0, 'mean' -> 1, 'sum' -> 2 ('elementwise_mean', the old 'mean', warns)."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=2)
        return 1
    if reduction not in _ENUM:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _ENUM[reduction]


def _flag(value, op, name):
    if value is None:
        return True
    if isinstance(value, (bool, numbers.Number, np.bool_)) or (isinstance(value, ember.Tensor)
                                                               and value.numel() == 1):
        return bool(value)
    raise TypeError(f"{op}: {name} must be a bool or None, got {type(value).__name__}")


def _legacy(size_average, reduce, op):
    if not _flag(reduce, op, "reduce"):
        _flag(size_average, op, "size_average")  # still type-checked
        return "none"
    return "mean" if _flag(size_average, op, "size_average") else "sum"


def _warn(reduction, stacklevel):
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  stacklevel=stacklevel + 1)


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction that legacy flags mean (see the module's docstring)."""
    reduction = _legacy(size_average, reduce, "legacy_get_string")
    if emit_warning:
        _warn(reduction, 2)
    return reduction


def legacy_get_enum(size_average, reduce, emit_warning=True):
    reduction = _legacy(size_average, reduce, "legacy_get_enum")
    if emit_warning:
        _warn(reduction, 2)
    return _ENUM[reduction]


def reduction_arg(op, size_average, reduce, reduction, stacklevel=3):
    """`reduction`, or what size_average / reduce say when either is given (with torch's UserWarning,
    attributed `stacklevel` frames up: by default the caller of the loss function that calls this)."""
    if size_average is None and reduce is None:
        return reduction
    legacy = _legacy(size_average, reduce, op)
    _warn(legacy, stacklevel)
    return legacy


def reduce_loss(loss, reduction, op):
    """The elementwise `loss` reduced as `reduction` says ('none' | 'mean' | 'sum')."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: {reduction} is not a valid value for reduction")
