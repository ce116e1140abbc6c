"""Reduction, pointwise and product composites against numpy (and torch when
importable): count_nonzero, var_mean/std_mean, aminmax, numel, addcmul/addcdiv
(and in place), logit, cross/linalg.cross, logspace, baddbmm/addbmm,
addmv/addr (and in place), inner, vdot, tensordot, kron, cdist; finfo/iinfo; gradcheck and errors."""
import math

import numpy as np
import pytest

import ember
from harness import INT_MATMUL_CPU_ONLY, OpCase, assert_close, make, random_array, table_tests, torch

FLOATS = (np.float32, np.float64)


def np_cdist(a, b, p):
    diff = a[..., :, None, :] - b[..., None, :, :]
    if p == 0:
        return (diff != 0).sum(-1).astype(a.dtype)
    if math.isinf(p):
        return np.abs(diff).max(-1)
    return (np.abs(diff) ** p).sum(-1) ** (1.0 / p)


def np_logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


CASES = [
    OpCase("count_nonzero", lambda a: ember.count_nonzero(a), lambda a: np.count_nonzero(a), [[(3, 4)], [()], [(0,)]],
           dtypes=(np.float32, np.int64, np.bool_), grad=False),
    OpCase("count_nonzero_dims", lambda a: a.count_nonzero(dim=(0, 2)), lambda a: np.count_nonzero(a, axis=(0, 2)),
           [[(2, 3, 4)]], dtypes=(np.float32, np.int32), grad=False, domain=(-1, 2)),
    OpCase("var_mean", lambda a: ember.stack(ember.var_mean(a, 1)),
           lambda a: np.stack([np.var(a, 1, ddof=1), np.mean(a, 1)]), [[(3, 4)], [(2, 5, 2)]], rtol=1e-4),
    OpCase("var_mean_correction0_keepdim", lambda a: ember.cat(ember.var_mean(a, dim=(0, 1), keepdim=True, correction=0)),
           lambda a: np.concatenate([np.var(a, (0, 1), keepdims=True), np.mean(a, (0, 1), keepdims=True)]),
           [[(3, 4, 2)]], rtol=1e-4),
    OpCase("std_mean", lambda a: ember.stack(ember.std_mean(a)), lambda a: np.stack([np.std(a, ddof=1), np.mean(a)]),
           [[(3, 4)], [(5,)]], rtol=1e-4),
    OpCase("std_mean_unbiased_false", lambda a: ember.stack(ember.std_mean(a, 0, False)),
           lambda a: np.stack([np.std(a, 0), np.mean(a, 0)]), [[(4, 3)]], rtol=1e-4),
    OpCase("aminmax", lambda a: ember.stack(ember.aminmax(a)), lambda a: np.stack([a.min(), a.max()]),
           [[(3, 4)], [()], [(5,)]], dtypes=(np.float32, np.float64, np.int64)),
    OpCase("aminmax_dim", lambda a: ember.stack(a.aminmax(dim=1, keepdim=True)),
           lambda a: np.stack([a.min(1, keepdims=True), a.max(1, keepdims=True)]), [[(3, 4)], [(2, 3, 2)]]),
    OpCase("addcmul", lambda x, a, b: ember.addcmul(x, a, b, value=0.5), lambda x, a, b: x + 0.5 * a * b,
           [[(2, 3), (2, 3), (2, 3)], [(3,), (2, 1), (3,)], [(), (2,), (1,)]],
           torch_fn=lambda x, a, b: torch.addcmul(x, a, b, value=0.5)),
    OpCase("addcmul_int", lambda x, a, b: ember.addcmul(x, a, b, value=2), lambda x, a, b: x + 2 * a * b,
           [[(2, 3), (2, 3), (3,)]], dtypes=(np.int64, np.int32), grad=False),
    OpCase("addcmul_method", lambda x, a, b: x.addcmul(a, b), lambda x, a, b: x + a * b, [[(2, 3), (3,), (2, 1)]]),
    OpCase("addcdiv", lambda x, a, b: ember.addcdiv(x, a, b, value=-2), lambda x, a, b: x - 2 * a / b,
           [[(2, 3), (2, 3), (2, 3)], [(3,), (2, 1), (3,)]], domain=(0.5, 2.0),
           torch_fn=lambda x, a, b: torch.addcdiv(x, a, b, value=-2)),
    OpCase("logit", lambda x: ember.logit(x), np_logit, [[(3, 4)], [()], [(0,)]], domain=(0.05, 0.95),
           torch_fn=lambda x: torch.logit(x)),
    OpCase("logit_eps", lambda x: x.logit(eps=0.2), lambda x: np_logit(x, 0.2), [[(3, 4)]], domain=(0.01, 0.99),
           rtol=1e-4, extra={"fuzz": False}),
    OpCase("cross", lambda a, b: ember.cross(a, b, dim=1), lambda a, b: np.cross(a, b, axis=1),
           [[(2, 3), (2, 3)], [(2, 3, 4), (1, 3, 4)]], dtypes=FLOATS + (np.int64,), rtol=1e-4),
    OpCase("cross_default_dim", lambda a, b: a.cross(b), lambda a, b: np.cross(a, b, axis=1), [[(4, 3, 2), (4, 3, 2)]],
           rtol=1e-4),
    OpCase("linalg_cross", lambda a, b: ember.linalg.cross(a, b), lambda a, b: np.cross(a, b), [[(4, 3), (1, 3)]],
           rtol=1e-4, torch_fn=lambda a, b: torch.linalg.cross(a, b)),
    OpCase("baddbmm", lambda x, a, b: ember.baddbmm(x, a, b, beta=0.5, alpha=2),
           lambda x, a, b: 0.5 * x + 2 * (a @ b), [[(2, 3, 4), (2, 3, 5), (2, 5, 4)], [(4,), (2, 3, 5), (2, 5, 4)],
                                                   [(1, 1), (1, 2, 0), (1, 0, 3)]],
           rtol=1e-4, atol=1e-5, torch_fn=lambda x, a, b: torch.baddbmm(x, a, b, beta=0.5, alpha=2)),
    OpCase("baddbmm_method", lambda x, a, b: x.baddbmm(a, b), lambda x, a, b: x + a @ b,
           [[(2, 3, 4), (2, 3, 5), (2, 5, 4)]], rtol=1e-4, atol=1e-5),
    OpCase("addbmm", lambda x, a, b: ember.addbmm(x, a, b, alpha=-1), lambda x, a, b: x - (a @ b).sum(0),
           [[(3, 4), (2, 3, 5), (2, 5, 4)], [(4,), (3, 3, 2), (3, 2, 4)], [(2, 2), (0, 2, 3), (0, 3, 2)]],
           rtol=1e-4, atol=1e-5, torch_fn=lambda x, a, b: torch.addbmm(x, a, b, alpha=-1)),
    OpCase("addmv", lambda x, m, v: ember.addmv(x, m, v, beta=2, alpha=-0.5), lambda x, m, v: 2 * x - 0.5 * (m @ v),
           [[(3,), (3, 4), (4,)], [(1,), (2, 3), (3,)], [(), (2, 3), (3,)], [(2,), (2, 0), (0,)]], rtol=1e-4, atol=1e-5,
           torch_fn=lambda x, m, v: torch.addmv(x, m, v, beta=2, alpha=-0.5)),
    OpCase("addr", lambda x, a, b: x.addr(a, b, alpha=3), lambda x, a, b: x + 3 * np.outer(a, b),
           [[(2, 3), (2,), (3,)], [(3,), (2,), (3,)]], rtol=1e-4, atol=1e-5,
           torch_fn=lambda x, a, b: torch.addr(x, a, b, alpha=3)),
    OpCase("inner", lambda a, b: ember.inner(a, b), lambda a, b: np.inner(a, b),
           [[(2, 3), (4, 3)], [(3,), (3,)], [(), (2, 3)], [(2, 1, 4), (3, 4)]], dtypes=FLOATS + (np.int64,),
           rtol=1e-4, atol=1e-5, torch_fn=lambda a, b: torch.inner(a, b), extra=INT_MATMUL_CPU_ONLY),
    OpCase("vdot", lambda a, b: a.vdot(b), lambda a, b: np.vdot(a, b), [[(4,), (4,)], [(0,), (0,)]], rtol=1e-4,
           atol=1e-5),
    OpCase("tensordot", lambda a, b: ember.tensordot(a, b), lambda a, b: np.tensordot(a, b),
           [[(3, 4, 5), (4, 5, 2)], [(2, 3), (2, 3)]], rtol=1e-4, atol=1e-5, torch_fn=lambda a, b: torch.tensordot(a, b)),
    OpCase("tensordot_lists", lambda a, b: ember.tensordot(a, b, dims=([2, 0], [0, 1])),
           lambda a, b: np.tensordot(a, b, axes=([2, 0], [0, 1])), [[(3, 4, 5), (5, 3, 2)]], rtol=1e-4, atol=1e-5),
    OpCase("tensordot_outer", lambda a, b: ember.tensordot(a, b, dims=0), lambda a, b: np.tensordot(a, b, axes=0),
           [[(2, 3), (4,)]], dtypes=FLOATS + (np.int64,), extra=INT_MATMUL_CPU_ONLY),
    OpCase("kron", lambda a, b: ember.kron(a, b), lambda a, b: np.kron(a, b),
           [[(2, 3), (4,)], [(2, 2), (3, 1)], [(), ()], [(2, 1, 2), (2, 3)]], dtypes=FLOATS + (np.int64,),
           torch_fn=lambda a, b: torch.kron(a, b)),
    OpCase("cdist", lambda a, b: ember.cdist(a, b), lambda a, b: np_cdist(a, b, 2), [[(3, 2), (4, 2)], [(2, 3, 4), (5, 4)]],
           rtol=1e-4, atol=1e-5, torch_fn=lambda a, b: torch.cdist(a, b)),
    OpCase("cdist_mm", lambda a, b: ember.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
           lambda a, b: np_cdist(a, b, 2), [[(3, 2), (4, 2)], [(2, 30, 3), (1, 27, 3)]], rtol=1e-3, atol=1e-4),
    OpCase("cdist_p1", lambda a, b: ember.cdist(a, b, p=1), lambda a, b: np_cdist(a, b, 1), [[(3, 2), (4, 2)]],
           rtol=1e-4, atol=1e-5, torch_fn=lambda a, b: torch.cdist(a, b, p=1)),
    OpCase("cdist_p3", lambda a, b: ember.cdist(a, b, p=3.0), lambda a, b: np_cdist(a, b, 3), [[(2, 3, 2), (2, 4, 2)]],
           rtol=1e-4, atol=1e-5),
    OpCase("cdist_inf", lambda a, b: ember.cdist(a, b, p=float("inf")), lambda a, b: np_cdist(a, b, math.inf),
           [[(3, 2), (4, 2)]], rtol=1e-4, atol=1e-5),
    OpCase("cdist_p0", lambda a, b: ember.cdist(a, b, p=0), lambda a, b: np_cdist(a, b, 0), [[(3, 2), (4, 2)]],
           grad=False),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_count_nonzero_is_int64():
    out = ember.count_nonzero(ember.tensor([[0.0, 1.0], [2.0, 0.0]]), dim=0)
    assert out.dtype == ember.int64 and out.tolist() == [1, 1]


def test_numel():
    assert ember.numel(ember.ones(2, 3)) == 6
    assert ember.numel(ember.tensor(1.0)) == 1


def test_var_mean_returns_a_plain_tuple():
    out = ember.var_mean(ember.ones(3, 4), 1)
    assert type(out) is tuple and len(out) == 2


def test_aminmax_named_tuple_and_bool():
    out = ember.aminmax(ember.tensor([[1.0, -2.0], [3.0, 0.5]]), dim=0)
    assert type(out).__name__ == "aminmax" and out.min.tolist() == [1.0, -2.0] and out.max.tolist() == [3.0, 0.5]
    assert ember.aminmax(ember.tensor([True, False])).max.item() is True
    keep = ember.aminmax(ember.ones(2, 3), keepdim=True)
    assert tuple(keep.min.shape) == (1, 1)
    empty = ember.aminmax(ember.ones(0, 4), dim=1)
    assert tuple(empty.min.shape) == (0,)


@pytest.mark.parametrize("name", ["addcmul_", "addcdiv_"])
def test_inplace_addc(name):
    x = random_array((2, 3))
    a, b = random_array((3,), domain=(0.5, 2)), random_array((2, 1), domain=(0.5, 2))
    t = make(x)
    out = getattr(t, name)(make(a), make(b), value=3)
    expected = x + 3 * (a * b if name == "addcmul_" else a / b)
    assert_close(t, expected, 1e-5, 1e-6)
    assert_close(out, expected, 1e-5, 1e-6)
    with pytest.raises(RuntimeError, match=name):
        getattr(make(random_array((3,))), name)(make(random_array((3, 1))), make(random_array((3,))))


def test_inplace_vector_products():
    x, m, v = random_array((3,)), random_array((3, 4)), random_array((4,))
    t = make(x)
    t.addmv_(make(m), make(v), beta=0.5)
    assert_close(t, 0.5 * x + m @ v, 1e-4, 1e-5)
    y, a, b = random_array((2, 3)), random_array((2,)), random_array((3,))
    u = make(y)
    u.addr_(make(a), make(b), alpha=2)
    assert_close(u, y + 2 * np.outer(a, b), 1e-5, 1e-6)
    with pytest.raises(RuntimeError, match="addmv_: output with shape"):
        make(random_array((1,))).addmv_(make(m), make(v))
    x64 = make(random_array((3,), np.float64), requires_grad=True)
    m64 = make(random_array((3, 4), np.float64), requires_grad=True)
    v64 = make(random_array((4,), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, m, v: (x * 1).addmv_(m, v, beta=2), [x64, m64, v64])


@pytest.mark.parametrize("name", ["baddbmm_", "addbmm_"])
def test_inplace_batched_products(name):
    x = random_array((3, 4)) if name == "addbmm_" else random_array((2, 3, 4))
    a, b = random_array((2, 3, 5)), random_array((2, 5, 4))
    t = make(x)
    out = getattr(t, name)(make(a), make(b), beta=0.5, alpha=2)
    product = a @ b if name == "baddbmm_" else (a @ b).sum(0)
    assert_close(t, 0.5 * x + 2 * product, 1e-4, 1e-5)
    assert_close(out, t)
    with pytest.raises(RuntimeError, match=name + ": output with shape"):
        getattr(make(random_array((4,))), name)(make(a), make(b))
    leaf = make(x, requires_grad=True)
    with pytest.raises(RuntimeError, match=name):
        getattr(leaf, name)(make(a), make(b))


def test_inplace_products_and_logit_gradients():
    x = make(random_array((2, 3, 4), np.float64), requires_grad=True)
    a = make(random_array((2, 3, 5), np.float64), requires_grad=True)
    b = make(random_array((2, 5, 4), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, a, b: (x * 1).baddbmm_(a, b, beta=0.5, alpha=2), [x, a, b])
    y = make(random_array((3, 4), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda y, a, b: (y * 1).addbmm_(a, b, alpha=-1), [y, a, b])
    p = make(random_array((3, 4), np.float64, domain=(0.1, 0.9)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda p: (p * 1).logit_(), [p])


def test_logit_inplace():
    x = random_array((3, 4), domain=(0.05, 0.95))
    t = make(x)
    t.logit_(eps=0.1)
    assert_close(t, np_logit(x, 0.1), 1e-5, 1e-5)
    with pytest.raises(RuntimeError, match="logit_: result type float32 can't be cast to the desired output type int64"):
        ember.ones(2, dtype=ember.int64).logit_()


def test_inplace_addcmul_gradient():
    x = make(random_array((2, 3), np.float64), requires_grad=True)
    a = make(random_array((2, 3), np.float64), requires_grad=True)
    b = make(random_array((3,), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, a, b: (x * 1).addcmul_(a, b, value=0.5), [x, a, b])


def test_integer_results_truncate_value_first_like_torch():
    ones, threes = ember.ones(2, dtype=ember.int64), ember.full((2,), 3, dtype=ember.int64)
    assert ember.addcmul(ones, threes, ones, value=2.5).tolist() == [7, 7]  # 1 + 2 * 3
    out = ember.baddbmm(ember.ones(1, 1, 1, dtype=ember.int64), threes.reshape(1, 1, 2), ones.reshape(1, 2, 1),
                        alpha=2.5)
    assert out.dtype == ember.int64 and out.item() == 13  # 1 + 2 * 6


def test_logit_clamps_with_eps_and_converts_integers():
    x = ember.tensor([0.2, 0.0, 1.0])
    assert_close(ember.logit(x), np.array([np.log(0.25), -np.inf, np.inf], np.float32))
    assert_close(ember.logit(x, eps=1e-6), np_logit(np.array([0.2, 0.0, 1.0], np.float32), 1e-6), 1e-4)
    assert ember.logit(ember.tensor([0, 1])).dtype == ember.float32
    # Outside [eps, 1 - eps] the gradient is 0, as torch's.
    y = ember.tensor([0.01, 0.5, 0.995], dtype=ember.float64, requires_grad=True)
    ember.logit(y, eps=0.05).sum().backward()
    assert_close(y.grad, np.array([0.0, 4.0, 0.0]), 1e-9, 1e-9)


def test_logspace():
    assert_close(ember.logspace(0, 3, 4), np.logspace(0, 3, 4).astype(np.float32))
    assert ember.logspace(0, 3, 4, base=2, dtype=ember.int64).tolist() == [1, 2, 4, 8]
    assert ember.logspace(0, 3, 4, 2).tolist() == [1.0, 2.0, 4.0, 8.0]
    assert_close(ember.logspace(-1, 1, 5, dtype=ember.float64), np.logspace(-1, 1, 5), 1e-12, 0)
    assert tuple(ember.logspace(0, 3, 0).shape) == (0,)
    assert ember.logspace(1, 3, 1).tolist() == [10.0]
    assert ember.logspace(0, 1, 2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="logspace: number of steps must be non-negative"):
        ember.logspace(0, 3, -1)
    if torch is not None:
        assert_close(ember.logspace(-2, 2, 7, base=3.0), torch.logspace(-2, 2, 7, base=3.0).numpy(), 1e-6, 1e-6)


def test_baddbmm_beta_zero_ignores_nan_input():
    nan = ember.full((2, 3, 4), float("nan"))
    out = ember.baddbmm(nan, ember.ones(2, 3, 5), ember.ones(2, 5, 4), beta=0)
    assert_close(out, np.full((2, 3, 4), 5.0, np.float32))


def test_baddbmm_integer_inputs_stay_integer():
    out = ember.baddbmm(ember.ones(2, 3, 4, dtype=ember.int64), ember.ones(2, 3, 5, dtype=ember.int64),
                        ember.ones(2, 5, 4, dtype=ember.int64), beta=0.5)
    assert out.dtype == ember.int64 and out[0, 0, 0].item() == 5


def test_tensordot_with_a_tensor_of_dims():
    a, b = random_array((3, 4, 5)), random_array((4, 5, 6))
    out = ember.tensordot(make(a), make(b), dims=ember.tensor([[1], [0]]))
    assert_close(out, np.tensordot(a, b, axes=([1], [0])), 1e-4, 1e-5)
    assert_close(ember.tensordot(make(a), make(b), dims=ember.tensor(2)), np.tensordot(a, b), 1e-4, 1e-5)


def test_cdist_modes_agree_and_zero_distance_gradient_is_finite():
    a, b = random_array((30, 3), np.float64), random_array((4, 3), np.float64)
    mm = ember.cdist(make(a), make(b))  # P > 25: the matmul expansion
    exact = ember.cdist(make(a), make(b), compute_mode="donot_use_mm_for_euclid_dist")
    assert_close(mm, exact, 1e-9, 1e-9)
    assert_close(exact, np_cdist(a, b, 2), 1e-12, 1e-12)
    for mode in ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]:
        x = ember.tensor([[1.0, 2.0], [0.0, 0.0]], dtype=ember.float64, requires_grad=True)
        ember.cdist(x, x.detach(), compute_mode=mode).sum().backward()
        assert np.isfinite(x.grad.numpy()).all(), mode


def test_cdist_gradcheck_through_matmul_path():
    a = make(random_array((27, 2), np.float64), requires_grad=True)
    b = make(random_array((3, 2), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: ember.cdist(a, b), [a, b])


def test_non_contiguous_inputs():
    a, b = random_array((3, 4)), random_array((4, 3))
    ta = make(np.ascontiguousarray(a.T)).t()
    tb = make(np.repeat(b, 2, axis=1))[:, ::2]
    assert not ta.is_contiguous() and not tb.is_contiguous()
    assert_close(ember.tensordot(ta, tb, dims=1), a @ b, 1e-5, 1e-5)
    assert_close(ember.kron(ta, tb), np.kron(a, b), 1e-5, 1e-6)
    assert_close(ember.cdist(ta, tb.t()), np_cdist(a, b.T, 2), 1e-4, 1e-5)
    assert_close(ember.cross(tb, tb.flip(1) * 2, dim=1), np.cross(b, b[:, ::-1] * 2, axis=1), 1e-5, 1e-5)
    assert_close(ember.addcmul(ta, ta, ta), a + a * a, 1e-5, 1e-6)
    assert_close(ember.stack(ember.aminmax(ta, dim=0)), np.stack([a.min(0), a.max(0)]))


def test_finfo_matches_torch_values():
    f32 = ember.finfo(ember.float32)
    assert (f32.bits, f32.eps, f32.max, f32.min) == (32, 2.0 ** -23, float(np.finfo(np.float32).max),
                                                     -float(np.finfo(np.float32).max))
    assert f32.tiny == f32.smallest_normal == 2.0 ** -126 and f32.resolution == 1e-06 and f32.dtype == "float32"
    assert ember.finfo() == ember.finfo(ember.get_default_dtype())
    bf = ember.finfo(ember.bfloat16)
    assert (bf.bits, bf.eps, bf.max, bf.tiny, bf.resolution) == (16, 0.0078125, 3.3895313892515355e+38,
                                                                   1.1754943508222875e-38, 0.01)
    half = ember.finfo(ember.float16)
    assert (half.eps, half.max, half.tiny, half.resolution) == (0.0009765625, 65504.0, 6.103515625e-05, 0.001)
    assert "dtype=float64" in repr(ember.finfo(ember.float64))
    if torch is not None:
        for name in ["float32", "float64", "float16", "bfloat16"]:
            ours, theirs = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
            for field in ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]:
                assert getattr(ours, field) == getattr(theirs, field), (name, field)
            assert repr(ours) == repr(theirs)


def test_iinfo_matches_torch_values():
    i8 = ember.iinfo(ember.int8)
    assert (i8.bits, i8.min, i8.max, i8.dtype) == (8, -128, 127, "int8")
    assert ember.iinfo(ember.int64).max == 2 ** 63 - 1 and ember.iinfo(ember.uint8).min == 0
    assert ember.iinfo(ember.int32) == ember.iinfo(ember.int32)
    if torch is not None:
        for name in ["int8", "uint8", "int32", "int64"]:
            ours, theirs = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
            assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max, theirs.dtype)
            assert repr(ours) == repr(theirs)
    with pytest.raises(TypeError, match="finfo"):
        ember.finfo(ember.int32)
    with pytest.raises(TypeError, match="iinfo"):
        ember.iinfo(ember.float32)
    with pytest.raises(TypeError, match="iinfo"):
        ember.iinfo(ember.bool)
    with pytest.raises(TypeError, match="finfo"):
        ember.finfo("float32")


ERRORS = [
    (lambda: ember.count_nonzero(ember.ones(2, 2), dim=(0, 0)), RuntimeError, "count_nonzero: dim 0 appears multiple"),
    (lambda: ember.count_nonzero(ember.ones(2, 2), dim=2), IndexError, "count_nonzero"),
    (lambda: ember.var_mean(ember.ones(2, 2), dim=3), IndexError, "var_mean"),
    (lambda: ember.std_mean(ember.ones(2, 2), unbiased=True, correction=0), TypeError, "std_mean"),
    (lambda: ember.aminmax(ember.ones(0, 4)), RuntimeError, "aminmax: cannot compute aminmax of an empty tensor"),
    (lambda: ember.aminmax(ember.ones(0, 4), dim=0), RuntimeError, "aminmax: cannot compute aminmax over an empty"),
    (lambda: ember.aminmax(ember.ones(3, 4), 1), TypeError, "aminmax"),
    (lambda: ember.addcdiv(ember.ones(2), ember.ones(2, dtype=ember.int64), ember.ones(2, dtype=ember.int64)),
     RuntimeError, "addcdiv: integer division with addcdiv is no longer supported"),
    (lambda: ember.addcmul(ember.ones(2), ember.ones(3), ember.ones(2)), RuntimeError, r"addcmul: .*\[3\]"),
    (lambda: ember.addcmul(ember.ones(2), ember.ones(2), ember.ones(2), 2), TypeError, "addcmul"),
    (lambda: ember.cross(ember.ones(4, 3), ember.ones(4, 3), dim=0), RuntimeError,
     "linalg.cross: inputs dimension 0 must have length 3. Got 4 and 4"),
    (lambda: ember.cross(ember.ones(4, 4), ember.ones(4, 4)), RuntimeError, "cross: no dimension of size 3"),
    (lambda: ember.linalg.cross(ember.ones(4, 3), ember.ones(3)), RuntimeError,
     "linalg.cross: inputs must have the same number of dimensions"),
    (lambda: ember.linalg.cross(ember.ones(4, 3), ember.ones(4, 3, dtype=ember.float64)), RuntimeError,
     "linalg.cross: .*same dtype"),
    (lambda: ember.linalg.cross(ember.ones(4, 3), ember.ones(4, 3), dim=5), IndexError, "linalg.cross"),
    (lambda: ember.linalg.cross(ember.ones(4, 3), ember.ones(4, 3), 1), TypeError, "cross"),
    (lambda: ember.baddbmm(ember.ones(2, 4), ember.ones(2, 3, 5), ember.ones(2, 5, 4)), RuntimeError,
     r"baddbmm: input of shape \[2, 4\] cannot be broadcast"),
    (lambda: ember.baddbmm(ember.ones(2, 3, 4), ember.ones(3, 5), ember.ones(2, 5, 4)), RuntimeError,
     "baddbmm: batch1 and batch2 must be 3-D"),
    (lambda: ember.baddbmm(ember.ones(2, 3, 4), ember.ones(2, 3, 5), ember.ones(2, 6, 4)), RuntimeError,
     r"baddbmm: expected batch2 to have size \[2, 5, \*\]"),
    (lambda: ember.addbmm(ember.ones(2, 3, 4), ember.ones(2, 3, 5), ember.ones(2, 5, 4)), RuntimeError,
     "addbmm: input of shape"),
    (lambda: ember.addmv(ember.ones(2), ember.ones(2, 3), ember.ones(4)), RuntimeError,
     r"addmv: size mismatch, got input \(\[2\]\), mat \(\[2, 3\]\), vec \(\[4\]\)"),
    (lambda: ember.addmv(ember.ones(3), ember.ones(2, 3), ember.ones(3)), RuntimeError, "addmv: input of shape"),
    (lambda: ember.addr(ember.ones(2, 3), ember.ones(2, 1), ember.ones(3)), RuntimeError,
     "addr: expected 1-D argument vec1, but got 2-D"),
    (lambda: ember.inner(ember.ones(2, 3), ember.ones(4, 2)), RuntimeError, "inner: the last dimension must match"),
    (lambda: ember.vdot(ember.ones(3, 1), ember.ones(3)), RuntimeError, "vdot: 1D tensors expected, but got 2D and 1D"),
    (lambda: ember.vdot(ember.ones(3), ember.ones(4)), RuntimeError, "vdot: "),
    (lambda: ember.tensordot(ember.ones(3, 4, 5), ember.ones(4, 5, 6), dims=1), RuntimeError,
     "tensordot: contracted dimensions need to match, but first has size 5"),
    (lambda: ember.tensordot(ember.ones(3, 4), ember.ones(4, 5), dims=-1), RuntimeError, "tensordot: expects dims >= 0"),
    (lambda: ember.tensordot(ember.ones(3, 4), ember.ones(4, 5), dims=3), RuntimeError, "tensordot: expects dims <="),
    (lambda: ember.tensordot(ember.ones(3, 4), ember.ones(4, 5), dims=([1], [0, 1])), RuntimeError,
     "tensordot: both dimension lists should have same length"),
    (lambda: ember.tensordot(ember.ones(3, 4), ember.ones(4, 5, dtype=ember.float64), dims=1), RuntimeError,
     "tensordot: both inputs should have same dtype"),
    (lambda: ember.cdist(ember.ones(3), ember.ones(4)), RuntimeError, "cdist: only supports at least 2D"),
    (lambda: ember.cdist(ember.ones(3, 2), ember.ones(4, 3)), RuntimeError, "cdist: X1 and X2 must have the same number"),
    (lambda: ember.cdist(ember.ones(3, 2), ember.ones(4, 2), p=-1), RuntimeError, "cdist: only supports non-negative p"),
    (lambda: ember.cdist(ember.ones(3, 2, dtype=ember.int64), ember.ones(4, 2, dtype=ember.int64)), RuntimeError,
     "cdist: only supports floating-point dtypes"),
    (lambda: ember.cdist(ember.ones(3, 2), ember.ones(4, 2, dtype=ember.float64)), RuntimeError, "cdist: .*same dtype"),
    (lambda: ember.cdist(ember.ones(3, 2), ember.ones(4, 2), compute_mode="x"), ValueError,
     "cdist: x is not a valid value for compute_mode"),
    (lambda: ember.cdist(ember.ones(5, 3, 2), ember.ones(2, 4, 2)), RuntimeError, "cdist: "),
]


@pytest.mark.parametrize("fn,exc,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def test_review_logit_gradient_matches_torch_outside_and_at_the_ends():
    x = ember.tensor([-0.5, 0.0, 1.0, 1.5, 0.3], dtype=ember.float64, requires_grad=True)
    ember.logit(x).sum().backward()
    g = x.grad.numpy()
    assert np.isnan(g[0]) and np.isnan(g[3]) and np.isinf(g[1]) and np.isinf(g[2])
    np.testing.assert_allclose(g[4], 1 / (0.3 * 0.7))
    y = ember.tensor([-0.5, 0.05, 0.5], dtype=ember.float64, requires_grad=True)
    ember.logit(y, 0.1).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [0.0, 0.0, 4.0])
