"""The methods of python/ember/_tensor_api_more.py: bit shifts, cauchy_ /
log_normal_ / geometric_, sum_to_size, dim_order, nonzero_static, angle,
isreal / real / imag, `in` and reversed(), apply_ / map_ / map2_, and the
older linalg functions (svd, lu, lu_solve, triangular_solve, matrix_exp):
against numpy (and PyTorch where importable), gradcheck, and errors."""
import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, table_tests, torch

INTS = (np.int64, np.int32)
RNG = np.random.default_rng(9)
SHIFTS = np.array([0, 1, 3, 5, 12])


def np_angle(a):
    return np.where(np.isnan(a), a, np.where(a < 0, np.pi, 0.0)).astype(a.dtype if a.dtype.kind == "f" else np.float32)


CASES = [
    OpCase("lshift", lambda a: a << ember.tensor(SHIFTS, dtype=a.dtype, device=a.device),
           lambda a: np.left_shift(a, SHIFTS.astype(a.dtype)),
           [[(3, 5)], [(5,)]], dtypes=INTS, grad=False, domain=(-100, 100),
           torch_fn=lambda a: a << torch.from_numpy(SHIFTS).to(a.dtype)),
    OpCase("rshift", lambda a: ember.bitwise_right_shift(a, ember.tensor(SHIFTS, dtype=a.dtype, device=a.device)),
           lambda a: np.right_shift(a, SHIFTS.astype(a.dtype)), [[(3, 5)], [(5,)]], dtypes=INTS, grad=False,
           domain=(-5000, 5000), torch_fn=lambda a: torch.bitwise_right_shift(a, torch.from_numpy(SHIFTS).to(a.dtype))),
    OpCase("lshift_scalar", lambda a: a.bitwise_left_shift(2), lambda a: np.left_shift(a, 2), [[(3, 4)], [()]],
           dtypes=(np.int64, np.uint8), grad=False, domain=(0, 60)),
    OpCase("rlshift", lambda a: 3 << a, lambda a: np.left_shift(3, a), [[(4,)]], dtypes=(np.int64,), grad=False,
           domain=(0, 20)),
    OpCase("sum_to_size", lambda a: a.sum_to_size(1, 4), lambda a: a.sum(0, keepdims=True), [[(3, 4)]],
           dtypes=(np.float32, np.float64, np.int64), torch_fn=lambda a: a.sum_to_size(1, 4)),
    OpCase("sum_to_size_lead", lambda a: a.sum_to_size((3, 1)), lambda a: a.sum((0, 2), keepdims=True)[0],
           [[(2, 3, 4)]], rtol=1e-5),
    OpCase("nonzero_static", lambda a: ember.nonzero_static(a, size=5, fill_value=-2),
           lambda a: np.concatenate([np.argwhere(a), np.full((5, a.ndim), -2)])[:5], [[(3, 4)], [(6,)]],
           dtypes=(np.int64, np.bool_), grad=False, domain=(-1, 2)),
    OpCase("angle", lambda a: ember.angle(a), np_angle, [[(3, 4)], [()]], dtypes=(np.float32, np.float64, np.int64),
           grad=False, torch_fn=lambda a: torch.angle(a)),
    OpCase("matrix_exp", lambda a: a.matrix_exp(), lambda a: _np_expm(a), [[(3, 3)], [(2, 2, 2)]],
           dtypes=(np.float64,), domain=(-0.5, 0.5), rtol=1e-9, atol=1e-10, extra={"fuzz": False}),
]


def _np_expm(a):
    """exp(A) by its Taylor series (the tests keep |A| small)."""
    out = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    term = out.copy()
    for k in range(1, 30):
        term = term @ a / k
        out = out + term
    return out


test_forward, test_gradcheck = table_tests(CASES)


def test_shifts_past_the_width_and_in_place():
    a = ember.tensor([1, -8, 5, 2 ** 62, -1])
    assert (a << 1).tolist() == [2, -16, 10, -(2 ** 63), -2]
    assert (a << 63).tolist() == [-(2 ** 63), 0, -(2 ** 63), 0, -(2 ** 63)]
    assert (a << 64).tolist() == [0] * 5 and (a << 70).tolist() == [0] * 5
    assert (a >> 63).tolist() == [0, -1, 0, 0, -1] and (a >> 70).tolist() == [0, -1, 0, 0, -1]
    assert (a >> 62).tolist() == [0, -1, 0, 1, -1]
    u = ember.tensor([1, 200, 5], dtype=ember.uint8)
    assert (u << 3).tolist() == [8, 64, 40] and (u >> 9).tolist() == [0, 0, 0] and (u << 8).tolist() == [0, 0, 0]
    assert (u >> 7).tolist() == [0, 1, 0]
    x = ember.tensor([1, 2])
    ptr = x.data_ptr()
    x <<= 3
    assert x.tolist() == [8, 16] and x.data_ptr() == ptr
    x >>= 1
    assert x.tolist() == [4, 8] and (16 >> ember.tensor([1, 2])).tolist() == [8, 4]
    x.bitwise_left_shift_(ember.tensor([1]))
    assert x.tolist() == [8, 16]
    with pytest.raises(NotImplementedError, match="bitwise_left_shift: not implemented for"):
        ember.ones(2) << 1
    with pytest.raises(NotImplementedError, match="bitwise_right_shift"):
        ember.bitwise_right_shift(ember.tensor([True]), ember.tensor([True]))


def test_random_fills():
    ember.manual_seed(0)
    g = ember.empty(20000, dtype=ember.float64).geometric_(0.25)
    assert g.min().item() >= 1 and abs(g.mean().item() - 4.0) < 0.15 and bool((g == g.round()).all())
    assert ember.empty(5, dtype=ember.int64).geometric_(0.5).dtype == ember.int64
    c = ember.empty(20000).cauchy_(1.0, 2.0)
    assert abs(c.median().item() - 1.0) < 0.1
    q = ember.quantile(c, ember.tensor([0.25, 0.75])).tolist()  # Cauchy quartiles: median -+ sigma
    assert abs(q[0] + 1.0) < 0.15 and abs(q[1] - 3.0) < 0.15
    ln = ember.empty(20000).log_normal_(0.5, 0.25).log()
    assert abs(ln.mean().item() - 0.5) < 0.02 and abs(ln.std().item() - 0.25) < 0.02
    gen = ember.Generator().manual_seed(3)
    first = ember.empty(4).cauchy_(generator=gen)
    gen.manual_seed(3)
    assert first.tolist() == ember.empty(4).cauchy_(generator=gen).tolist()
    with pytest.raises(RuntimeError, match="geometric_: expects p to be in \\(0, 1\\)"):
        ember.empty(3).geometric_(1.5)
    with pytest.raises(RuntimeError, match="log_normal_: expects std > 0.0"):
        ember.empty(3).log_normal_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="cauchy_: a leaf Variable that requires grad"):
        ember.empty(3, requires_grad=True).cauchy_()
    with pytest.raises(RuntimeError, match="cauchy_: expects a floating point tensor"):
        ember.empty(3, dtype=ember.int64).cauchy_()


def test_layout_helpers_and_real_views():
    assert ember.ones(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert ember.ones(2, 3).dim_order() == (0, 1)
    with pytest.raises(RuntimeError, match="sum_to_size: size \\[2, 4\\] is not expandable to size \\[3, 4\\]"):
        ember.ones(3, 4).sum_to_size(2, 4)
    x = ember.randn(2, 2)
    assert x.real is x and ember.real(x) is x and ember.isreal(x).tolist() == [[True, True], [True, True]]
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag
    assert not x.is_sparse and not x.is_quantized and not x.is_meta and not x.is_nested
    assert 2.0 in ember.tensor([1.0, 2.0]) and 3 not in ember.tensor([1.0, 2.0])
    assert ember.tensor([1.0, 2.0]) in ember.tensor([[1.0, 2.0]])
    with pytest.raises(RuntimeError, match="Tensor.__contains__ only supports Tensor or scalar"):
        "a" in ember.ones(2)
    assert [t.item() for t in reversed(ember.tensor([1.0, 2.0, 3.0]))] == [3.0, 2.0, 1.0]
    c = ember.tensor([1.0, 2.0])
    assert c.const_data_ptr() == c.data_ptr()
    assert ember.fill(ember.ones(2), 3.0).tolist() == [3.0, 3.0]
    assert ember.index_fill(ember.zeros(3), 0, ember.tensor([1]), 2.0).tolist() == [0.0, 2.0, 0.0]
    assert ember.is_floating_point(ember.ones(1)) and not ember.is_floating_point(ember.ones(1, dtype=ember.int64))
    assert ember.tensor([1.0, 2.0]).ger(ember.tensor([3.0])).tolist() == [[3.0], [6.0]]


def test_python_callables():
    e = ember.arange(6.0).reshape(2, 3)
    ptr = e.data_ptr()
    assert e.apply_(lambda v: v * v) is e and e.data_ptr() == ptr
    assert e.tolist() == [[0.0, 1.0, 4.0], [9.0, 16.0, 25.0]]
    e.map_(ember.tensor([1.0, 2.0, 3.0]), lambda a, b: a + b)
    assert e.tolist() == [[1.0, 3.0, 7.0], [10.0, 18.0, 28.0]]
    e.map2_(ember.ones(1), ember.full((2, 1), 2.0), lambda a, b, c: a * b * c)
    assert e.tolist() == [[2.0, 6.0, 14.0], [20.0, 36.0, 56.0]]


def test_older_linalg_functions():
    a = RNG.standard_normal((4, 4))
    b = RNG.standard_normal((4, 2))
    u, s, v = make(a[:, :3]).svd()
    assert type(make(a).svd()).__name__ == "svd" and u.shape == (4, 3) and v.shape == (3, 3)
    assert_close(u @ ember.diag(s) @ v.mT, a[:, :3], 1e-10, 1e-10)
    full = ember.svd(make(a[:, :3]), some=False)
    assert full.U.shape == (4, 4)
    assert float(ember.svd(make(a), compute_uv=False).U.abs().sum()) == 0.0
    lu_data, pivots = make(a).lu()
    assert_close(make(b).lu_solve(lu_data, pivots), np.linalg.solve(a, b), 1e-9, 1e-9)
    assert_close(ember.lu_solve(make(b), *ember.lu(make(a))), np.linalg.solve(a, b), 1e-9, 1e-9)
    assert len(ember.lu(make(a), get_infos=True)) == 3
    upper = np.triu(a) + 4 * np.eye(4)
    for is_upper in (True, False):
        for transpose in (True, False):
            m = upper if is_upper else upper.T
            out = ember.triangular_solve(make(b), make(m), is_upper, transpose)
            op = m.T if transpose else m
            assert type(out).__name__ == "triangular_solve"
            assert_close(out.solution, np.linalg.solve(op, b), 1e-9, 1e-9)
            assert_close(out.cloned_coefficient, m)
    x = make(a * 0.1, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda t: make(b).triangular_solve(t.triu() + 2 * ember.eye(4, dtype=t.dtype, device=t.device))[0], [x])


def test_resize():
    x = ember.arange(6.0)
    ptr, version = x.data_ptr(), x._version
    assert x.resize_(2, 2) is x and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert x.data_ptr() == ptr and x._version == version + 1  # shrinking keeps the memory
    x.resize_((3, 3))
    assert x.shape == (3, 3) and x[0].tolist() == [0.0, 1.0, 2.0] and x.is_contiguous()
    t = ember.arange(6.0).reshape(2, 3).t()
    assert t.resize_(3, 2).stride() == (1, 3)  # the same shape changes nothing, as in torch
    t.resize_(4)
    assert t.tolist() == [0.0, 3.0, 1.0, 4.0]  # non-contiguous: the first elements in row-major order
    z = ember.ones(2, 3)
    assert ember.resize_as_(z, ember.ones(6)) is z and z.shape == (6,)
    z.resize_as_(ember.ones(1, 2))
    assert z.shape == (1, 2)
    with pytest.raises(RuntimeError, match="resize_: cannot resize variables that require grad"):
        ember.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match="resize_: Trying to create tensor with negative dimension"):
        ember.ones(2).resize_(-1)
    if torch is not None:
        a, b = ember.arange(6.0), torch.arange(6.0)
        a.resize_(2, 2)
        b.resize_(2, 2)
        assert a.tolist() == b.tolist()
