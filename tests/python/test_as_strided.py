"""as_strided and as_strided_scatter: against numpy's stride tricks (always) and torch (when importable),
gradcheck (overlapping reads add up), views that share memory, and the bounds check."""
import numpy as np
import pytest

import ember
from harness import OpCase, table_tests, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")


def np_as_strided(a, size, stride, offset=0):
    flat = np.ascontiguousarray(a).reshape(-1)[offset:]
    return np.lib.stride_tricks.as_strided(flat, size, [s * flat.itemsize for s in stride]).copy()


CASES = [
    OpCase("as_strided_windows", lambda x: x.as_strided((4, 3), (2, 1)), lambda a: np_as_strided(a, (4, 3), (2, 1)),
           [[(12,)]], dtypes=(np.float32, np.float64, np.int64), torch_fn=lambda t: t.as_strided((4, 3), (2, 1))),
    OpCase("as_strided_offset_transpose", lambda x: ember.as_strided(x, (3, 2), (1, 4), 1),
           lambda a: np_as_strided(a, (3, 2), (1, 4), 1), [[(3, 4)]], extra={"fuzz": False}),
    OpCase("as_strided_broadcast", lambda x: x.as_strided((2, 3, 2), (0, 2, 1)),
           lambda a: np_as_strided(a, (2, 3, 2), (0, 2, 1)), [[(6,)]], extra={"fuzz": False}),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_shares_memory_and_writes_through():
    base = ember.zeros(10)
    view = base.as_strided((3, 2), (3, 1), 1)
    view.fill_(1.0)
    np.testing.assert_array_equal(base.numpy(), [0, 1, 1, 0, 1, 1, 0, 1, 1, 0])
    assert view.storage_offset() == 1 and view.stride() == (3, 1)


def test_overlapping_reads_add_their_gradients():
    x = ember.arange(5.0, requires_grad=True)
    x.as_strided((3, 3), (1, 1)).sum().backward()  # sliding windows of 3: the middle is read 3 times
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 3, 2, 1])


def test_of_a_non_contiguous_tensor_reads_its_storage():
    y = ember.arange(24.0).reshape(4, 6).t()
    np.testing.assert_array_equal(y.as_strided((2, 2), (1, 6)).numpy(), [[0, 6], [1, 7]])
    x = ember.arange(24.0, requires_grad=True)
    t = x.reshape(4, 6).t()
    (t.as_strided((3,), (7,)) * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    expected = np.zeros(24)
    expected[[0, 7, 14]] = [1, 2, 3]
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_scatter():
    out = ember.as_strided_scatter(ember.zeros(3, 3), ember.ones(3), (3,), (4,))
    np.testing.assert_array_equal(out.numpy(), np.eye(3))
    x = ember.zeros(6, requires_grad=True)
    src = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.as_strided_scatter(src, (2,), (2,), 1)
    (y * ember.arange(6.0)).sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), [0, 1, 0, 2, 0, 0])
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 2, 0, 4, 5])
    np.testing.assert_array_equal(src.grad.numpy(), [1, 3])
    with pytest.raises(RuntimeError, match="as_strided_scatter: expected src to have the view's size"):
        ember.as_strided_scatter(ember.zeros(4), ember.ones(3), (2,), (1,))


@pytest.mark.parametrize("call, message", [
    (lambda: ember.zeros(24).as_strided((5, 5), (5, 1)), "need a storage of 25 elements, but the tensor's storage "
                                                         "holds 24"),
    (lambda: ember.zeros(4).as_strided((2,), (-1,)), "negative strides"),
    (lambda: ember.zeros(4).as_strided((2, 2), (1,)), "mismatch in length"),
    (lambda: ember.zeros(4).as_strided((2,), (1,), -1), "negative storage offset"),
    # An extent past int64 would wrap around to a small number and pass the storage check.
    (lambda: ember.zeros(24).as_strided((3, 3), (2**61, 2**61)), "storage size calculation overflowed"),
    (lambda: ember.zeros(24).as_strided((3,), (2**62,)), "storage size calculation overflowed"),
    (lambda: ember.zeros(24).as_strided((2,), (1,), 2**63 - 1), "storage size calculation overflowed"),
    (lambda: ember.zeros(24).as_strided((2,), (2**63 - 1,)), "storage size calculation overflowed"),
])
def test_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


@needs_torch
def test_matches_torch_values_and_gradients():
    a = np.arange(24.0)
    g = np.arange(12.0).reshape(3, 4)
    grads = []
    for mod in (torch, ember):
        x = mod.tensor(a, requires_grad=True)
        v = x[2:].as_strided((3, 4), (2, 1), 1)
        (v * mod.tensor(g)).sum().backward()
        grads.append((v.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(grads[1][0], grads[0][0])
    np.testing.assert_array_equal(grads[1][1], grads[0][1])
