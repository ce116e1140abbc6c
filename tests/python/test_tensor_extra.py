"""Tensor methods written with ember ops (python/ember/_tensor_extra.py) and
the unfold view: against numpy (and PyTorch where importable)."""
import numpy as np
import pytest

import ember
from harness import OpCase, make, table_tests, to_numpy, torch


def np_unfold(a, dim, size, step):
    a = np.moveaxis(a, dim, -1)
    n = (a.shape[-1] - size) // step + 1
    windows = np.stack([a[..., w * step:w * step + size] for w in range(n)], axis=-2)  # [..., n, size]
    return np.moveaxis(windows, -2, dim if dim >= 0 else dim - 1)


def np_nansum(a, axis=None):
    return np.nansum(a, axis=axis).astype(a.dtype)


CASES = [
    OpCase("unfold_last", lambda a: a.unfold(-1, 3, 2), lambda a: np_unfold(a, -1, 3, 2), [[(2, 7)], [(9,)]],
           dtypes=(np.float32, np.int64), torch_fn=lambda a: a.unfold(-1, 3, 2)),
    OpCase("unfold_overlapping_first_dim", lambda a: a.unfold(0, 3, 1), lambda a: np_unfold(a, 0, 3, 1), [[(5, 2)]],
           torch_fn=lambda a: a.unfold(0, 3, 1)),
    OpCase("unfold_tiles", lambda a: a.unfold(1, 3, 3), lambda a: np_unfold(a, 1, 3, 3), [[(2, 6, 2)], [(2, 7, 3)]],
           torch_fn=lambda a: a.unfold(1, 3, 3)),  # step == size: with and without an uncovered tail
    OpCase("unfold_whole", lambda a: a.unfold(1, 4, 5), lambda a: np_unfold(a, 1, 4, 5), [[(2, 4, 3)]]),
    OpCase("nansum", lambda a: ember.nansum(a), lambda a: np_nansum(a), [[(3, 4)], [()]]),
    OpCase("nansum_dim", lambda a: a.nansum(1), lambda a: np_nansum(a, 1), [[(3, 4)]]),
    OpCase("nanmean_dim", lambda a: ember.nanmean(a, 0), lambda a: np.nanmean(a, 0), [[(3, 4)]]),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_unfold_is_a_view_and_errors():
    x = ember.arange(10.0)
    w = x.unfold(0, 4, 3)
    assert w.stride() == (3, 1) and w.storage_offset() == 0
    x[4] = 100.0
    assert w[1, 1].item() == 100.0
    with pytest.raises(RuntimeError, match="unfold: maximum size for tensor at dimension 0 is 10 but size is 11"):
        x.unfold(0, 11, 1)
    with pytest.raises(RuntimeError, match="unfold: step is 0 but must be > 0"):
        x.unfold(0, 2, 0)


def test_nan_reductions():
    x = ember.tensor([[1.0, float("nan")], [float("nan"), float("nan")]])
    assert ember.nansum(x).item() == 1.0
    means = ember.nanmean(x, 1).tolist()
    assert means[0] == 1.0 and np.isnan(means[1])
    xg = make(np.array([1.0, np.nan, 2.0]), requires_grad=True)
    ember.nansum(xg).backward()
    np.testing.assert_array_equal(to_numpy(xg.grad), [1.0, 0.0, 1.0])


def test_new_constructors_follow_self():
    base = ember.zeros(2, dtype=ember.float64)
    for t, shape in ((base.new_zeros(3, 2), (3, 2)), (base.new_ones((4,)), (4,)), (base.new_empty([1, 2]), (1, 2)),
                     (base.new_full((2, 2), 7.0), (2, 2))):
        assert t.shape == shape and t.dtype == ember.float64 and t.device == base.device
    assert base.new_full((2,), 7.0).tolist() == [7.0, 7.0]
    assert base.new_tensor([1, 2]).dtype == ember.float64
    assert base.new_zeros(2, dtype=ember.int32).dtype == ember.int32
    assert base.new_ones(2, requires_grad=True).requires_grad
    assert base.get_device() == -1 and base.ndimension() == 1


def test_fill_diagonal_and_index_copy_fill_masked_scatter():
    for shape, wrap in (((4, 4), False), ((7, 3), True), ((7, 3), False), ((3, 5), False)):
        got = ember.zeros(*shape)
        got.fill_diagonal_(2.0, wrap=wrap)
        want = np.zeros(shape, dtype=np.float32)
        np.fill_diagonal(want, 2.0, wrap=wrap)
        np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{shape} wrap={wrap}")
    cube = ember.zeros(3, 3, 3).fill_diagonal_(1.0)
    assert cube.sum().item() == 3.0 and cube[2, 2, 2].item() == 1.0
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        ember.zeros(2, 3, 3).fill_diagonal_(1.0)

    got = ember.zeros(3, 4).index_copy(1, ember.tensor([3, 0]), ember.arange(6.0).reshape(3, 2))
    want = np.zeros((3, 4), dtype=np.float32)
    want[:, [3, 0]] = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(got.numpy(), want)
    filled = ember.ones(2, 3).index_fill(0, ember.tensor([1]), -1.0)
    np.testing.assert_array_equal(filled.numpy(), [[1, 1, 1], [-1, -1, -1]])
    mask = ember.tensor([[True, False, True], [False, True, False]])
    scattered = ember.zeros(2, 3).masked_scatter(mask, ember.arange(1.0, 7.0))
    np.testing.assert_array_equal(scattered.numpy(), [[1, 0, 2], [0, 3, 0]])
    with pytest.raises(RuntimeError, match="the mask selects 3 elements but source has only 2"):
        ember.zeros(2, 3).masked_scatter(mask, ember.ones(2))
    with pytest.raises(IndexError, match="index_copy_: index must be a 0-D or 1-D int64 tensor"):
        ember.zeros(3).index_copy_(0, ember.tensor([0.0]), ember.ones(1))
    # Bad arguments raise as in PyTorch (they used to wrap the dim, broadcast the source, or take
    # a negative index_copy index).
    x = ember.zeros(3, 4)
    for call, exc, message in [
        (lambda: x.index_fill(2, ember.tensor([0]), -1.0), IndexError, r"index_fill_: Dimension out of range"),
        (lambda: x.index_copy(-3, ember.tensor([0]), ember.ones(1, 4)), IndexError, r"Dimension out of range"),
        (lambda: x.index_copy(0, ember.tensor([0, 2]), ember.ones(1, 4)), IndexError,
         r"Number of indices \(2\) should be equal to source.size\(dim\) \(1\)"),
        (lambda: x.index_copy(0, ember.tensor([0]), ember.ones(1, 3)), RuntimeError, r"same slice shapes"),
        (lambda: x.index_copy(0, ember.tensor([-1]), ember.ones(1, 4)), IndexError,
         r"index_copy_: index -1 is out of bounds for dimension 0 with size 3"),
        (lambda: x.index_copy(0, ember.tensor([3]), ember.ones(1, 4)), IndexError, r"index 3 is out of bounds"),
        (lambda: x.index_fill(0, ember.tensor([0], dtype=ember.int32), 1.0), IndexError, r"int64 tensor, got "
                                                                                         r"ember.int32"),
        (lambda: x.index_fill(0, ember.tensor([0]), ember.ones(1)), RuntimeError, r"0-dimensional value tensor"),
        (lambda: ember.zeros(3).index_copy_(0, ember.tensor([0, 1]), ember.tensor(5.0)), IndexError,
         r"Number of indices"),
        (lambda: ember.tensor(1.0).index_copy_(0, ember.tensor([0]), ember.ones(1, 1)), IndexError,
         r"a 0-d self takes one index and one source element"),
    ]:
        with pytest.raises(exc, match=message):
            call()
    assert x.index_fill(0, ember.tensor([-1]), 1.0)[2].tolist() == [1.0] * 4  # index_fill wraps, as PyTorch
    assert ember.tensor(5.0).index_copy(0, ember.tensor([0]), ember.tensor(3.0)).item() == 3.0  # 0-d self
    # differentiable through setitem
    src = make(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    ember.zeros(2, 3, dtype=ember.float64, device=src.device).index_copy(
        1, ember.tensor([2, 0], device=src.device), src).sum().backward()
    np.testing.assert_array_equal(to_numpy(src.grad), np.ones((2, 2)))


@pytest.mark.parametrize("values", [[3, 1, 2, 3, 1, 5], [2.5, -1.0, 2.5, 0.0], [7], []])
def test_unique(values):
    x = ember.tensor(values) if values else ember.tensor([], dtype=ember.int64)
    u, inverse, counts = ember.unique(x, return_inverse=True, return_counts=True)
    nu, ninv, ncounts = np.unique(np.array(values, dtype=x.numpy().dtype), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(u.numpy(), nu)
    np.testing.assert_array_equal(inverse.numpy().reshape(-1), ninv.reshape(-1))
    np.testing.assert_array_equal(counts.numpy(), ncounts)
    assert inverse.shape == x.shape
    np.testing.assert_array_equal(x.unique().numpy(), nu)
    if torch is not None and values:
        tu, tinv, tcounts = torch.unique(torch.tensor(values), return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(u.numpy(), tu.numpy())
        np.testing.assert_array_equal(inverse.numpy(), tinv.numpy())


def test_unique_keeps_the_input_shape_for_inverse_and_unique_consecutive():
    x = ember.tensor([[1, 1], [2, 1]])
    _, inverse = ember.unique(x, return_inverse=True)
    assert inverse.tolist() == [[0, 0], [1, 0]]
    values, inv, counts = ember.unique_consecutive(ember.tensor([1, 1, 2, 2, 3, 1, 1]), return_inverse=True,
                                                   return_counts=True)
    assert values.tolist() == [1, 2, 3, 1] and counts.tolist() == [2, 2, 1, 2]
    assert inv.tolist() == [0, 0, 1, 1, 2, 3, 3]
    with pytest.raises(NotImplementedError, match="unique: the dim argument is not supported yet"):
        ember.unique(x, dim=0)


def test_new_constructors_take_empty_sizes_and_self_dtype():
    base = ember.ones(2, dtype=ember.float64)
    assert base.new_zeros(()).shape == () and base.new_ones([]).shape == () and base.new_empty(()).shape == ()
    assert base.new_tensor(ember.tensor([1, 2])).dtype == ember.float64  # self's dtype, as in torch
