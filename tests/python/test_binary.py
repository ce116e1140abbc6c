"""Binary elementwise ops: forward against numpy, broadcasting, layouts,
promotion, gradcheck and errors."""
import numpy as np
import pytest

import ember
from harness import OpCase, check_forward, check_grad, make, parametrize_cases, random_array, assert_close

BROADCAST_SHAPES = [[(3, 4), (3, 4)], [(3, 4), (4,)], [(2, 1, 4), (3, 1)], [(), (2, 3)], [(5,), ()]]

CASES = [
    OpCase("add", lambda a, b: a + b, np.add, BROADCAST_SHAPES, dtypes=(np.float32, np.float64, np.int64)),
    OpCase("sub", lambda a, b: a - b, np.subtract, BROADCAST_SHAPES, dtypes=(np.float32, np.int64)),
    OpCase("mul", lambda a, b: a * b, np.multiply, BROADCAST_SHAPES, dtypes=(np.float32, np.int32)),
    OpCase("div", lambda a, b: a / b, np.divide, BROADCAST_SHAPES, domain=(0.5, 2.0)),
    OpCase("add_alpha", lambda a, b: ember.add(a, b, alpha=2.5), lambda a, b: a + 2.5 * b, BROADCAST_SHAPES),
    OpCase("sub_alpha", lambda a, b: ember.sub(a, b, alpha=0.5), lambda a, b: a - 0.5 * b, BROADCAST_SHAPES),
]


@parametrize_cases(CASES)
def test_forward(case):
    for shapes in case.shapes:
        for dtype in case.dtypes:
            check_forward(case, shapes, dtype)


@parametrize_cases([c for c in CASES if c.grad])
def test_gradcheck(case):
    for shapes in case.shapes:
        check_grad(case, shapes)


@parametrize_cases(CASES)
def test_noncontiguous(case):
    a = random_array((3, 4), domain=case.domain)
    b = random_array((3, 4), domain=case.domain)
    ta = make(a.T.copy()).t()  # stored transposed
    assert not ta.is_contiguous()
    row = random_array((1, 4), domain=case.domain)
    tb = make(row).expand(3, 4)  # stride-0 rows
    assert_close(case.ember_fn(ta, tb), case.numpy_fn(a, np.broadcast_to(row, (3, 4))), case.rtol, case.atol)
    assert_close(case.ember_fn(tb, ta), case.numpy_fn(np.broadcast_to(row, (3, 4)), a), case.rtol, case.atol)


def test_scalar_promotion():
    x = ember.tensor([1, 2, 3])
    assert (x + 1).dtype == ember.int64
    assert (x + 1.5).dtype == ember.float32
    assert (x * True).dtype == ember.int64
    f = ember.tensor([1.0, 2.0])
    assert (f + 2).dtype == ember.float32
    assert (f + ember.tensor(2.0, dtype=ember.float64)).dtype == ember.float32  # 0-d tensor does not promote
    assert (f + ember.tensor([2.0], dtype=ember.float64)).dtype == ember.float64
    assert (x / 2).dtype == ember.float32
    assert (2 - f).tolist() == [1.0, 0.0]
    assert (1 / f).tolist() == [1.0, 0.5]


def test_inplace_and_version():
    x = ember.zeros(3)
    v = x._version if hasattr(x, "_version") else None
    x += 1
    x.mul_(3)
    assert x.tolist() == [3.0, 3.0, 3.0]
    if v is not None:
        assert x._version == v + 2


def test_inplace_on_leaf_requiring_grad_raises():
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.add_(1)
    with ember.no_grad():
        w.add_(1)
    assert w.tolist() == [2.0, 2.0, 2.0]


def test_broadcast_error_names_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"add: shapes \[2, 3\] and \[4\]"):
        ember.ones(2, 3) + ember.ones(4)


def test_wrong_argument_type():
    with pytest.raises(TypeError, match="add"):
        ember.ones(2) + "a"
