"""sort / argsort / topk / msort on CUDA against the CPU path: both sorts are
stable and order NaN, infinities and signed zeros alike, so values and
indices must match exactly. Covers the bitonic kernel (rows up to 2,048
elements, one block each, lengths around the powers of two) and the CUB radix
path (longer rows, one row or many, and a tensor large enough to be sorted
in two batches), every dtype, both directions, dims other than the last,
non-contiguous inputs, 0-d and empty tensors, top-k over a vocabulary, and
the gradients.

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"]


def rows_of(shape, dtype, seed):
    """CPU tensor of `dtype` with many ties and, for floats, NaN, +-inf and -0.0."""
    rng = np.random.default_rng(seed)
    a = np.round(rng.standard_normal(shape) * 3) / 2
    if dtype in ("float32", "float64", "float16", "bfloat16") and a.size >= 8:
        flat = a.reshape(-1)
        flat[rng.integers(0, flat.size, size=max(1, flat.size // 50))] = np.nan
        flat[1], flat[3], flat[5], flat[7] = np.inf, -np.inf, -0.0, 0.0
    if dtype == "uint8":
        a = np.abs(a) * 2
    elif dtype == "bool":
        a = a > 0
    elif dtype == "int8":
        a = np.clip(a * 2, -128, 127)
    return ember.tensor(a).to(getattr(ember, dtype))


def host(t):
    t = t.detach().cpu()
    return (t.float() if t.dtype in (ember.bfloat16, ember.float16) else t).numpy()


def same(got, want, msg=""):
    """Exact equality, NaN equal to NaN, and the sign of zero checked."""
    g, w = host(got), host(want)
    assert g.shape == w.shape and got.dtype == want.dtype, msg
    np.testing.assert_array_equal(g, w, err_msg=msg)
    if np.issubdtype(w.dtype, np.floating):
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=msg + " (sign of zero)")


def both(fn, x):
    """fn on the CPU tensor x and on its CUDA copy, results as lists of tensors."""
    cpu = fn(x)
    cuda = fn(x.cuda())
    cpu = list(cpu) if isinstance(cpu, tuple) else [cpu]
    cuda = list(cuda) if isinstance(cuda, tuple) else [cuda]
    for t in cuda:
        assert t.device.type == "cuda"
    return cpu, cuda


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 31, 64, 100, 1024, 2047, 2048, 2049, 5000])
def test_sort_matches_cpu(dtype, n):
    x = rows_of((5, n), dtype, seed=n)
    for descending in (False, True):
        (cv, ci), (gv, gi) = both(lambda t: ember.sort(t, descending=descending), x)
        same(gi, ci, f"indices n={n} descending={descending}")
        same(gv, cv, f"values n={n} descending={descending}")


@pytest.mark.parametrize("dtype", DTYPES[:-1])
def test_topk_matches_cpu(dtype):
    for n, k in ((100, 5), (2048, 2048), (5000, 50), (5000, 4999)):
        x = rows_of((3, n), dtype, seed=k)
        for largest in (True, False):
            (cv, ci), (gv, gi) = both(lambda t: ember.topk(t, k, largest=largest), x)
            same(gi, ci, f"topk indices n={n} k={k} largest={largest}")
            same(gv, cv, f"topk values n={n} k={k} largest={largest}")


def test_radix_path_one_long_row_and_many_rows():
    for shape in ((1, 1_000_003), (300, 4097)):
        x = rows_of(shape, "float32", seed=shape[1])
        for descending in (False, True):
            (cv, ci), (gv, gi) = both(lambda t: ember.sort(t, descending=descending, stable=True), x)
            same(gi, ci, f"{shape} descending={descending}")
            same(gv, cv)
    x = rows_of((2, 70_000), "int64", seed=3)
    (ci,), (gi,) = both(lambda t: ember.argsort(t, descending=True), x)
    same(gi, ci, "int64 argsort")


def test_radix_path_in_two_batches():
    # cuda/sort.cu sorts at most 2^28 elements per batch of whole rows: the
    # rows around the batch boundary and the last ones against the CPU.
    n = 3000
    per_batch = (1 << 28) // n
    rows = per_batch + 3
    x = ember.randn(rows, n, device="cuda")
    x[per_batch - 1, :100] = 0.0  # ties across the boundary rows
    x[per_batch, :100] = 0.0
    v, i = ember.sort(x, descending=True)
    for lo, hi in ((per_batch - 2, per_batch + 2), (rows - 2, rows)):
        cv, ci = ember.sort(x[lo:hi].cpu(), descending=True)
        same(i[lo:hi], ci, f"rows {lo}:{hi}")
        same(v[lo:hi], cv, f"rows {lo}:{hi}")
    assert bool((v[:, 1:] <= v[:, :-1]).all().item())


def test_dims_layouts_and_shapes():
    x = rows_of((4, 6, 300), "float32", seed=1)
    for dim in (0, 1, 2, -2):
        (cv, ci), (gv, gi) = both(lambda t: ember.sort(t, dim, True), x)
        same(gi, ci, f"dim {dim}")
        same(gv, cv, f"dim {dim}")
        (cv, ci), (gv, gi) = both(lambda t: ember.topk(t, 3, dim=dim), x)
        same(gi, ci, f"topk dim {dim}")
    t = x.cuda()
    for view in (t.transpose(0, 2), t[:, ::2, 1::3], t[:1].expand(5, 6, 300)):
        v, i = ember.sort(view, -1)
        cv, ci = ember.sort(view.cpu(), -1)
        same(i, ci, "view")
        same(v, cv, "view")
    (cv, ci), (gv, gi) = both(lambda t: ember.sort(t), ember.tensor(2.5))
    same(gv, cv)
    same(gi, ci)
    (cv, ci), (gv, gi) = both(lambda t: ember.topk(t, 2), ember.zeros(0, 5))
    assert gv.shape == (0, 2) and gi.dtype == ember.int64
    (cv,), (gv,) = both(lambda t: ember.msort(t), rows_of((7, 3), "int32", seed=4))
    same(gv, cv)


def test_top_k_over_a_vocabulary():
    logits = ember.randn(8, 50257)
    (cv, ci), (gv, gi) = both(lambda t: ember.topk(t, 50), logits)
    same(gi, ci)
    same(gv, cv)


def test_gradients_match_cpu():
    a = np.random.default_rng(0).permutation(60).reshape(3, 20).astype(np.float64)
    w = np.linspace(-1, 1, 3 * 7).reshape(3, 7)
    grads = []
    for device in ("cpu", "cuda"):
        x = ember.tensor(a, device=device, requires_grad=True)
        v, _ = ember.topk(x, 7, dim=1)
        s, _ = ember.sort(x, dim=0, descending=True)
        ((v * ember.tensor(w, device=device)).sum() + (s * s).sum()).backward()
        grads.append(host(x.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)


def test_errors_as_on_the_cpu():
    x = ember.zeros(8, device="cuda")
    with pytest.raises(RuntimeError, match=r"topk: selected index k \(9\)"):
        ember.topk(x, 9)
    with pytest.raises(IndexError, match="sort"):
        ember.sort(x, 1)
    with pytest.raises(NotImplementedError, match="topk"):
        ember.topk(x.bool(), 1)
