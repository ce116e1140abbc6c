"""The fused dropout: ember.native_dropout (one kernel pass drawing the keep
bits from the Philox generator and writing the output and a bool mask),
ember.native_dropout_backward (grad * mask * scale in one pass, its own
backward) and F.dropout / nn.Dropout on top of them.

Covered: the kept fraction within statistical bounds, kept values equal to
x * (1 / (1 - p)) bit for bit, the mask's dtype and shape, gradients, float64
gradcheck with a reseeded draw, double backward, p = 0, p = 1, eval mode,
inplace (with and without autograd), bad arguments, non-contiguous inputs, the
half dtypes, the node names, and that the mask is bernoulli_'s with 1 - p
drawn from the same counters. CUDA against the CPU: test_cuda_dropout.py.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from harness import OpCase, make, random_array, table_tests, to_numpy


def np_mask_like(x):
    return np.arange(x.size).reshape(x.shape) % 3 != 0


def mask_like(t):
    """A fixed bool mask of t's shape (every third element dropped)."""
    return (ember.arange(t.numel(), device=t.device).reshape(t.shape) % 3) != 0


def mask_last(t):
    """A fixed bool mask over t's last dim, broadcast over the rest."""
    return (ember.arange(t.shape[-1], device=t.device) % 2) == 0


# The deterministic corners of the op, run by the generic table tests (and on
# CUDA by test_cuda_ops.py).
CASES = [
    OpCase("native_dropout_p0", lambda x: ember.native_dropout(x, 0.0, True)[0], lambda x: x,
           [[(3, 4)], [(5,)], [()], [(0, 3)]], dtypes=(np.float32, np.float64, np.float16)),
    OpCase("native_dropout_p1", lambda x: ember.native_dropout(x, 1.0, True)[0], lambda x: x * 0,
           [[(3, 4)], [(7,)]], dtypes=(np.float32, np.float64)),
    OpCase("native_dropout_eval", lambda x: ember.native_dropout(x, 0.5, False)[0], lambda x: x.copy(),
           [[(2, 5)], [()]], dtypes=(np.float32, np.float64)),
    OpCase("native_dropout_backward", lambda g: ember.native_dropout_backward(g, mask_like(g), 1.25),
           lambda g: g * np_mask_like(g) * np.asarray(1.25, g.dtype), [[(3, 4)], [(9,)], [()], [(2, 0)]],
           dtypes=(np.float32, np.float64, np.float16)),
    OpCase("native_dropout_backward_broadcast_mask", lambda g: ember.native_dropout_backward(g, mask_last(g), 2.0),
           lambda g: g * (np.arange(g.shape[-1]) % 2 == 0) * np.asarray(2.0, g.dtype), [[(3, 4)], [(2, 3, 5)]],
           dtypes=(np.float32, np.float64)),
]

test_forward, test_gradcheck = table_tests(CASES)

HALF = [ember.float16, ember.bfloat16]


def rand(*shape, dtype=ember.float32, requires_grad=False):
    """Random values in (-2, 2) on the harness's device."""
    np_dtype = {ember.float32: np.float32, ember.float64: np.float64}.get(dtype)
    if np_dtype is not None:
        return make(random_array(shape, np_dtype), requires_grad=requires_grad)
    t = make(random_array(shape, np.float32)).to(dtype)
    return t.requires_grad_() if requires_grad else t


# ---- forward

@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_fraction_kept_within_statistical_bounds(p):
    ember.manual_seed(11)
    n = 40000
    out, mask = ember.native_dropout(make(np.ones(n, np.float32)), p, True)
    kept = to_numpy(mask).mean()
    assert abs(kept - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)  # five standard deviations
    np.testing.assert_array_equal(to_numpy(out) != 0, to_numpy(mask))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("p", [0.5, 0.75, 0.3])
def test_kept_values_are_x_times_the_scale_bit_for_bit(dtype, p):
    ember.manual_seed(2)
    x = rand(6, 50, dtype=dtype)
    out, mask = ember.native_dropout(x, p, True)
    xs, o, m = to_numpy(x), to_numpy(out), to_numpy(mask)
    scale = np.asarray(1 / (1 - p), xs.dtype)
    np.testing.assert_array_equal(o[m], xs[m] * scale)
    np.testing.assert_array_equal(o[~m], 0)
    if p in (0.5, 0.75):  # 1 / (1 - p) is a power of two: x * scale is x / (1 - p) exactly
        np.testing.assert_array_equal(o[m], xs[m] / np.asarray(1 - p, xs.dtype))
    else:
        np.testing.assert_allclose(o[m], xs[m] / (1 - p), rtol=2 * np.finfo(xs.dtype).eps)


@pytest.mark.parametrize("shape", [(3, 4), (7,), (), (0, 3), (2, 3, 5)])
def test_mask_is_bool_of_the_input_shape(shape):
    x = rand(*shape)
    out, mask = ember.native_dropout(x, 0.4, True)
    assert mask.dtype == ember.bool and tuple(mask.shape) == shape and not mask.requires_grad
    assert out.dtype == x.dtype and tuple(out.shape) == shape


def test_mask_is_bernoulli_of_keep_probability_from_the_same_counters():
    x = rand(5, 13)
    ember.manual_seed(21)
    _, mask = ember.native_dropout(x, 0.35, True)
    after_dropout = to_numpy(ember.rand(8, device=x.device))
    ember.manual_seed(21)
    keep = ember.empty(5, 13, device=x.device).bernoulli_(0.65)
    after_bernoulli = to_numpy(ember.rand(8, device=x.device))
    np.testing.assert_array_equal(to_numpy(mask), to_numpy(keep) == 1)
    np.testing.assert_array_equal(after_dropout, after_bernoulli)  # the generator advanced the same way


def test_reproducible_under_manual_seed_and_fresh_each_call():
    x = rand(200)
    ember.manual_seed(7)
    a = to_numpy(ember.native_dropout(x, 0.5, True)[1])
    ember.manual_seed(7)
    b = to_numpy(ember.native_dropout(x, 0.5, True)[1])
    c = to_numpy(ember.native_dropout(x, 0.5, True)[1])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)


def test_f_dropout_is_native_dropouts_output():
    x = rand(4, 9, requires_grad=True)
    ember.manual_seed(5)
    y = F.dropout(x, 0.3)
    ember.manual_seed(5)
    ref, _ = ember.native_dropout(x, 0.3, True)
    np.testing.assert_array_equal(to_numpy(y), to_numpy(ref))
    assert y.grad_fn.name() == "NativeDropoutBackward0"
    ember.manual_seed(5)
    z = nn.Dropout(0.3)(x)
    np.testing.assert_array_equal(to_numpy(z), to_numpy(ref))


# ---- gradients

@pytest.mark.parametrize("p", [0.2, 0.6])
def test_grad_is_grad_times_mask_over_keep_probability(p):
    x = rand(8, 7, dtype=ember.float64, requires_grad=True)
    out, mask = ember.native_dropout(x, p, True)
    assert out.grad_fn.name() == "NativeDropoutBackward0"
    g = make(random_array((8, 7), np.float64))
    out.backward(g)
    want = to_numpy(g) * to_numpy(mask) * (1 / (1 - p))
    np.testing.assert_array_equal(to_numpy(x.grad), want)


def test_gradcheck_with_a_reseeded_draw():
    x = rand(4, 5, dtype=ember.float64, requires_grad=True)

    def fn(t):
        ember.manual_seed(1234)  # every evaluation draws the same mask
        return ember.native_dropout(t, 0.4, True)[0]

    def through_f_dropout(t):
        ember.manual_seed(9)
        return F.dropout(t, 0.4)

    assert ember.autograd.gradcheck(fn, [x])
    assert ember.autograd.gradcheck(through_f_dropout, [x])


def test_double_backward():
    x = rand(6, dtype=ember.float64, requires_grad=True)
    out, mask = ember.native_dropout(x, 0.5, True)
    g = make(random_array((6,), np.float64), requires_grad=True)
    (gx,) = ember.autograd.grad(out, x, grad_outputs=g, create_graph=True)
    assert gx.grad_fn.name() == "NativeDropoutBackwardBackward0"
    w = make(random_array((6,), np.float64))
    (gx * w).sum().backward()
    np.testing.assert_array_equal(to_numpy(g.grad), to_numpy(w) * to_numpy(mask) * 2.0)
    assert ember.autograd.gradcheck(lambda t: ember.native_dropout_backward(t, mask_like(t), 1.5), [g.detach().requires_grad_()])


# ---- p = 0, p = 1, eval

def test_p_zero_keeps_everything():
    x = rand(3, 4, requires_grad=True)
    y = F.dropout(x, 0.0)
    assert y.data_ptr() == x.data_ptr() and y.requires_grad  # the input itself, no copy
    out, mask = ember.native_dropout(x, 0.0, True)
    assert to_numpy(mask).all()
    np.testing.assert_array_equal(to_numpy(out), to_numpy(x))


def test_p_one_gives_zeros_and_zero_grads():
    x = rand(3, 4, requires_grad=True)
    out, mask = ember.native_dropout(x, 1.0, True)
    assert not to_numpy(mask).any()
    o = to_numpy(out)
    assert np.isfinite(o).all() and (o == 0).all()
    out.sum().backward()
    g = to_numpy(x.grad)
    assert np.isfinite(g).all() and (g == 0).all()
    np.testing.assert_array_equal(to_numpy(F.dropout(x, 1.0)), np.zeros((3, 4), np.float32))


def test_eval_mode():
    x = rand(10, requires_grad=True)
    assert F.dropout(x, 0.5, training=False).data_ptr() == x.data_ptr()
    d = nn.Dropout(0.5)
    d.eval()
    assert d(x).data_ptr() == x.data_ptr()
    out, mask = ember.native_dropout(x, 0.5, False)
    assert out.data_ptr() != x.data_ptr() and to_numpy(mask).all() and mask.dtype == ember.bool
    np.testing.assert_array_equal(to_numpy(out), to_numpy(x))
    out.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.ones(10, np.float32))
    _, drawn = ember.native_dropout(rand(200), 0.5, None)  # train=None means training, as in torch
    assert not to_numpy(drawn).all()


# ---- inplace

def test_inplace_without_autograd_writes_into_the_input():
    ember.manual_seed(4)
    ref = to_numpy(F.dropout(make(np.ones(1000, np.float32)), 0.5))
    y = make(np.ones(1000, np.float32))
    ember.manual_seed(4)
    version = y._version
    r = F.dropout(y, 0.5, inplace=True)
    assert r.data_ptr() == y.data_ptr() and y._version > version
    np.testing.assert_array_equal(to_numpy(y), ref)
    assert set(np.unique(ref)) == {0.0, 2.0}


def test_inplace_on_a_non_contiguous_view():
    base = make(np.ones((6, 8), np.float32))
    view = base.t()
    ember.manual_seed(8)
    want = to_numpy(F.dropout(view.contiguous(), 0.5))
    ember.manual_seed(8)
    F.dropout(view, 0.5, inplace=True)
    np.testing.assert_array_equal(to_numpy(view), want)
    np.testing.assert_array_equal(to_numpy(base), want.T)


def test_inplace_with_autograd_takes_over_the_history():
    x = rand(5, 6, dtype=ember.float64, requires_grad=True)
    a = x * 1.0
    ember.manual_seed(3)
    r = F.dropout(a, 0.25, inplace=True)
    assert r.data_ptr() == a.data_ptr() and a.grad_fn.name() == "NativeDropoutBackward0"
    a.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), (to_numpy(a) != 0) * (1 / 0.75))
    with pytest.raises(RuntimeError, match=r"^dropout: a leaf Variable that requires grad"):
        F.dropout(x, 0.5, inplace=True)


# ---- layouts and dtypes

@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded"])
def test_non_contiguous_input_draws_as_its_contiguous_copy(layout):
    base = rand(6, 10)
    x = {"transposed": base.t(), "sliced": base[:, ::3], "expanded": base[:1].expand(6, 10)}[layout]
    ember.manual_seed(17)
    out, mask = ember.native_dropout(x, 0.4, True)
    ember.manual_seed(17)
    ref, ref_mask = ember.native_dropout(x.contiguous(), 0.4, True)
    np.testing.assert_array_equal(to_numpy(out), to_numpy(ref))
    np.testing.assert_array_equal(to_numpy(mask), to_numpy(ref_mask))


@pytest.mark.parametrize("dtype", HALF)
def test_half_dtypes_compute_in_float32(dtype):
    x32 = rand(7, 9)
    x = x32.to(dtype)
    ember.manual_seed(30)
    out, mask = ember.native_dropout(x, 0.3, True)
    ember.manual_seed(30)
    _, mask32 = ember.native_dropout(x32, 0.3, True)
    assert out.dtype == dtype
    np.testing.assert_array_equal(to_numpy(mask), to_numpy(mask32))  # the draw does not depend on the dtype
    scale = np.float32(1 / 0.7)
    want = (ember.tensor(to_numpy(x.float()) * scale * to_numpy(mask), device=x.device)).to(dtype)
    np.testing.assert_array_equal(to_numpy(out.float()), to_numpy(want.float()))
    xg = x.requires_grad_()
    o, m = ember.native_dropout(xg, 0.3, True)
    o.backward(ember.ones_like(o))
    assert xg.grad.dtype == dtype
    np.testing.assert_array_equal(to_numpy(xg.grad.float()), to_numpy(m).astype(np.float32) * to_numpy(
        ember.tensor(scale, device=x.device).to(dtype).float()))


# ---- errors

def test_bad_arguments():
    x = rand(4)
    with pytest.raises(ValueError, match=r"^native_dropout: dropout probability has to be between 0 and 1, but got 1.5"):
        ember.native_dropout(x, 1.5, True)
    with pytest.raises(ValueError, match=r"^native_dropout: dropout probability"):
        ember.native_dropout(x, -0.1, False)
    with pytest.raises(ValueError, match=r"^native_dropout: dropout probability"):
        ember.native_dropout(x, float("nan"), True)
    with pytest.raises(ValueError, match=r"^dropout: dropout probability has to be between 0 and 1, but got -0.1"):
        F.dropout(x, -0.1)
    with pytest.raises(ValueError):
        nn.Dropout(1.5)
    with pytest.raises(RuntimeError, match=r"^native_dropout: expected a floating point input, got int64"):
        ember.native_dropout(make(np.arange(4)), 0.5, True)
    with pytest.raises(RuntimeError, match=r"^native_dropout_backward: expected a bool mask, got float32"):
        ember.native_dropout_backward(x, x, 2.0)
    with pytest.raises(RuntimeError, match=r"^native_dropout_backward: shapes \[4\] and \[3\] cannot be broadcast"):
        ember.native_dropout_backward(x, make(np.ones(3, np.bool_)), 2.0)
    with pytest.raises(RuntimeError, match=r"^native_dropout_backward: mask of shape \[2, 4\] cannot be broadcast "
                                           r"to the grad's shape \[4\]"):
        ember.native_dropout_backward(x, make(np.ones((2, 4), np.bool_)), 2.0)
    with pytest.raises(RuntimeError, match=r"^native_dropout_backward: expected a floating point grad"):
        ember.native_dropout_backward(make(np.arange(4)), make(np.ones(4, np.bool_)), 2.0)


def test_saved_mask_modified_in_place_is_detected():
    x = rand(6, dtype=ember.float64, requires_grad=True)
    out, mask = ember.native_dropout(x, 0.5, True)
    mask.fill_(True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
