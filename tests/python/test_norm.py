"""norm family (batch_norm, layer_norm, group_norm, rms_norm) plus embedding
and dropout from ember._C._nn: forward against numpy references of the
published formulas, non-contiguous inputs, float64 gradcheck for input,
weight and bias (and double backward), running-stat updates, dropout
statistics and reproducibility, and errors."""
import numpy as np
import pytest

import ember
from ember._C import _nn as F
from harness import OpCase, assert_close, make, parametrize_cases, random_array, table_tests, to_numpy

FL = (np.float32, np.float64)


def np_standardize(a, axes, eps):
    a = a.astype(np.float64)
    mu = a.mean(axis=axes, keepdims=True)
    var = ((a - mu) ** 2).mean(axis=axes, keepdims=True)
    return (a - mu) / np.sqrt(var + eps)


def channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def np_batch_norm_train(x, w=None, b=None, eps=1e-5):
    y = np_standardize(x, (0,) + tuple(range(2, x.ndim)), eps)
    if w is not None:
        y = y * channel(w, x.ndim)
    if b is not None:
        y = y + channel(b, x.ndim)
    return y


def np_batch_norm_eval(x, rm, rv, w, b, eps=1e-5):
    y = (x.astype(np.float64) - channel(rm, x.ndim)) / np.sqrt(channel(rv, x.ndim) + eps)
    return y * channel(w, x.ndim) + channel(b, x.ndim)


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    y = np_standardize(x, tuple(range(x.ndim - k, x.ndim)), eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def np_group_norm(x, g, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    y = np_standardize(x.reshape(n, g, -1), (2,), eps).reshape(x.shape)
    if w is not None:
        y = y * channel(w, x.ndim)
    if b is not None:
        y = y + channel(b, x.ndim)
    return y


def np_rms_norm(x, k, w=None, eps=None):
    eps = np.finfo(x.dtype).eps if eps is None else eps
    a = x.astype(np.float64)
    ms = (a ** 2).mean(axis=tuple(range(x.ndim - k, x.ndim)), keepdims=True)
    y = a / np.sqrt(ms + eps)
    return y if w is None else y * w


def positive(v):  # running_var from any values
    return v * v + 0.5


CASES = [
    OpCase("batch_norm_train", lambda x: F.batch_norm(x, None, None, training=True),
           np_batch_norm_train, [[(4, 3)], [(2, 3, 5)], [(2, 3, 2, 3)]], dtypes=FL, rtol=1e-4, atol=1e-5),
    OpCase("batch_norm_train_affine", lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
           np_batch_norm_train, [[(4, 3, 2), (3,), (3,)], [(3, 2, 2, 2), (2,), (2,)]], dtypes=FL, rtol=1e-4,
           atol=1e-5),
    OpCase("batch_norm_eval", lambda x, rm, rv, w, b: F.batch_norm(x, rm, positive(rv), w, b, eps=1e-3),
           lambda x, rm, rv, w, b: np_batch_norm_eval(x, rm, positive(rv), w, b, 1e-3),
           [[(4, 3), (3,), (3,), (3,), (3,)], [(2, 3, 4), (3,), (3,), (3,), (3,)]], dtypes=FL, rtol=1e-4, atol=1e-5),
    OpCase("layer_norm", lambda x: F.layer_norm(x, x.shape[-1:]), lambda x: np_layer_norm(x, 1),
           [[(3, 5)], [(2, 3, 4)], [(6,)]], dtypes=FL, rtol=1e-4, atol=1e-5),
    OpCase("layer_norm_affine_2d", lambda x, w, b: F.layer_norm(x, (3, 4), w, b, 1e-3),
           lambda x, w, b: np_layer_norm(x, 2, w, b, 1e-3), [[(2, 3, 4), (3, 4), (3, 4)]], dtypes=FL,
           rtol=1e-4, atol=1e-5),
    OpCase("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), lambda x, w, b: np_group_norm(x, 2, w, b),
           [[(2, 4, 3), (4,), (4,)], [(3, 6, 2, 2), (6,), (6,)], [(2, 4), (4,), (4,)]], dtypes=FL, rtol=1e-4,
           atol=1e-5),
    OpCase("group_norm_plain", lambda x: F.group_norm(x, 3, eps=1e-2), lambda x: np_group_norm(x, 3, eps=1e-2),
           [[(2, 6, 5)]], dtypes=FL, rtol=1e-4, atol=1e-5),
    OpCase("rms_norm", lambda x, w: F.rms_norm(x, x.shape[-1:], w, 1e-6), lambda x, w: np_rms_norm(x, 1, w, 1e-6),
           [[(3, 5), (5,)], [(2, 3, 4), (4,)]], dtypes=FL, rtol=1e-4, atol=1e-5),
    OpCase("rms_norm_default_eps", lambda x: F.rms_norm(x, list(x.shape[-2:])), lambda x: np_rms_norm(x, 2),
           [[(2, 3, 4)]], dtypes=FL, rtol=1e-4, atol=1e-5),
]

# forward against numpy for every row; float64 gradcheck (input, weight, bias) for every row
test_forward, test_gradcheck = table_tests(CASES)


@parametrize_cases([c for c in CASES if len(c.shapes[0]) == 1])
def test_noncontiguous(case):
    a = random_array((4, 6, 5))
    t = make(np.ascontiguousarray(np.swapaxes(a, 0, 2))).permute(2, 1, 0)
    assert not t.is_contiguous()
    assert_close(case.ember_fn(t), case.numpy_fn(a), 1e-4, 1e-5, msg=f"{case.name} permuted")
    padded = random_array((4, 6, 10))
    assert_close(case.ember_fn(make(padded)[..., ::2]), case.numpy_fn(padded[..., ::2]), 1e-4, 1e-5,
                 msg=f"{case.name} sliced")


def test_batch_norm_updates_running_stats():
    x = random_array((5, 3, 4), np.float64)
    rm0, rv0 = random_array((3,), np.float64), positive(random_array((3,), np.float64))
    rm, rv = make(rm0), make(rv0)
    F.batch_norm(make(x), rm, rv, training=True, momentum=0.2)
    axes = (0, 2)
    mean = x.mean(axis=axes)
    unbiased = x.var(axis=axes, ddof=1)
    assert_close(rm, 0.8 * rm0 + 0.2 * mean, 1e-12, 1e-12)
    assert_close(rv, 0.8 * rv0 + 0.2 * unbiased, 1e-12, 1e-12)
    # Eval mode reads them and leaves them alone.
    before = to_numpy(rm).copy()
    y = F.batch_norm(make(x), rm, rv, training=False)
    assert_close(y, (x - channel(to_numpy(rm), 3)) / np.sqrt(channel(to_numpy(rv), 3) + 1e-5), 1e-10, 1e-10)
    assert_close(rm, before, 0, 0)


def test_batch_norm_running_stats_not_in_graph():
    x = make(random_array((4, 2), np.float64), requires_grad=True)
    rm, rv = ember.zeros(2, dtype=ember.float64, device=x.device), ember.ones(2, dtype=ember.float64, device=x.device)
    F.batch_norm(x, rm, rv, training=True).sum().backward()
    assert not rm.requires_grad and not rv.requires_grad
    # The normalized output sums to zero per channel, so its gradient vanishes.
    assert_close(x.grad, np.zeros((4, 2)), 0, 1e-10)


def test_batch_norm_double_backward():
    x = make(random_array((3, 6, 4), np.float64), requires_grad=True)
    w = make(random_array((6,), np.float64), requires_grad=True)
    b = make(random_array((6,), np.float64), requires_grad=True)
    g = make(random_array((3, 6, 4), np.float64))

    def first(x, w, b):
        (gx,) = ember.autograd.grad([(F.batch_norm(x, None, None, w, b, True) * g).sum()], [x], create_graph=True)
        return gx * gx
    assert ember.autograd.gradcheck(first, [x, w, b])


def test_layer_and_group_norm_double_backward():
    x = make(random_array((3, 6, 4), np.float64), requires_grad=True)
    g = make(random_array((3, 6, 4), np.float64))

    def ln(x):
        (gx,) = ember.autograd.grad([(F.layer_norm(x, (4,)) * g).sum()], [x], create_graph=True)
        return gx * gx

    def gn(x):
        (gx,) = ember.autograd.grad([(F.group_norm(x, 3) * g).sum()], [x], create_graph=True)
        return gx * gx
    assert ember.autograd.gradcheck(ln, [x])
    assert ember.autograd.gradcheck(gn, [x])


def test_half_input_keeps_dtype():
    x = ember.tensor(random_array((2, 3, 4)), dtype=ember.float16)
    y = F.layer_norm(x, (4,))
    assert y.dtype == ember.float16
    assert_close(y.float(), np_layer_norm(x.float().numpy(), 1), 1e-2, 1e-2)


@pytest.mark.parametrize("dtype", [ember.bfloat16, ember.float16])
def test_half_layer_norm_input_gradient_rounds_once(dtype):
    # A row of three close values (var 0.0035, rstd 17) whose gradient is a
    # difference of terms near 3.2: computed in the half dtype op by op it was
    # -0.0063 for -0.0284; computed in float32, it is near the exact value.
    x = np.array([[-0.875, -1.0, -1.0], [20.125, 20.0, 20.125]])
    g = np.array([[0.25, -2.25, -2.0], [1.5, -0.5, 2.0]])
    w = np.array([0.25, -0.5, -0.375])
    xt = make(x).to(dtype).requires_grad_(True)
    wt = make(w).to(dtype).requires_grad_(True)
    F.layer_norm(xt, (3,), wt, None).backward(make(g).to(dtype))
    mu = x.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    xhat, wg = (x - mu) * rstd, w * g
    exact = rstd * (wg - wg.mean(1, keepdims=True) - xhat * (wg * xhat).mean(1, keepdims=True))
    got = to_numpy(xt.grad.to(ember.float64))
    # One rounding (relative), plus float32's error in terms near 10 times rstd 17 (absolute).
    ulp = 2.0 ** -7 if dtype == ember.bfloat16 else 2.0 ** -10
    np.testing.assert_allclose(got, exact, rtol=ulp, atol=1e-4)
    assert xt.grad.dtype == dtype and wt.grad.dtype == dtype


def test_norm_errors():
    x = ember.randn(2, 6, 3)
    with pytest.raises(ValueError, match=r"^batch_norm: expected more than 1 value per channel"):
        F.batch_norm(ember.randn(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match=r"^batch_norm: expected weight of shape \[6\], got \[5\]"):
        F.batch_norm(x, None, None, ember.ones(5), training=True)
    with pytest.raises(RuntimeError, match=r"^batch_norm: running_mean and running_var must be given"):
        F.batch_norm(x, None, None)
    with pytest.raises(RuntimeError, match=r"^layer_norm: normalized_shape \[4\] does not match"):
        F.layer_norm(x, [4])
    with pytest.raises(RuntimeError, match=r"^layer_norm: expected bias of shape \[3\]"):
        F.layer_norm(x, [3], None, ember.ones(4))
    with pytest.raises(RuntimeError, match=r"^group_norm: expected the number of channels \(6\) to be divisible"):
        F.group_norm(x, 4)
    with pytest.raises(RuntimeError, match=r"^rms_norm: expected a floating point input, got int64"):
        F.rms_norm(ember.tensor([1, 2]), [2])


# ---- embedding

def test_embedding_forward_and_grad():
    w = random_array((5, 3), np.float64)
    idx = np.array([[0, 4, 1], [4, 4, 2]])
    out = F.embedding(make(idx), make(w))
    assert_close(out, w[idx], 0, 0)
    assert F.embedding(make(idx.astype(np.int32)), make(w)).shape == (2, 3, 3)
    weight = make(w, requires_grad=True)
    g = random_array((2, 3, 3), np.float64)
    F.embedding(make(idx), weight, padding_idx=-1).backward(make(g))
    expected = np.zeros((5, 3))
    np.add.at(expected, idx.reshape(-1), g.reshape(-1, 3))
    expected[4] = 0  # padding row
    assert_close(weight.grad, expected, 1e-12, 1e-12)
    weight.grad = None
    F.embedding(make(idx), weight, scale_grad_by_freq=True).backward(make(g))
    counts = np.bincount(idx.reshape(-1), minlength=5)
    scaled = np.zeros((5, 3))
    np.add.at(scaled, idx.reshape(-1), g.reshape(-1, 3) / counts[idx.reshape(-1)][:, None])
    assert_close(weight.grad, scaled, 1e-12, 1e-12)


def test_embedding_gradcheck():
    idx = make([[1, 0], [3, 1]])
    w = make(random_array((4, 2), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda w: F.embedding(idx, w) ** 2, [w])


def test_embedding_errors():
    w = ember.randn(4, 2)
    with pytest.raises(IndexError, match=r"^embedding: index 4 is out of range"):
        F.embedding(ember.tensor([1, 4]), w)
    with pytest.raises(IndexError, match=r"^embedding: index -1 is out of range"):
        F.embedding(ember.tensor([-1]), w)
    with pytest.raises(RuntimeError, match=r"^embedding: expected indices of dtype int64 or int32, got float32"):
        F.embedding(ember.tensor([1.0]), w)
    with pytest.raises(RuntimeError, match=r"^embedding: expected a 2-d weight"):
        F.embedding(ember.tensor([1]), ember.randn(4))
    with pytest.raises(NotImplementedError, match="max_norm"):
        F.embedding(ember.tensor([1]), w, max_norm=1.0)


# ---- dropout

def test_dropout_statistics_and_scaling():
    ember.manual_seed(0)
    x = ember.ones(20000)
    y = F.dropout(x, 0.3).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.015
    assert_close(y[kept], np.full(kept.sum(), 1 / 0.7, np.float32), 1e-6, 1e-6)


def test_dropout_reproducible_under_manual_seed():
    x = ember.randn(50)
    ember.manual_seed(7)
    a = F.dropout(x, 0.5).numpy()
    ember.manual_seed(7)
    b = F.dropout(x, 0.5).numpy()
    c = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)


def test_dropout_backward_uses_the_mask():
    x = make(random_array((30,), np.float64), requires_grad=True)
    y = F.dropout(x, 0.4)
    y.backward(ember.ones(30, dtype=ember.float64, device=x.device))
    mask = (to_numpy(y) != 0) / 0.6
    assert_close(x.grad, mask, 1e-12, 1e-12)


def test_dropout_modes():
    x = ember.randn(6)
    assert F.dropout(x, 0.5, training=False) is x or np.array_equal(F.dropout(x, 0.5, False).numpy(), x.numpy())
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros(6, np.float32))
    np.testing.assert_array_equal(F.dropout(x, 0.0).numpy(), x.numpy())
    y = ember.ones(1000)
    F.dropout(y, 0.5, inplace=True)
    assert (y.numpy() == 0).any() and (y.numpy() == 2).any()
    with pytest.raises(ValueError, match=r"^dropout: dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


def test_dropout2d_zeros_whole_channels():
    ember.manual_seed(3)
    y = F.dropout2d(ember.ones(4, 8, 3, 3), 0.5).numpy()
    per_channel = y.reshape(4, 8, -1)
    assert ((per_channel == 0).all(axis=2) | (per_channel == 2).all(axis=2)).all()
    assert (per_channel == 0).any() and (per_channel == 2).any()
    with pytest.raises(RuntimeError, match=r"^dropout2d: expected an input of at least 2 dims"):
        F.dropout2d(ember.ones(3), 0.5)


def test_fused_paths_gradcheck_partial_arguments():
    x = make(random_array((3, 4, 2), np.float64), requires_grad=True)
    b = make(random_array((4,), np.float64), requires_grad=True)
    w = make(random_array((4,), np.float64), requires_grad=True)
    rm = make(random_array((4,), np.float64))
    rv = make(positive(random_array((4,), np.float64)))
    # eval batch_norm with constant running stats: gx = g * w * rstd
    assert ember.autograd.gradcheck(lambda x, w, b: F.batch_norm(x, rm, rv, w, b), [x, w, b])
    # bias without weight
    assert ember.autograd.gradcheck(lambda x, b: F.batch_norm(x, None, None, None, b, True), [x, b])
    lb = make(random_array((2,), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, b: F.layer_norm(x, (2,), None, b), [x, lb])
    assert ember.autograd.gradcheck(lambda x: F.rms_norm(x, (4, 2)), [x])
    assert F.layer_norm(x, (2,)).grad_fn.name() == "NativeLayerNormBackward0"


def test_rms_norm_double_backward():
    x = make(random_array((3, 5), np.float64), requires_grad=True)
    w = make(random_array((5,), np.float64), requires_grad=True)
    g = make(random_array((3, 5), np.float64))

    def first(x, w):
        (gx,) = ember.autograd.grad([(F.rms_norm(x, (5,), w) * g).sum()], [x], create_graph=True)
        return gx * gx
    assert ember.autograd.gradcheck(first, [x, w])


def test_large_rows_parallel_and_offset_data():
    # Many rows (several threads) and data far from zero (stable variance).
    a = random_array((2048, 33)) + 1000.0
    assert_close(F.layer_norm(make(a), (33,)), np_layer_norm(a, 1), 1e-2, 2e-3)
    b = random_array((64, 8, 6, 6))
    assert_close(F.batch_norm(make(b), None, None, training=True), np_batch_norm_train(b), 1e-4, 1e-4)


def test_half_batch_norm():
    x = ember.tensor(random_array((4, 3, 2)), dtype=ember.bfloat16)
    y = F.batch_norm(x, None, None, training=True)
    assert y.dtype == ember.bfloat16
    assert_close(y.float(), np_batch_norm_train(x.float().numpy()), 3e-2, 3e-2)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_fused_backward_matches_composite(training):
    # backward() runs the fused kernel; create_graph=True runs the op formula.
    a = random_array((4, 3, 5), np.float64)
    g = make(random_array((4, 3, 5), np.float64))
    rm, rv = make(random_array((3,), np.float64)), make(positive(random_array((3,), np.float64)))
    grads = []
    for create_graph in (False, True):
        x = make(a, requires_grad=True)
        w = make(np.array([0.5, 2.0, -1.0]), requires_grad=True)
        b = make(np.array([0.1, 0.2, 0.3]), requires_grad=True)
        y = F.batch_norm(x, rm.clone(), rv.clone(), w, b, training)
        grads.append([to_numpy(t) for t in ember.autograd.grad([(y * g).sum()], [x, w, b],
                                                                      create_graph=create_graph)])
    for fused, composite in zip(*grads):
        assert_close(fused, composite, 1e-10, 1e-12)
