"""assert_close: compares tensors, numbers and (nested) sequences or mappings
of them, and explains a mismatch as torch.testing.assert_close does.

Values are compared with ember.isclose on the tensors' own device and dtype;
only the reduction that finds the worst element runs on the host.
"""
import collections.abc
import math
import warnings

import numpy as np

from ember import _C

# Default (rtol, atol) by dtype; integral and boolean dtypes compare exactly.
_DEFAULT_TOLERANCES = {
    _C.float16: (1e-3, 1e-5),
    _C.bfloat16: (1.6e-2, 1e-5),
    _C.float32: (1.3e-6, 1e-5),
    _C.float64: (1e-7, 1e-7),
}
# Python numbers compare with the tolerances of the dtype they would become.
_NUMBER_DTYPES = {int: _C.int64, float: _C.float64}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and its message."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


def _tolerances(dtypes, rtol, atol):
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_DEFAULT_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_line(kind, diff, index, tol, exact):
    line = f"{kind.title()} difference: {diff}" if index is None else \
        f"Greatest {kind} difference: {diff} at index {index}"
    return line if exact else f"{line} (up to {tol} allowed)"


def _mismatch_message(identifier, extra, abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol):
    exact = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if exact else 'close'}!", "", extra,
             _diff_line("absolute", abs_diff, abs_idx, atol, exact),
             _diff_line("relative", rel_diff, rel_idx, rtol, exact)]
    return "\n".join(lines)


# ---- numbers

def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    dtypes = [_NUMBER_DTYPES.get(type(x), _C.float64) for x in (actual, expected)]
    rtol, atol = _tolerances(dtypes, rtol, atol)
    if actual == expected:
        return
    both_nan = isinstance(actual, float) and isinstance(expected, float) and \
        math.isnan(actual) and math.isnan(expected)
    if both_nan and equal_nan:
        return
    abs_diff = abs(actual - expected)
    if not (math.isnan(abs_diff) or math.isinf(abs_diff)) and abs_diff <= atol + rtol * abs(expected):
        return
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    raise _Mismatch(AssertionError, _mismatch_message(
        "Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, rel_diff, None, rtol, atol))


# ---- tensors

def _as_tensor(x):
    return _C.from_numpy(np.ascontiguousarray(x)) if isinstance(x, np.ndarray) else x


def _host_values(t):
    """A tensor's values as a numpy array (bfloat16 widened exactly to float32)."""
    t = t.detach()
    if t.dtype == _C.bfloat16:
        t = t.float()
    return t.cpu().numpy()


def _check_attributes(actual, expected, check_device, check_dtype, check_stride):
    def differ(name, a, b):
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.")

    if tuple(actual.shape) != tuple(expected.shape):
        differ("shape", actual.shape, expected.shape)
    if check_device and actual.device != expected.device:
        differ("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        differ("dtype", actual.dtype, expected.dtype)
    if check_stride and actual.numel() > 1 and tuple(actual.stride()) != tuple(expected.stride()):
        differ("stride()", tuple(actual.stride()), tuple(expected.stride()))


def _tensor_mismatch(actual, expected, matches, rtol, atol):
    """The message for tensors that differ somewhere: the worst absolute and
    relative differences among the mismatched elements, computed in the
    compared dtype (integers widened to int64) as torch reports them."""
    if not actual.dtype.is_floating_point:
        actual, expected = actual.to(_C.int64), expected.to(_C.int64)
    abs_diff = (actual - expected).abs()
    rel_diff = abs_diff / expected.abs()
    matched = _host_values(matches).reshape(-1)
    abs_host = _host_values(abs_diff).reshape(-1).copy()
    rel_host = _host_values(rel_diff).reshape(-1).copy()
    abs_host[matched] = 0
    rel_host[matched] = 0
    total = matched.size
    wrong = total - int(matched.sum())

    def index_of(flat):
        return tuple(int(i) for i in np.unravel_index(flat, tuple(actual.shape)))

    abs_at, rel_at = int(np.argmax(abs_host)), int(np.argmax(rel_host))
    extra = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    return _mismatch_message("Tensor-likes", extra, abs_host[abs_at].item(), index_of(abs_at),
                             rel_host[rel_at].item(), index_of(rel_at), rtol, atol)


def _scalar_mismatch(actual, expected, rtol, atol):
    a, e = actual.item(), expected.item()
    abs_diff = abs(a - e)
    rel_diff = float("inf") if e == 0 else abs_diff / abs(e)
    return _mismatch_message("Scalars", f"Expected {e} but got {a}.", abs_diff, None, rel_diff, None, rtol, atol)


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    _check_attributes(actual, expected, check_device, check_dtype, check_stride)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol)
    actual, expected = actual.detach(), expected.detach()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        common = _C.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    if actual.numel() == 0:
        return
    if actual.dtype == _C.bool:
        matches = actual == expected
    else:
        matches = _C.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        raise _Mismatch(AssertionError, _scalar_mismatch(actual, expected, rtol, atol))
    raise _Mismatch(AssertionError, _tensor_mismatch(actual, expected, matches, rtol, atol))


# ---- containers

def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _compare(actual, expected, path, options):
    """Raises _Mismatch (with `path`, the keys leading here) on the first difference."""
    try:
        _compare_leaf_or_recurse(actual, expected, path, options)
    except _Mismatch as m:
        if path and not getattr(m, "located", False):
            m.message += "\n\nThe failure occurred for item " + "".join(str([k]) for k in path)
            m.located = True
        raise


def _compare_leaf_or_recurse(actual, expected, path, options):
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            missing = sorted(expected_keys - actual_keys, key=repr)
            extra = sorted(actual_keys - expected_keys, key=repr)
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {missing}\n"
                            f"Additional keys in the actual mapping: {extra}")
        for key in sorted(actual_keys, key=repr):
            _compare(actual[key], expected[key], path + (key,), options)
        return
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
        return
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, options["rtol"], options["atol"], options["equal_nan"],
                         options["check_dtype"])
        return
    tensorish = (_C.Tensor, np.ndarray)
    if isinstance(actual, tensorish) and type(actual) is type(expected) or \
            isinstance(actual, _C.Tensor) and isinstance(expected, _C.Tensor):
        _compare_tensors(_as_tensor(actual), _as_tensor(expected), options["rtol"], options["atol"],
                         options["equal_nan"], options["check_device"], options["check_dtype"],
                         options["check_stride"])
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} "
                               f"and {type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raises AssertionError unless `actual` and `expected` are close:
    |actual - expected| <= atol + rtol * |expected| elementwise, with the
    dtype's default tolerances when rtol and atol are omitted (0 for integers
    and booleans). Tensors must also agree in shape, device (check_device),
    dtype (check_dtype) and, with check_stride, strides. Sequences and
    mappings are compared item by item. `msg` replaces the message, or, when
    callable, receives it and returns the message to raise."""
    if (rtol is None) != (atol is None):
        _tolerances([], rtol, atol)
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                   check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as m:
        if m.kind is AssertionError and msg is not None:
            message = msg(m.message) if callable(msg) else msg
        else:
            message = m.message
        raise m.kind(message) from None


# assert_allclose's older default tolerances (numpy-like), kept for the deprecated alias.
_ALLCLOSE_TOLERANCES = {_C.float16: (1e-3, 1e-3), _C.bfloat16: (1.6e-2, 1e-5),
                        _C.float32: (1e-4, 1e-5), _C.float64: (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated: use assert_close. Converts non-tensors to tensors (expected
    takes actual's dtype) and compares without checking dtypes."""
    warnings.warn("ember.testing.assert_allclose() is deprecated; use ember.testing.assert_close() instead.",
                  FutureWarning, stacklevel=2)
    if not isinstance(actual, _C.Tensor):
        actual = _C.tensor(actual)
    if not isinstance(expected, _C.Tensor):
        expected = _C.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(d, (0.0, 0.0)) for d in (actual.dtype, expected.dtype)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
