"""Hyper-parameter checks shared by the optimizers, with torch's messages for
out-of-range values, and a TypeError naming the hyper-parameter for a value of
the wrong type (where a bare comparison would raise an unrelated error)."""
import numbers

import ember

_NAMES = {"lr": "learning rate", "eps": "epsilon value"}


def _label(key):
    return _NAMES.get(key, key + " value")


def _check_number(label, value):
    if isinstance(value, ember.Tensor) and value.numel() == 1:
        return
    if not isinstance(value, numbers.Real):
        raise TypeError(f"Invalid {label}: expected a number, got {type(value).__name__}")


def check_non_negative(**values):
    for key, value in values.items():
        _check_number(_label(key), value)
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_label(key)}: {value}")


def check_betas(betas):
    if isinstance(betas, (str, bytes)) or not hasattr(betas, "__len__") or len(betas) != 2:
        raise TypeError(f"Invalid betas: expected a pair (beta1, beta2), got {type(betas).__name__}"
                        + (f" of length {len(betas)}" if hasattr(betas, "__len__") else ""))
    for i, beta in enumerate(betas):
        _check_number(f"beta parameter at index {i}", beta)
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
