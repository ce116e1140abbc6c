"""repr(tensor) in PyTorch's exact format, and set_printoptions."""
import math

import numpy as np
import pytest

import ember

CASES = []  # printing has no numpy reference op

E = ember
nan, inf = math.nan, math.inf


@pytest.fixture(autouse=True)
def default_printoptions():
    E.set_printoptions(profile="default")
    yield
    E.set_printoptions(profile="default")


@pytest.mark.parametrize("make, expected", [
    (lambda: E.tensor([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    (lambda: E.tensor([1.5, 2.0, 3.0]), "tensor([1.5000, 2.0000, 3.0000])"),
    (lambda: E.tensor([[1.0, -1.0], [1.0, -1.0]]), "tensor([[ 1., -1.],\n        [ 1., -1.]])"),
    (lambda: E.tensor([0.1, -2.25]), "tensor([ 0.1000, -2.2500])"),
    (lambda: E.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: E.tensor([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda: E.tensor([1.0, 1000.0]), "tensor([   1., 1000.])"),
    (lambda: E.tensor([1.0, 1001.0]), "tensor([1.0000e+00, 1.0010e+03])"),
    (lambda: E.tensor([123456789.0]), "tensor([1.2346e+08])"),
    (lambda: E.tensor([0.0, 0.0]), "tensor([0., 0.])"),
    (lambda: E.tensor([-0.0, 1.0]), "tensor([-0., 1.])"),
    (lambda: E.tensor([0.5, nan, inf, -inf]), "tensor([0.5000,    nan,    inf,   -inf])"),
    (lambda: E.tensor([1.0, nan]), "tensor([1., nan])"),
    (lambda: E.tensor([nan, inf]), "tensor([nan, inf])"),
    (lambda: E.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: E.tensor([-10, 2, 300]), "tensor([-10,   2, 300])"),
    (lambda: E.tensor([True, False]), "tensor([ True, False])"),
    (lambda: E.tensor([True, True]), "tensor([True, True])"),
    (lambda: E.tensor(3.5), "tensor(3.5000)"),
    (lambda: E.tensor(3.0), "tensor(3.)"),
    (lambda: E.tensor(7), "tensor(7)"),
    (lambda: E.tensor(True), "tensor(True)"),
    (lambda: E.tensor(nan), "tensor(nan)"),
    (lambda: E.tensor(2.5, dtype=E.float64), "tensor(2.5000, dtype=ember.float64)"),
    (lambda: E.zeros(0), "tensor([])"),
    (lambda: E.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: E.zeros(0, dtype=E.int64), "tensor([], dtype=ember.int64)"),
    (lambda: E.zeros(2, 0, dtype=E.bool), "tensor([], size=(2, 0), dtype=ember.bool)"),
    (lambda: E.tensor([1.0, 2.0], dtype=E.float64), "tensor([1., 2.], dtype=ember.float64)"),
    (lambda: E.tensor([1.0, 2.5], dtype=E.float16), "tensor([1.0000, 2.5000], dtype=ember.float16)"),
    (lambda: E.tensor([1, 2], dtype=E.int32), "tensor([1, 2], dtype=ember.int32)"),
    (lambda: E.tensor([1, 2], dtype=E.uint8), "tensor([1, 2], dtype=ember.uint8)"),
    (lambda: E.ones(2, 3, requires_grad=True), "tensor([[1., 1., 1.],\n        [1., 1., 1.]], requires_grad=True)"),
    (lambda: E.ones(2, requires_grad=True) * 2, "tensor([2., 2.], grad_fn=<MulBackward0>)"),
    (lambda: E.ones(2, dtype=E.float64, requires_grad=True) + 1,
     "tensor([2., 2.], dtype=ember.float64, grad_fn=<AddBackward0>)"),
    (lambda: E.tensor([-1e-5, 1.0]), "tensor([-1.0000e-05,  1.0000e+00])"),
    (lambda: E.tensor([[1e-5, 1.0], [2.0, 3.0]]), "tensor([[1.0000e-05, 1.0000e+00],\n        [2.0000e+00, 3.0000e+00]])"),
    (lambda: E.tensor([100.0, 2000.0]), "tensor([ 100., 2000.])"),
    (lambda: E.tensor([1.0, 2.0], dtype=E.bfloat16), "tensor([1., 2.], dtype=ember.bfloat16)"),
    (lambda: E.tensor([2**62, -1]), "tensor([4611686018427387904,                  -1])"),
    (lambda: E.zeros(0, requires_grad=True), "tensor([], requires_grad=True)"),
    (lambda: E.tensor([[1, 2], [3, 4]]).t(), "tensor([[1, 3],\n        [2, 4]])"),
    (lambda: E.tensor([[1, 2]]).expand(3, 2), "tensor([[1, 2],\n        [1, 2],\n        [1, 2]])"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_repr(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_three_dims():
    t = E.tensor(np.arange(24.0).reshape(2, 3, 4), dtype=E.float32)
    assert repr(t) == (
        "tensor([[[ 0.,  1.,  2.,  3.],\n"
        "         [ 4.,  5.,  6.,  7.],\n"
        "         [ 8.,  9., 10., 11.]],\n"
        "\n"
        "        [[12., 13., 14., 15.],\n"
        "         [16., 17., 18., 19.],\n"
        "         [20., 21., 22., 23.]]])")


def test_line_wrapping():
    t = E.tensor(np.arange(30.0) / 7, dtype=E.float32)
    assert repr(t) == (
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429])")


def test_summarized_vector_and_matrix():
    assert repr(E.tensor(np.arange(2000))) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    assert repr(E.tensor(np.arange(1000))).count("...") == 0  # threshold is numel > 1000
    assert repr(E.tensor(np.arange(10000).reshape(100, 100))) == (
        "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n"
        "        [ 100,  101,  102,  ...,  197,  198,  199],\n"
        "        [ 200,  201,  202,  ...,  297,  298,  299],\n"
        "        ...,\n"
        "        [9700, 9701, 9702,  ..., 9797, 9798, 9799],\n"
        "        [9800, 9801, 9802,  ..., 9897, 9898, 9899],\n"
        "        [9900, 9901, 9902,  ..., 9997, 9998, 9999]])")


def test_summary_picks_format_from_printed_values_only():
    # The hidden middle value 0.5 would force 4 decimals; torch ignores it.
    a = np.ones(2001)
    a[1000] = 0.5
    assert repr(E.tensor(a, dtype=E.float32)) == "tensor([1., 1., 1.,  ..., 1., 1., 1.])"


def test_suffix_wraps_past_linewidth():
    t = E.tensor(np.arange(8.0) + 0.5, dtype=E.float64)
    assert repr(t) == ("tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000],\n"
                       "       dtype=ember.float64)")


def test_set_printoptions():
    t = E.tensor([1.123456, 2.5])
    E.set_printoptions(precision=2)
    assert repr(t) == "tensor([1.12, 2.50])"
    E.set_printoptions(sci_mode=True)
    assert repr(t) == "tensor([1.12e+00, 2.50e+00])"
    E.set_printoptions(sci_mode=False, precision=4)
    # torch keeps the width measured in scientific notation when sci_mode is forced off
    assert repr(E.tensor([1e-5, 1.0])) == "tensor([    0.0000,     1.0000])"
    E.set_printoptions(profile="default", threshold=5, edgeitems=1)
    assert repr(E.tensor([1, 2, 3, 4, 5, 6])) == "tensor([1,  ..., 6])"
    E.set_printoptions(profile="default", linewidth=20)
    assert repr(E.tensor([1, 2, 3, 4, 5, 6])) == "tensor([1, 2, 3, 4,\n        5, 6])"
    E.set_printoptions(profile="full")
    assert "..." not in repr(E.tensor(np.arange(3000)))
    opts = E.get_printoptions()
    assert opts["precision"] == 4 and opts["edgeitems"] == 3
    E.set_printoptions(profile="short")
    assert repr(E.tensor([1.123456])) == "tensor([1.12])"
    with pytest.raises(ValueError, match="profile"):
        E.set_printoptions(profile="nope")
