"""scatter_reduce against a numpy reference (and torch where importable):
sum, mean, amax, amin, with and without include_self, NaN propagation,
integer mean (floor), and gradients."""
import numpy as np
import pytest

import ember
from harness import OpCase, make, table_tests, to_numpy, torch


def np_scatter_reduce(inp, dim, index, src, reduce, include_self=True):
    out = inp.astype(np.float64).copy()
    groups = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        groups.setdefault(tuple(target), []).append(src[pos])
    for target, vals in groups.items():
        vals = list(vals) + ([inp[target]] if include_self else [])
        if reduce == "sum":
            out[target] = np.sum(vals)
        elif reduce == "mean":
            out[target] = np.mean(vals)
        elif reduce == "amax":
            out[target] = np.nan if np.isnan(vals).any() else np.max(vals)
        else:
            out[target] = np.nan if np.isnan(vals).any() else np.min(vals)
    return out.astype(inp.dtype)


INDEX = np.array([[0, 2, 0], [1, 0, 2]])


def case(reduce, include_self):
    return OpCase(f"scatter_reduce_{reduce}_{'self' if include_self else 'noself'}",
                  lambda a, s: ember.scatter_reduce(a, 0, ember.tensor(INDEX, device=a.device), s, reduce,
                                                    include_self=include_self),
                  lambda a, s: np_scatter_reduce(a, 0, INDEX, s, reduce, include_self),
                  [[(3, 3), (2, 3)]], grad=reduce in ("sum", "mean"))


CASES = [case(r, inc) for r in ("sum", "mean", "amax", "amin") for inc in (True, False)]

test_forward, test_gradcheck = table_tests(CASES)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_random_against_the_reference(reduce, include_self):
    rng = np.random.default_rng(3)
    for trial in range(25):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 5, size=nd))
        dim = int(rng.integers(0, nd))
        ishape = list(shape)
        ishape[dim] = int(rng.integers(1, 6))
        index = rng.integers(0, shape[dim], size=ishape)
        src = rng.integers(-3, 4, size=ishape).astype(np.float64)
        if trial % 4 == 0:
            src.flat[0] = np.nan
        inp = rng.standard_normal(shape).round(1)
        got = ember.scatter_reduce(ember.tensor(inp), dim, ember.tensor(index), ember.tensor(src), reduce,
                                   include_self=include_self).numpy()
        np.testing.assert_allclose(got, np_scatter_reduce(inp, dim, index, src, reduce, include_self), equal_nan=True)
        if torch is not None:
            want = torch.scatter_reduce(torch.tensor(inp), dim, torch.tensor(index), torch.tensor(src), reduce,
                                        include_self=include_self).numpy()
            np.testing.assert_allclose(got, want, equal_nan=True)


def test_integers_in_place_and_errors():
    x = ember.tensor([10, 20, 30])
    got = x.scatter_reduce(0, ember.tensor([0, 0, 2]), ember.tensor([1, 2, 5]), "mean")
    assert got.tolist() == [4, 20, 17]  # floor((10 + 1 + 2) / 3), floor((30 + 5) / 2), as torch
    y = ember.zeros(3)
    y.scatter_reduce_(0, ember.tensor([1, 1]), ember.tensor([4.0, 6.0]), "amax", include_self=False)
    assert y.tolist() == [0.0, 6.0, 0.0]
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, ember.tensor([0]), ember.tensor([1]), "max")
    with pytest.raises(NotImplementedError, match="reduce='prod' is not supported yet"):
        x.scatter_reduce(0, ember.tensor([0]), ember.tensor([1]), "prod")


def test_gradient_of_amax_reaches_the_extreme():
    src = make(np.array([1.0, 5.0, 3.0, 2.0]), requires_grad=True)
    out = ember.scatter_reduce(ember.zeros(2, dtype=ember.float64, device=src.device), 0,
                               ember.tensor([0, 0, 1, 1], device=src.device), src, "amax", include_self=False)
    out.sum().backward()
    np.testing.assert_array_equal(to_numpy(src.grad), [0.0, 1.0, 1.0, 0.0])


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("call, exc, message", [
    (lambda r: ember.zeros(3).scatter_reduce(0, ember.tensor([-1]), ember.ones(1), r), RuntimeError,
     "index -1 is out of bounds for dimension 0 with size 3"),
    (lambda r: ember.zeros(3, 4).scatter_reduce(0, ember.tensor([[2**62, 0]]), ember.ones(1, 2), r), RuntimeError,
     "index 4611686018427387904 is out of bounds"),
    (lambda r: ember.zeros(3, 3).scatter_reduce(2, ember.tensor([[1]]), ember.ones(1, 1), r), IndexError,
     "Dimension out of range"),
    (lambda r: ember.zeros(3, 3).scatter_reduce(0, ember.tensor([[0] * 5]), ember.ones(1, 5), r), RuntimeError,
     r"Expected index \[1, 5\] to be no larger than self \[3, 3\]"),
    (lambda r: ember.zeros(3).scatter_reduce(0, ember.tensor([0, 1]), ember.ones(1), r), RuntimeError,
     "no larger size than src"),
    (lambda r: ember.zeros(3).scatter_reduce(0, ember.tensor([0.0]), ember.ones(1), r), RuntimeError,
     "Expected dtype int64 for index"),
    (lambda r: ember.zeros(3).scatter_reduce(0, ember.tensor([0]), ember.ones(1, dtype=ember.float64), r),
     RuntimeError, "Expected self.dtype to be equal to src.dtype"),
])
def test_bad_arguments_raise_for_every_reduction(reduce, call, exc, message):
    # The amax/amin path indexes a flat view of self: without these checks a bad index, dim or
    # shape wrote to some other element instead of raising (as PyTorch does).
    with pytest.raises(exc, match=message):
        call(reduce)
