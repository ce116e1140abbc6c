"""The out= keyword of ember's functions (python/ember/_out_arg.py): values
against numpy, tuple outs, resizing, dtype casts, devices, autograd, aliasing,
non-contiguous outs, factories, and which functions carry it."""
import inspect
import re
import warnings

import numpy as np
import pytest

import ember
from ember import _out_arg
from harness import DEVICE, assert_close, make, needs_gpu, random_array, to_numpy

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return random_array(shape, dtype, rng=RNG)


def empty(dtype=ember.float32):
    return ember.empty(0, dtype=dtype, device=DEVICE)


def _inv_input():
    return rand(3, 3) + 3 * np.eye(3, dtype=np.float32)  # well conditioned


A34, B34, C45 = rand(3, 4), rand(3, 4), rand(4, 5)
M3, V3, BA, BB = _inv_input(), rand(3, 2), rand(2, 3, 4), rand(2, 4, 2)
COND = rand(3, 4) > 0

# (name, the call given out, numpy's result)
VALUE_CASES = [
    ("add", lambda o: ember.add(make(A34), make(B34), out=o), lambda: A34 + B34),
    ("add_alpha_broadcast", lambda o: ember.add(make(A34), make(B34[0]), alpha=2, out=o), lambda: A34 + 2 * B34[0]),
    ("mul", lambda o: ember.mul(make(A34), make(B34), out=o), lambda: A34 * B34),
    ("cat", lambda o: ember.cat([make(A34), make(B34)], 1, out=o), lambda: np.concatenate([A34, B34], 1)),
    ("stack", lambda o: ember.stack([make(A34), make(B34)], out=o), lambda: np.stack([A34, B34])),
    ("matmul", lambda o: ember.matmul(make(A34), make(C45), out=o), lambda: A34 @ C45),
    ("mm", lambda o: ember.mm(make(A34), make(C45), out=o), lambda: A34 @ C45),
    ("bmm", lambda o: ember.bmm(make(BA), make(BB), out=o), lambda: BA @ BB),
    ("sum_dim", lambda o: ember.sum(make(A34), 1, out=o), lambda: A34.sum(1)),
    ("mean_dim_keepdim", lambda o: ember.mean(make(A34), 0, keepdim=True, out=o), lambda: A34.mean(0, keepdims=True)),
    ("clamp", lambda o: ember.clamp(make(A34), -0.5, 0.5, out=o), lambda: np.clip(A34, -0.5, 0.5)),
    ("where", lambda o: ember.where(make(COND), make(A34), make(B34), out=o), lambda: np.where(COND, A34, B34)),
    ("exp", lambda o: ember.exp(make(A34), out=o), lambda: np.exp(A34)),
    ("linalg.inv", lambda o: ember.linalg.inv(make(M3), out=o), lambda: np.linalg.inv(M3)),
    ("linalg.solve", lambda o: ember.linalg.solve(make(M3), make(V3), out=o), lambda: np.linalg.solve(M3, V3)),
    ("linalg.det", lambda o: ember.linalg.det(make(M3), out=o), lambda: np.linalg.det(M3)),
    ("linalg.vector_norm", lambda o: ember.linalg.vector_norm(make(A34), dim=1, out=o),
     lambda: np.linalg.norm(A34, axis=1)),
    ("linalg.matmul", lambda o: ember.linalg.matmul(make(A34), make(C45), out=o), lambda: A34 @ C45),
    ("special.expit", lambda o: ember.special.expit(make(A34), out=o), lambda: 1 / (1 + np.exp(-A34))),
    ("fft.rfft", lambda o: ember.fft.rfft(make(A34), out=o), lambda: np.fft.rfft(A34)),
]


@pytest.mark.parametrize("name,call,expected", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_out_receives_the_result(name, call, expected):
    want = expected()
    out = empty(ember.complex64 if np.iscomplexobj(want) else ember.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently
        result = call(out)
    assert result is out
    if np.iscomplexobj(want):  # assert_close compares real parts only
        np.testing.assert_allclose(to_numpy(out), want, rtol=1e-4, atol=1e-5)
    else:
        assert_close(out, want.astype(np.float32), rtol=1e-4, atol=1e-5)


def test_out_of_the_right_shape_keeps_its_memory():
    out = ember.zeros(3, 4, device=DEVICE)
    ptr = out.data_ptr()
    ember.add(make(A34), make(B34), out=out)
    assert out.data_ptr() == ptr
    assert_close(out, A34 + B34)


def test_out_none_and_no_out_call_straight_through():
    a, b = make(A34), make(B34)
    assert_close(ember.add(a, b, out=None), A34 + B34)
    assert type(ember.max(a, 1)) is ember.return_types.max


# ---- tuple outs

TUPLE_CASES = [
    ("max", lambda x, o: ember.max(x, 1, out=o), lambda a: (a.max(1), a.argmax(1))),
    ("min", lambda x, o: ember.min(x, 0, keepdim=True, out=o),
     lambda a: (a.min(0, keepdims=True), a.argmin(0)[None])),
    ("sort", lambda x, o: ember.sort(x, 1, descending=True, out=o),
     lambda a: (-np.sort(-a, 1), np.argsort(-a, 1, kind="stable"))),
    ("topk", lambda x, o: ember.topk(x, 2, out=o),
     lambda a: (-np.sort(-a, 1)[:, :2], np.argsort(-a, 1, kind="stable")[:, :2])),
    ("kthvalue", lambda x, o: ember.kthvalue(x, 2, 1, out=o), lambda a: (np.sort(a, 1)[:, 1], np.argsort(a, 1)[:, 1])),
]


@pytest.mark.parametrize("name,call,expected", TUPLE_CASES, ids=[c[0] for c in TUPLE_CASES])
def test_tuple_out(name, call, expected):
    x = make(A34)
    values, indices = empty(), empty(ember.int64)
    result = call(x, (values, indices))
    assert type(result) is type(call(x, None))  # the function's own named tuple
    assert result.values is values and result.indices is indices
    want_values, want_indices = expected(A34)
    assert_close(values, want_values)
    assert_close(indices, want_indices.astype(np.int64))


def test_tuple_out_as_a_list():
    values, indices = empty(), empty(ember.int64)
    result = ember.sort(make(A34), out=[values, indices])
    assert result.values is values and result.indices is indices
    assert_close(values, np.sort(A34, -1))


def test_tuple_out_of_the_wrong_kind_is_a_type_error():
    x = make(A34)
    with pytest.raises(TypeError, match=r"max: argument 'out' must be a tuple of 2 Tensors, not Tensor"):
        ember.max(x, 1, out=empty())
    with pytest.raises(TypeError, match=r"max: argument 'out' must be a tuple of 2 Tensors, not a tuple of 1"):
        ember.max(x, 1, out=(empty(),))
    with pytest.raises(TypeError, match=r"add: argument 'out' must be a Tensor, not tuple"):
        ember.add(x, x, out=(empty(),))
    with pytest.raises(TypeError, match=r"exp: argument 'out' must be a Tensor or a tuple of Tensors, not ndarray"):
        ember.exp(x, out=np.zeros(3))


def test_tuple_out_checks_every_tensor_before_writing_any():
    values, indices = ember.zeros(3, device=DEVICE), ember.zeros(3, dtype=ember.int32, device=DEVICE)
    bad = ember.zeros(3, dtype=ember.bool, device=DEVICE)
    with pytest.raises(RuntimeError, match="max: result type int64 can't be cast to the desired output type bool"):
        ember.max(make(A34), 1, out=(values, bad))
    assert_close(values, np.zeros(3, np.float32))  # untouched
    ember.max(make(A34), 1, out=(values, indices))  # int64 indices cast to int32
    assert indices.dtype == ember.int32
    assert_close(indices, A34.argmax(1).astype(np.int32))


# ---- shapes

def test_out_of_another_shape_is_resized_with_a_warning():
    out = ember.zeros(5, device=DEVICE)
    with pytest.warns(UserWarning, match=r"add: out of shape \[5\] was resized to the result's shape \[3, 4\]") as rec:
        result = ember.add(make(A34), make(B34), out=out)
    assert rec[0].filename == __file__  # points at the call
    assert result is out and tuple(out.shape) == (3, 4)
    assert_close(out, A34 + B34)


def test_empty_out_is_resized_without_a_warning():
    out = ember.zeros(0, 4, device=DEVICE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.mean(make(A34), 1, out=out)
    assert_close(out, A34.mean(1))


def test_non_contiguous_out_receives_the_values():
    base = ember.zeros(4, 3, device=DEVICE)
    out = base.t()  # a transposed view of the right shape: written through its strides
    assert not out.is_contiguous()
    result = ember.mul(make(A34), make(B34), out=out)
    assert result is out and out.stride() == (1, 3)
    assert_close(out, A34 * B34)
    assert_close(base, (A34 * B34).T)


def test_expanded_out_is_refused():
    out = ember.zeros(1, 4, device=DEVICE).expand(3, 4)
    with pytest.raises(RuntimeError, match="add: unsupported operation: more than one element"):
        ember.add(make(A34), make(B34), out=out)


# ---- dtypes

def test_result_cast_to_a_wider_out_dtype():
    out = empty(ember.float64)
    ember.add(make(A34), make(B34), out=out)
    assert out.dtype == ember.float64
    assert_close(out, A34.astype(np.float64) + B34.astype(np.float64), rtol=1e-6)
    ints = empty(ember.float32)
    ember.add(make(np.arange(4)), 1, out=ints)  # int64 result into a float32 out
    assert_close(ints, np.arange(1, 5, dtype=np.float32))


def test_result_that_cannot_be_cast_is_refused():
    out = ember.full((3, 4), 7, dtype=ember.int64, device=DEVICE)
    with pytest.raises(RuntimeError, match="add: result type float32 can't be cast to the desired output type int64"):
        ember.add(make(A34), make(B34), out=out)
    assert_close(out, np.full((3, 4), 7))  # left as it was
    with pytest.raises(RuntimeError, match="linalg.inv: result type float32 can't be cast .* int64"):
        ember.linalg.inv(make(M3), out=empty(ember.int64))


def test_factories_make_their_result_in_outs_dtype():
    out = empty(ember.int64)
    assert ember.zeros(2, 3, out=out) is out
    assert out.dtype == ember.int64 and tuple(out.shape) == (2, 3)
    assert_close(out, np.zeros((2, 3), np.int64))
    f64 = empty(ember.float64)
    ember.arange(5, out=f64)
    assert_close(f64, np.arange(5, dtype=np.float64))
    ints = empty(ember.int64)
    ember.full((2,), 3, out=ints)
    assert_close(ints, np.array([3, 3]))
    with pytest.raises(RuntimeError, match="zeros: dtype float64 was asked for, but out has dtype float32"):
        ember.zeros(2, dtype=ember.float64, out=empty())


def test_normal_of_numbers_fills_out_like_a_factory():
    out = empty(ember.float64)
    assert ember.normal(2.0, 0.5, (400,), out=out) is out
    assert out.dtype == ember.float64 and out.device == make(np.zeros(1)).device and tuple(out.shape) == (400,)
    assert abs(float(out.mean()) - 2.0) < 0.2
    means = make(np.array([0.0, 100.0]))
    got = ember.normal(means, 1.0, out=empty(ember.float64))  # of a tensor: not a factory
    assert float(got[1]) > 90.0


# ---- devices

@needs_gpu
def test_out_on_another_device_is_refused():
    other = "cpu" if ember.device(DEVICE).type == "cuda" else "cuda"
    out = ember.zeros(3, 4, device=other)
    with pytest.raises(RuntimeError, match=r"add: out is on device .*, but the result is on"):
        ember.add(make(A34), make(B34), out=out)
    assert_close(out, np.zeros((3, 4), np.float32))


# ---- autograd

def test_input_requiring_grad_is_refused():
    x = make(A34, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape("exp(): functions with out=... arguments don't support automatic "
                                                     "differentiation, but one of the arguments requires grad.")):
        ember.exp(x, out=empty())
    with pytest.raises(RuntimeError, match=re.escape("linalg.inv(): functions with out=...")):
        ember.linalg.inv(make(M3, requires_grad=True), out=empty())
    with pytest.raises(RuntimeError, match=re.escape("max(): functions with out=...")):
        ember.max(x, 1, out=(empty(), empty(ember.int64)))


def test_out_requiring_grad_is_refused():
    out = ember.zeros(3, 4, device=DEVICE, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape("add(): functions with out=... arguments don't support")):
        ember.add(make(A34), make(B34), out=out)


def test_grad_free_calls_are_allowed():
    x = make(A34, requires_grad=True)
    with ember.no_grad():
        out = ember.exp(x, out=empty())
    assert not out.requires_grad
    assert_close(out, np.exp(A34), rtol=1e-5)
    indices = ember.argmax(x, 1, out=empty(ember.int64))  # an integer result carries no grad
    assert_close(indices, A34.argmax(1))


# ---- aliasing

def test_out_aliasing_an_input():
    a, b = make(A34), make(B34)
    assert ember.add(a, b, out=a) is a
    assert_close(a, A34 + B34)
    m = make(M3)
    ember.matmul(m, m, out=m)
    assert_close(m, M3 @ M3, rtol=1e-4, atol=1e-5)
    x = make(A34)
    values, indices = ember.sort(x, 1, out=(x, empty(ember.int64)))
    assert values is x
    assert_close(x, np.sort(A34, 1))


def test_out_aliasing_an_input_of_another_shape():
    row = make(B34[0])
    with pytest.warns(UserWarning, match="resized"):
        ember.add(make(A34), row, out=row)
    assert_close(row, A34 + B34[0])


# ---- which functions carry out=

def _lookup(qualified):
    namespace, _, name = qualified.rpartition(".")
    return getattr(getattr(ember, namespace) if namespace else ember, name)


def test_names_are_a_sorted_tuple_of_unique_names():
    assert isinstance(_out_arg.NAMES, tuple)
    assert list(_out_arg.NAMES) == sorted(set(_out_arg.NAMES))
    assert _out_arg.FACTORIES <= set(_out_arg.NAMES)


@pytest.mark.parametrize("qualified", _out_arg.NAMES)
def test_every_listed_function_is_wrapped(qualified):
    fn = _lookup(qualified)
    assert getattr(fn, "_ember_out_arg", False), f"{qualified} is not wrapped"
    original = fn.__wrapped__
    assert fn.__name__ == original.__name__ and fn.__doc__ == original.__doc__
    # The wrapped function does not take out itself (else it belongs off the list); chain_matmul
    # only declares it (see below).
    try:
        assert "out" not in inspect.signature(original).parameters or qualified == "chain_matmul"
    except ValueError:  # a pybind function: its docstring lists its arguments
        assert not re.search(r"\bout\b", original.__doc__ or "")


def test_chain_matmul_gets_the_out_it_declares():
    # ember's chain_matmul names an out parameter only to refuse it; the wrapper supplies it.
    a = make(M3)
    with pytest.raises(NotImplementedError):
        ember.chain_matmul.__wrapped__(a, a, out=empty())
    out = empty()
    assert ember.chain_matmul(a, a, out=out) is out
    assert_close(out, M3 @ M3, rtol=1e-4, atol=1e-5)


def test_install_twice_wraps_once():
    before = ember.add
    _out_arg.install()
    assert ember.add is before and ember.add._ember_out_arg == ("add", False)


def test_linalg_and_special_carry_out_too():
    assert ember.linalg.matmul._ember_out_arg == ("linalg.matmul", False)  # its own wrapper, naming it
    assert ember.special.erf._ember_out_arg and ember.fft.fft._ember_out_arg
    assert "special.erf" in _out_arg.NAMES and "fft.fft" in _out_arg.NAMES
    assert not hasattr(ember.special.softmax, "_ember_out_arg")  # torch.special.softmax takes no out
