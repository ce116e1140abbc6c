"""Tensor.view(dtype): the same bytes read as another dtype, against numpy's
ndarray.view, on the test device; the layouts it refuses and its autograd."""
import numpy as np
import pytest

import ember
from harness import make

PAIRS = [
    (np.float32, np.int32), (np.int32, np.float32), (np.float32, np.uint8), (np.uint8, np.float32),
    (np.float64, np.int32), (np.int32, np.float64), (np.int64, np.float64), (np.float32, np.float64),
    (np.float64, np.float32), (np.uint8, np.int8), (np.float32, np.float32),
]


@pytest.mark.parametrize("src,dst", PAIRS, ids=lambda d: np.dtype(d).name)
def test_view_reads_the_same_bytes_as_numpy(src, dst):
    a = np.arange(1, 49, dtype=np.float64).reshape(3, 16).astype(src)
    t = make(a)
    v = t.view(getattr(ember, np.dtype(dst).name))
    expected = a.view(dst)
    assert v.shape == expected.shape and v.dtype == getattr(ember, np.dtype(dst).name)
    np.testing.assert_array_equal(v.cpu().numpy(), expected)


def test_view_shares_memory_both_ways():
    t = make(np.zeros((2, 4), dtype=np.float32))
    bits = t.view(ember.int32)
    bits[0, 1] = 0x3F800000  # the bit pattern of 1.0f
    assert float(t[0, 1]) == 1.0
    t[1, 2] = -2.0
    assert int(bits[1, 2]) == np.array([-2.0], dtype=np.float32).view(np.int32)[0]
    assert t.view(dtype=ember.int32).shape == (2, 4)


def test_view_of_a_sliced_tensor_keeps_its_offset_and_row_strides():
    a = np.arange(40, dtype=np.int32).reshape(5, 8)
    t = make(a)[1:4, 2:6]
    np.testing.assert_array_equal(t.view(ember.uint8).cpu().numpy(), a[1:4, 2:6].view(np.uint8))
    np.testing.assert_array_equal(t.view(ember.int64).cpu().numpy(), np.ascontiguousarray(a[1:4, 2:6]).view(np.int64))


def test_complex_as_float_and_back():
    z = np.array([1 + 2j, -3 + 0.5j], dtype=np.complex64)
    t = make(z)
    np.testing.assert_array_equal(t.view(ember.float32).cpu().numpy(), z.view(np.float32))
    np.testing.assert_array_equal(t.view(ember.float32).view(ember.complex64).cpu().numpy(), z)


def test_layouts_that_cannot_be_viewed_are_refused():
    with pytest.raises(RuntimeError, match=r"view: to view float32 as float16 .*stride"):
        make(np.zeros((4, 3), np.float32)).t().view(ember.float16)
    with pytest.raises(RuntimeError, match=r"divisible by 2.*\[3\]"):
        make(np.zeros(3, np.float32)).view(ember.float64)
    with pytest.raises(RuntimeError, match="0-d"):
        make(np.float32(1.0)).view(ember.float16)
    with pytest.raises(RuntimeError, match="storage offset"):
        make(np.zeros(8, np.float32))[1:5].view(ember.float64)
    assert make(np.float32(1.0)).view(ember.int32).shape == ()
    with pytest.raises(TypeError, match="not both"):
        make(np.zeros(4, np.float32)).view(2, dtype=ember.int32)


def test_view_dtype_is_not_differentiable():
    x = make(np.ones(4, np.float32), requires_grad=True)
    assert not x.view(ember.int32).requires_grad
    assert not x.view(ember.float32).requires_grad
