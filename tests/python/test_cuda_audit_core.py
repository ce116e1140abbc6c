"""GPU checks from the audit of the CUDA backend's core (elementwise launcher,
casts, reductions, copies, the ember.cuda API): behaviour that only the
hardware shows (PTX's saturating conversions, real alignment and grid
limits), compared with the CPU path.

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

FLOATS = [ember.float32, ember.float64, ember.float16, ember.bfloat16]


def host(t):
    return t.detach().cpu()


@pytest.mark.parametrize("dtype", FLOATS)
def test_negative_floats_to_uint8_wrap_as_on_the_cpu(dtype):
    # A plain float -> uint8 cast is PTX's saturating cvt.rzi.u32 (-1.0 -> 0);
    # the CPU and PyTorch wrap through int64 (-1.0 -> 255).
    values = [-1.0, -3.5, -0.5, -128.0, -255.0, -256.0, -1000.0, 300.0, 255.0, 0.0, 7.9]
    x = ember.tensor(values, dtype=dtype)
    want = x.to(ember.uint8)
    assert want[0].item() == 255  # the CPU's rule, which the GPU must follow
    got = x.cuda().to(ember.uint8)  # the device cast kernel
    np.testing.assert_array_equal(host(got).numpy(), want.numpy())
    # A CPU -> GPU copy that casts (bytes over, then the cast kernel) and back.
    dst = ember.zeros(len(values), dtype=ember.uint8, device="cuda")
    dst.copy_(x)
    np.testing.assert_array_equal(host(dst).numpy(), want.numpy())
    back = ember.zeros(len(values), dtype=ember.uint8)
    back.copy_(x.cuda())
    np.testing.assert_array_equal(back.numpy(), want.numpy())


def test_memory_stats_have_torch_names():
    x = ember.empty(1000, device="cuda")
    s = ember.cuda.memory_stats()
    assert s["allocated_bytes.all.current"] == s["allocated_bytes"] == ember.cuda.memory_allocated() > 0
    assert s["allocated_bytes.all.peak"] == ember.cuda.max_memory_allocated()
    assert s["reserved_bytes.all.current"] == ember.cuda.memory_reserved()
    assert s["reserved_bytes.all.peak"] == ember.cuda.max_memory_reserved()
    for key in ("requested_bytes.all.current", "active.all.current", "segment.all.current", "num_alloc_retries",
                "num_ooms", "num_device_alloc", "num_device_free"):
        assert key in s
    del x


@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_elementwise_on_offset_views_matches_the_cpu(offset):
    # Offset views break the 16-byte alignment of the vector path: each operand
    # is checked, and the kernel falls back to scalar loads.
    n = 4099
    a = ember.arange(n + 8, dtype=ember.float32) * 0.5 - 100
    b = ember.arange(n + 8, dtype=ember.float32).remainder(17) - 8
    ca, cb = a.cuda(), b.cuda()
    for got, want in (
        (ca[offset:offset + n] + cb[3:3 + n], a[offset:offset + n] + b[3:3 + n]),
        (ca[offset:offset + n] * cb[:n], a[offset:offset + n] * b[:n]),
        (ember.maximum(ca[offset:offset + n], ember.tensor(2.0)), ember.maximum(a[offset:offset + n], ember.tensor(2.0))),
        (ca[offset:offset + n].double(), a[offset:offset + n].double()),
        (ca[offset:offset + n].half().float(), a[offset:offset + n].half().float()),
    ):
        np.testing.assert_array_equal(host(got).numpy(), want.numpy())
    # In place into an offset view: the elements around it stay as they were.
    buf = ember.zeros(n + 8, device="cuda")
    buf[offset:offset + n] += ca[:n]
    ref = ember.zeros(n + 8)
    ref[offset:offset + n] += a[:n]
    np.testing.assert_array_equal(host(buf).numpy(), ref.numpy())


def test_strided_and_broadcast_elementwise_matches_the_cpu():
    a = ember.arange(2 * 3 * 5 * 7, dtype=ember.float64).reshape(2, 3, 5, 7)
    b = ember.arange(5, dtype=ember.float64).reshape(5, 1) - 2
    ca, cb = a.cuda(), b.cuda()
    pairs = [
        (ca.transpose(1, 3) * 3 - cb, a.transpose(1, 3) * 3 - b),
        (ca.transpose(2, 3) - cb.t(), a.transpose(2, 3) - b.t()),
        (ca[:, ::2, :, 1::3] + cb, a[:, ::2, :, 1::3] + b),
        (ember.where(ca > 50, ca, cb), ember.where(a > 50, a, b)),
        (ca.expand(4, 2, 3, 5, 7)[3].sum(), a.expand(4, 2, 3, 5, 7)[3].sum()),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(host(got).numpy(), want.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("shape,dim", [((3 * 2**20 + 5,), None), ((70000, 3), 0), ((3, 70000), 1), ((2, 9000, 5), 1)])
def test_long_reductions_match_the_cpu(shape, dim):
    # Long columns with few outputs take the two-pass fold; small integers in
    # float64 sum exactly in any order.
    n = int(np.prod(shape))
    x = (ember.arange(n, dtype=ember.float64).remainder(13) - 6).reshape(*shape)
    cx = x.cuda()
    kw = {} if dim is None else {"dim": dim}
    for name in ("sum", "amax", "amin", "mean"):
        got = getattr(cx, name)(**kw)
        want = getattr(x, name)(**kw)
        np.testing.assert_allclose(host(got).numpy(), want.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
    f = x.float()
    np.testing.assert_allclose(host(f.cuda().sum(**kw)).numpy(), f.double().sum(**kw).numpy(), rtol=1e-5)
    i = x.long()
    np.testing.assert_array_equal(host(i.cuda().sum(**kw)).numpy(), i.sum(**kw).numpy())
    if dim is not None:
        np.testing.assert_array_equal(host(cx.argmax(dim=dim)).numpy(), x.argmax(dim=dim).numpy())


def test_copies_between_layouts_and_dtypes_match_the_cpu():
    a = ember.arange(4 * 6, dtype=ember.float32).reshape(4, 6) - 7.25
    # A non-contiguous CUDA destination of another dtype, filled from a CPU view.
    dst = ember.zeros(6, 4, dtype=ember.float64, device="cuda").t()
    dst.copy_(a)
    np.testing.assert_array_equal(host(dst).numpy(), a.double().numpy())
    # A non-contiguous CPU destination of another dtype, filled from a CUDA view.
    out = ember.zeros(6, 4, dtype=ember.int32).t()
    out.copy_(a.cuda()[:, :])
    np.testing.assert_array_equal(out.numpy(), a.to(ember.int32).numpy())
    # A broadcast source.
    row = ember.zeros(5, 6, dtype=ember.float16, device="cuda")
    row.copy_(a[1])
    np.testing.assert_array_equal(host(row).float().numpy(), np.broadcast_to(a[1].half().float().numpy(), (5, 6)))


def test_stream_context_allocates_and_runs_on_the_stream():
    n = 1 << 10  # the float32 sum, n * n, stays exact
    s = ember.cuda.Stream()
    x = ember.arange(n, dtype=ember.float32, device="cuda")
    s.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        y = (x * 2 + 1).sum()
    ember.cuda.current_stream().wait_stream(s)
    assert y.item() == float(n * n)


@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_gives_the_cpus_bits_for_a_seed(dtype):
    # uniform_ draws no transcendental function, so the GPU must give the CPU's
    # bits, also in float64 and for a span (3.4) that makes span * u inexact:
    # the CPU rounds the product, then the sum, where nvcc would fuse them.
    n = 100_003
    ember.manual_seed(11)
    got = ember.empty(n, dtype=dtype, device="cuda").uniform_(-1.3, 2.1)
    ember.manual_seed(11)
    want = ember.empty(n, dtype=dtype).uniform_(-1.3, 2.1)
    np.testing.assert_array_equal(host(got).double().numpy(), want.double().numpy())
    # normal_ with a mean and std: the same affine step (its log/sin/cos may differ by ulps).
    ember.manual_seed(12)
    got = ember.empty(n, dtype=dtype, device="cuda").normal_(0.7, 1.9)
    ember.manual_seed(12)
    want = ember.empty(n, dtype=dtype).normal_(0.7, 1.9)
    tol = 1e-2 if dtype in (ember.float16, ember.bfloat16) else 1e-5
    np.testing.assert_allclose(host(got).double().numpy(), want.double().numpy(), rtol=tol, atol=tol)
