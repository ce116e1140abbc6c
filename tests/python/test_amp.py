"""Mixed precision: ember.autocast (CPU bfloat16 here; CUDA float16 on a GPU)
and ember.amp.GradScaler, against manual casts and, when importable, torch."""
import pickle
import threading
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _C
from harness import CUDA_AVAILABLE, assert_close, needs_gpu, random_array, to_numpy, torch

CASES = []  # no elementwise op rows: autocast changes dtypes, tested below

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def rand(*shape, requires_grad=False, dtype=ember.float32, device="cpu", domain=None):
    t = ember.tensor(random_array(shape, domain=domain), dtype=dtype, device=device)
    return t.requires_grad_(requires_grad) if requires_grad else t


def f32(t):
    return to_numpy(t.float())


# ---- state ------------------------------------------------------------------------------------

def test_defaults_and_state_functions():
    assert ember.is_autocast_enabled("cpu") is False
    assert ember.is_autocast_enabled("cuda") is False
    assert ember.is_autocast_enabled() is False  # no argument: CUDA, as torch
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16
    assert ember.get_autocast_dtype("cuda") == ember.float16
    assert ember.is_autocast_cache_enabled() is True
    assert ember.autocast is ember.amp.autocast
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and ember.is_autocast_cpu_enabled()
        assert not ember.is_autocast_enabled("cuda")
    with ember.autocast("cpu", dtype=ember.float16):
        assert ember.get_autocast_dtype("cpu") == ember.float16
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16
    assert ember.is_autocast_enabled("cpu") is False


def test_bad_device_type_and_dtype():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'xla'"):
        ember.autocast("xla")
    with pytest.raises(ValueError, match="device_type"):
        ember.autocast(ember.device("cpu"))
    with pytest.raises(RuntimeError, match="autocast: unsupported device_type"):
        ember.is_autocast_enabled("tpu")
    with pytest.warns(UserWarning, match="not supported"):
        ac = ember.autocast("cpu", dtype=ember.float64)
    with ac:
        assert not ember.is_autocast_enabled("cpu")


@pytest.mark.skipif(CUDA_AVAILABLE, reason="checks the behaviour without a GPU")
def test_cuda_autocast_without_gpu_warns_and_disables():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        ac = ember.autocast("cuda")
    with ac:
        assert not ember.is_autocast_enabled("cuda")


def test_nesting_enabled_false_and_restore():
    a, b = rand(3, 4), rand(4, 2)
    with ember.autocast("cpu"):
        assert (a @ b).dtype == ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert (a @ b).dtype == ember.float32
            with ember.autocast("cpu", dtype=ember.float16):
                assert (a @ b).dtype == ember.float16
            assert (a @ b).dtype == ember.float32
        assert (a @ b).dtype == ember.bfloat16
    assert (a @ b).dtype == ember.float32


def test_exception_restores_state():
    with pytest.raises(ZeroDivisionError):
        with ember.autocast("cpu"):
            1 / 0
    assert not ember.is_autocast_enabled("cpu")
    assert _C._autocast_cache_size() == 0


def test_decorator():
    @ember.autocast("cpu")
    def forward(a, b):
        """doc kept"""
        assert ember.is_autocast_enabled("cpu")
        return a @ b

    out = forward(rand(2, 3), rand(3, 2))
    assert out.dtype == ember.bfloat16
    assert forward.__doc__ == "doc kept" and forward.__name__ == "forward"
    assert not ember.is_autocast_enabled("cpu")


def test_state_is_thread_local():
    seen = []
    with ember.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((ember.is_autocast_enabled("cpu"),
                                                         (rand(2, 2) @ rand(2, 2)).dtype)))
        t.start()
        t.join()
    assert seen == [(False, ember.float32)]


# ---- op lists on the CPU ----------------------------------------------------------------------

LOWER_CPU = [
    ("matmul", lambda x: ember.matmul(x["a"], x["b"])),
    ("matmul_batched", lambda x: ember.matmul(x["a3"], x["b"])),
    ("mm", lambda x: ember.mm(x["a"], x["b"])),
    ("bmm", lambda x: ember.bmm(x["a3"], x["b3"])),
    ("addmm", lambda x: ember.addmm(x["bias"], x["a"], x["b"])),
    ("linear", lambda x: F.linear(x["a"], x["w"], x["bias"])),
    ("linear_3d", lambda x: F.linear(x["a3"], x["w"], x["bias"])),
    ("conv1d", lambda x: F.conv1d(x["img1"], x["k1"], x["cbias"], padding=1)),
    ("conv2d", lambda x: F.conv2d(x["img"], x["k"], x["cbias"], stride=1, padding=1)),
    ("conv2d_same", lambda x: F.conv2d(x["img"], x["k"], None, padding="same")),
    ("conv_transpose2d", lambda x: F.conv_transpose2d(x["img"], x["kt"], x["cbias"])),
    ("conv_transpose1d", lambda x: F.conv_transpose1d(x["img1"], x["kt1"])),
]


def inputs():
    return {"a": rand(3, 4), "b": rand(4, 5), "a3": rand(2, 3, 4), "b3": rand(2, 4, 5), "bias": rand(5),
            "w": rand(5, 4), "img": rand(1, 2, 5, 5), "k": rand(3, 2, 3, 3), "cbias": rand(3),
            "img1": rand(1, 2, 6), "k1": rand(3, 2, 3), "kt": rand(2, 3, 2, 2), "kt1": rand(2, 3, 2)}


@pytest.mark.parametrize("name,fn", LOWER_CPU, ids=[n for n, _ in LOWER_CPU])
@pytest.mark.parametrize("dtype", [ember.bfloat16, ember.float16])
def test_lower_precision_ops(name, fn, dtype):
    x = inputs()
    with ember.autocast("cpu", dtype=dtype):
        out = fn(x)
    assert out.dtype == dtype, name
    # The same op on inputs cast by hand, outside autocast: the same numbers.
    manual = fn({k: v.to(dtype) for k, v in x.items()})
    assert manual.dtype == dtype
    np.testing.assert_array_equal(f32(out), f32(manual))


def test_lower_precision_leaves_float64_and_ints_alone():
    a, b = rand(3, 4, dtype=ember.float64), rand(4, 2, dtype=ember.float64)
    with ember.autocast("cpu"):
        assert (a @ b).dtype == ember.float64
        i = ember.arange(6).reshape(2, 3)
        assert (i @ i.t()).dtype == ember.int64
        # half inputs go to the autocast dtype too
        assert (rand(2, 3).half() @ rand(3, 2)).dtype == ember.bfloat16


FLOAT32_CPU = [  # (name, loss of (logits, probabilities, class targets))
    ("cross_entropy", lambda x, p, t: F.cross_entropy(x, t)),
    ("cross_entropy_smoothing", lambda x, p, t: F.cross_entropy(x, t, label_smoothing=0.1)),
    ("cross_entropy_probs", lambda x, p, t: F.cross_entropy(x, p)),
    ("nll_loss", lambda x, p, t: F.nll_loss(x, t)),
    ("mse_loss", lambda x, p, t: F.mse_loss(x, p)),
    ("l1_loss", lambda x, p, t: F.l1_loss(x, p)),
    ("smooth_l1_loss", lambda x, p, t: F.smooth_l1_loss(x, p)),
    ("bce_with_logits", lambda x, p, t: F.binary_cross_entropy_with_logits(x, p)),
    ("bce", lambda x, p, t: F.binary_cross_entropy(p, p.flip(0))),
    ("kl_div", lambda x, p, t: F.kl_div(x, p, reduction="batchmean")),
    ("prod", lambda x, p, t: ember.prod(x, 1)),
]


@pytest.mark.parametrize("name,fn", FLOAT32_CPU, ids=[n for n, _ in FLOAT32_CPU])
def test_float32_ops(name, fn):
    x = rand(4, 3).bfloat16()
    p = rand(4, 3, domain=(0.05, 0.95)).bfloat16()
    t = ember.tensor([0, 2, 1, 0])
    with ember.autocast("cpu"):
        out = fn(x, p, t)
    assert out.dtype == ember.float32, name
    # The loss of the same bfloat16 values, computed in float32.
    assert_close(out, to_numpy(fn(x.float(), p.float(), t)), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_gpu)])
@pytest.mark.parametrize("dtype", [ember.bfloat16, ember.float16], ids=str)
def test_cross_entropy_reads_half_logits_without_a_float32_copy(dtype, device):
    # The fused kernel computes in float32 from the half logits themselves:
    # the loss and the gradient are those of an explicit float32 cast, but no
    # cast (a float32 copy of the logits, kept for the backward) is in the graph.
    x = rand(6, 11).to(device=device, dtype=dtype).requires_grad_()
    t = ember.tensor([1, 2, 3, 4, 0, 10], device=device)
    w = rand(11, domain=(0.5, 2.0)).to(device)
    for weight in (None, w):
        with ember.autocast(device, dtype=dtype):
            loss = F.cross_entropy(x, t, weight=weight)
        assert loss.dtype == ember.float32
        node, seen = loss.grad_fn, []
        while node is not None:
            seen.append(node.name())
            nexts = [n for n, _ in node.next_functions if n is not None and n.name() != "AccumulateGrad"]
            node = nexts[0] if nexts else None
        assert "CrossEntropyLossBackward0" in seen and "ToCopyBackward0" not in seen, seen
        loss.backward()
        fused_grad, x.grad = x.grad, None
        expected = F.cross_entropy(x.float(), t, weight=weight)
        expected.backward()
        assert_close(loss, to_numpy(expected), rtol=1e-6, atol=1e-7)
        assert fused_grad.dtype == dtype
        # One rounding to the half type either way: equal on the CPU; on the GPU
        # within one rounding step, should the two kernels' float math differ.
        tol = 0 if device == "cpu" else 2.0**-7
        assert_close(fused_grad.float(), to_numpy(x.grad.float()), rtol=tol, atol=tol * 1e-3)
        x.grad = None


def test_cpu_runs_softmax_norms_and_math_natively():
    # On the CPU PyTorch autocasts these neither way: bfloat16 stays bfloat16,
    # float32 stays float32 (on CUDA they run in float32).
    xb, x = rand(2, 4).bfloat16(), rand(2, 4)
    with ember.autocast("cpu"):
        for fn in (lambda v: ember.softmax(v, -1), lambda v: ember.log_softmax(v, -1), lambda v: v.exp(),
                   lambda v: v.sum(), lambda v: F.layer_norm(v, (4,)), lambda v: v.pow(2)):
            assert fn(xb).dtype == ember.bfloat16
            assert fn(x).dtype == ember.float32


def test_mixed_inputs_promote():
    lo, hi = rand(2, 3).bfloat16(), rand(2, 3)
    with ember.autocast("cpu"):
        y = lo @ rand(3, 3)  # bfloat16
        assert (y + hi).dtype == ember.float32
        assert ember.cat([lo, hi]).dtype == ember.float32
        assert ember.stack([lo, hi]).dtype == ember.float32
        assert (y * hi).dtype == ember.float32


def test_attention_and_module_forward():
    q, k, v = rand(1, 2, 4, 8), rand(1, 2, 4, 8), rand(1, 2, 4, 8)
    mha = ember.nn.MultiheadAttention(8, 2, batch_first=True)
    with ember.autocast("cpu"):
        assert F.scaled_dot_product_attention(q, k, v).dtype == ember.bfloat16
        out, _ = mha(q[0], k[0], v[0])
        assert out.dtype == ember.bfloat16
    for p in mha.parameters():
        assert p.dtype == ember.float32


# ---- autograd ---------------------------------------------------------------------------------

def test_grads_reach_float32_leaves_and_match_manual_casts():
    x = rand(4, 3)
    w = rand(5, 3, requires_grad=True)
    b = rand(5, requires_grad=True)
    k = rand(2, 1, 3, 3, requires_grad=True)
    target = ember.tensor([1, 0, 4, 2])

    def forward(w_, b_, k_, cast):
        h = F.linear(cast(x), w_, b_).relu()                       # [4, 5]
        img = F.conv2d(cast(h.reshape(1, 1, 4, 5)), k_, padding=1)  # [1, 2, 4, 5]
        logits = h + img.sum(1)[0]
        return F.cross_entropy(logits.float() if cast is not None else logits, target)

    with ember.autocast("cpu"):
        loss = forward(w, b, k, lambda t: t)
    assert loss.dtype == ember.float32
    loss.backward()
    for p in (w, b, k):
        assert p.grad.dtype == ember.float32

    # Reference: the casts written out, outside autocast.
    w2, b2, k2 = (p.detach().clone().requires_grad_(True) for p in (w, b, k))
    ref = forward(w2.bfloat16(), b2.bfloat16(), k2.bfloat16(), lambda t: t.bfloat16())
    ref.backward()
    assert_close(loss, to_numpy(ref), rtol=0, atol=0)
    for p, q in ((w, w2), (b, b2), (k, k2)):
        np.testing.assert_array_equal(to_numpy(p.grad), to_numpy(q.grad))


def test_backward_outside_region_after_cache_cleared():
    w = rand(3, 3, requires_grad=True)
    with ember.autocast("cpu"):
        y = (rand(2, 3) @ w) @ w
    assert _C._autocast_cache_size() == 0
    y.float().sum().backward()
    assert w.grad.dtype == ember.float32 and w.grad.shape == (3, 3)


# ---- the weight cast cache --------------------------------------------------------------------

def test_cache_casts_each_parameter_once_per_region():
    lin = ember.nn.Linear(4, 4)
    x = rand(2, 4)
    casts = _C._autocast_cache_casts()
    with ember.autocast("cpu"):
        y = lin(lin(lin(x)))
        assert y.dtype == ember.bfloat16
        assert _C._autocast_cache_size() == 2  # weight (through weight.t()) and bias
        with ember.autocast("cpu"):  # nested region: same cache
            lin(x)
        assert _C._autocast_cache_casts() - casts == 2
    assert _C._autocast_cache_size() == 0  # cleared by the outermost exit
    with ember.autocast("cpu"):
        lin(x)
        assert _C._autocast_cache_casts() - casts == 4  # a new region casts again


def test_cache_skips_non_leaves_disabled_cache_and_no_grad():
    w = rand(3, 3, requires_grad=True)
    casts = _C._autocast_cache_casts()
    with ember.autocast("cpu"):
        rand(2, 3) @ (w * 2)  # not a leaf (nor a view of one)
        rand(2, 3) @ rand(3, 3)  # does not require grad
        with ember.no_grad():
            rand(2, 3) @ w
        assert _C._autocast_cache_size() == 0
    with ember.autocast("cpu", cache_enabled=False):
        rand(2, 3) @ w
        assert _C._autocast_cache_size() == 0
    assert _C._autocast_cache_casts() == casts


def test_cache_sees_in_place_updates():
    w = rand(3, 3, requires_grad=True)
    x = rand(2, 3)
    with ember.autocast("cpu"):
        y1 = x @ w
        with ember.no_grad():
            w.add_(1.0)
        y2 = x @ w  # a stale cast would give y1 again
        assert _C._autocast_cache_size() == 2
    np.testing.assert_array_equal(f32(y2), f32(x.bfloat16() @ w.detach().bfloat16()))
    assert not np.array_equal(f32(y1), f32(y2))


# ---- training ---------------------------------------------------------------------------------

def test_small_model_trains_under_cpu_autocast():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(), ember.nn.Linear(16, 3))
    opt = ember.optim.SGD(model.parameters(), lr=0.5)
    x = rand(32, 8)
    target = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    losses = []
    for _ in range(30):
        with ember.autocast("cpu"):
            loss = F.cross_entropy(model(x), target)
        assert loss.dtype == ember.float32
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype == ember.float32 for p in model.parameters())
    assert losses[-1] < 0.6 * losses[0], losses


# ---- GradScaler -------------------------------------------------------------------------------

def param_with_grad(values, grad):
    p = ember.tensor(values, dtype=ember.float32).requires_grad_(True)
    p.grad = ember.tensor(grad, dtype=ember.float32)
    return p


def test_scale_and_unscale_math():
    scaler = ember.amp.GradScaler("cpu", init_scale=1024.0)
    assert scaler.is_enabled() and scaler.get_scale() == 1024.0
    loss = ember.tensor(0.5)
    assert scaler.scale(loss).item() == 512.0
    a, (b, c) = scaler.scale([ember.tensor(1.0), (ember.tensor(2.0), ember.tensor(3.0))])
    assert (a.item(), b.item(), c.item()) == (1024.0, 2048.0, 3072.0)
    p = param_with_grad([1.0, 2.0], [2048.0, -512.0])
    opt = ember.optim.SGD([p], lr=0.1)
    scaler.unscale_(opt)
    assert to_numpy(p.grad).tolist() == [2.0, -0.5]
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)  # uses the unscaled grads, does not unscale twice
    assert_close(p, [0.8, 2.05])
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0 and scaler._get_growth_tracker() == 1


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_step_skipped_on_non_finite_and_scale_backs_off(bad):
    scaler = ember.amp.GradScaler("cpu", init_scale=256.0, backoff_factor=0.25)
    p = param_with_grad([1.0, 2.0, 3.0], [1.0, bad, 1.0])
    q = param_with_grad([5.0], [256.0])
    opt = ember.optim.SGD([p, q], lr=1.0)
    scaler.scale(ember.tensor(1.0))
    assert scaler.step(opt) is None
    assert to_numpy(p).tolist() == [1.0, 2.0, 3.0] and to_numpy(q).tolist() == [5.0]
    scaler.update()
    assert scaler.get_scale() == 64.0 and scaler._get_growth_tracker() == 0


def test_growth_after_growth_interval():
    scaler = ember.amp.GradScaler("cpu", init_scale=4.0, growth_factor=3.0, growth_interval=3)
    p = param_with_grad([0.0], [4.0])
    opt = ember.optim.SGD([p], lr=1.0)
    scales = []
    for _ in range(7):
        scaler.scale(ember.tensor(1.0))
        p.grad = ember.tensor([4.0])
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    assert scales == [4.0, 4.0, 12.0, 12.0, 12.0, 36.0, 36.0]
    scaler.update(new_scale=2.0)
    assert scaler.get_scale() == 2.0
    scaler.update(new_scale=ember.tensor(8.0))
    assert scaler.get_scale() == 8.0


def test_update_needs_checks_and_scale():
    scaler = ember.amp.GradScaler("cpu")
    with pytest.raises(RuntimeError, match="_scale is None"):
        scaler.update()
    scaler.scale(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="No inf checks"):
        scaler.update()
    with pytest.raises(ValueError, match="growth factor"):
        ember.amp.GradScaler("cpu", growth_factor=1.0)


def test_fp16_grads_are_refused():
    scaler = ember.amp.GradScaler("cpu")
    p = ember.zeros(2, dtype=ember.float16).requires_grad_(True)
    p.grad = ember.ones(2, dtype=ember.float16)
    scaler.scale(ember.tensor(1.0))
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.unscale_(ember.optim.SGD([p], lr=1.0))


def test_state_dict_round_trip_and_pickle():
    scaler = ember.amp.GradScaler("cpu", init_scale=32.0, growth_factor=4.0, backoff_factor=0.125, growth_interval=5)
    p = param_with_grad([0.0], [1.0])
    opt = ember.optim.SGD([p], lr=0.1)
    for _ in range(2):
        scaler.scale(ember.tensor(1.0))
        scaler.step(opt)
        scaler.update()
    sd = scaler.state_dict()
    assert sd == {"scale": 32.0, "growth_factor": 4.0, "backoff_factor": 0.125, "growth_interval": 5,
                  "_growth_tracker": 2}
    other = ember.amp.GradScaler("cpu")
    other.load_state_dict(sd)
    assert other.state_dict() == sd
    for _ in range(3):  # the tracker continues: grows at 5 clean steps in all
        other.scale(ember.tensor(1.0))
        p.grad = ember.tensor([1.0])
        other.step(opt)
        other.update()
    assert other.get_scale() == 128.0
    clone = pickle.loads(pickle.dumps(other))
    assert clone.state_dict() == other.state_dict()
    disabled = ember.amp.GradScaler("cpu", enabled=False)
    assert disabled.state_dict() == {} and disabled.get_scale() == 1.0
    with pytest.raises(RuntimeError, match="state dict is empty"):
        other.load_state_dict({})


def test_disabled_scaler_is_transparent():
    scaler = ember.amp.GradScaler("cpu", enabled=False)
    loss = ember.tensor(3.0)
    assert scaler.scale(loss) is loss
    p = param_with_grad([1.0], [1.0])
    scaler.step(ember.optim.SGD([p], lr=1.0))
    assert to_numpy(p).tolist() == [0.0]
    scaler.update()


@pytest.mark.skipif(CUDA_AVAILABLE, reason="checks the behaviour without a GPU")
def test_cuda_scaler_without_gpu_disables():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = ember.amp.GradScaler()
    assert not scaler.is_enabled()


def test_cuda_amp_aliases_are_deprecated():
    import ember.cuda.amp as cuda_amp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # CUDA unavailable here
        with pytest.warns(FutureWarning, match="ember.amp.GradScaler\\('cuda'"):
            s = cuda_amp.GradScaler()
        with pytest.warns(FutureWarning, match="ember.amp.autocast\\('cuda'"):
            a = cuda_amp.autocast()
    assert isinstance(s, ember.amp.GradScaler) and isinstance(a, ember.autocast)
    assert a.device == "cuda" and a.fast_dtype == ember.float16


# ---- the two C++ ops --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16, ember.float16])
def test_unscale_op_dtypes_and_layouts(dtype):
    base = random_array((4, 6)) * 64
    g1 = ember.tensor(base, dtype=dtype)
    g2 = ember.tensor(base.T.copy(), dtype=dtype).t()  # non-contiguous
    g3 = ember.tensor(base, dtype=dtype)[:, ::2]        # strided slice of a bigger tensor
    found = ember.zeros((1,))
    _C._amp_foreach_non_finite_check_and_unscale_([g1, g2, g3], found, ember.full((1,), 0.25))
    assert found.item() == 0.0
    want = to_numpy(ember.tensor(base, dtype=dtype).float()) * 0.25
    tol = 1e-2 if dtype in (ember.bfloat16, ember.float16) else 1e-6
    assert_close(g1.float(), want, rtol=tol)
    assert_close(g2.float(), want, rtol=tol)
    assert_close(g3.float(), want[:, ::2], rtol=tol)


def test_unscale_op_flags_and_keeps_flag():
    g = ember.tensor([1.0, float("nan"), 4.0])
    found = ember.zeros(())
    _C._amp_foreach_non_finite_check_and_unscale_([g], found, ember.tensor(0.5))
    assert found.item() == 1.0
    assert to_numpy(g)[[0, 2]].tolist() == [0.5, 2.0]  # unscaled all the same
    _C._amp_foreach_non_finite_check_and_unscale_([ember.ones(2)], found, ember.tensor(0.5))
    assert found.item() == 1.0  # never reset here
    _C._amp_foreach_non_finite_check_and_unscale_([], found, ember.tensor(0.5))


def test_update_scale_op():
    scale, tracker = ember.tensor(8.0), ember.zeros((), dtype=ember.int32)
    ok, bad = ember.tensor(0.0), ember.tensor(1.0)
    _C._amp_update_scale_(scale, tracker, ok, 2.0, 0.5, 2)
    assert (scale.item(), tracker.item()) == (8.0, 1)
    out = _C._amp_update_scale_(scale, tracker, ok, 2.0, 0.5, 2)
    assert out is scale or out.item() == 16.0
    assert (scale.item(), tracker.item()) == (16.0, 0)
    _C._amp_update_scale_(scale, tracker, bad, 2.0, 0.5, 2)
    assert (scale.item(), tracker.item()) == (8.0, 0)
    huge = ember.tensor(3e38)
    _C._amp_update_scale_(huge, tracker, ok, 2.0, 0.5, 1)  # growing would overflow: kept
    assert huge.item() == pytest.approx(3e38) and tracker.item() == 0


def test_amp_op_errors_name_the_op():
    with pytest.raises(RuntimeError, match="_amp_update_scale_: growth_tracker must be a int32"):
        _C._amp_update_scale_(ember.tensor(1.0), ember.tensor(0.0), ember.tensor(0.0), 2.0, 0.5, 1)
    with pytest.raises(RuntimeError, match="_amp_foreach_non_finite_check_and_unscale_: found_inf must be a "
                                           "one-element tensor"):
        _C._amp_foreach_non_finite_check_and_unscale_([ember.ones(2)], ember.zeros(2), ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="gradients must be floating point"):
        _C._amp_foreach_non_finite_check_and_unscale_([ember.ones(2, dtype=ember.int64)], ember.zeros(()),
                                                      ember.tensor(1.0))


# ---- against torch ----------------------------------------------------------------------------

@needs_torch
def test_cpu_autocast_matches_torch():
    x, w, b = random_array((4, 6)), random_array((3, 6)), random_array((3,))
    img, k = random_array((1, 2, 5, 5)), random_array((3, 2, 3, 3))
    target = np.array([0, 2, 1, 1])
    with ember.autocast("cpu"):
        e_lin = F.linear(ember.tensor(x), ember.tensor(w), ember.tensor(b))
        e_conv = F.conv2d(ember.tensor(img), ember.tensor(k), padding=1)
        e_ce = F.cross_entropy(e_lin, ember.tensor(target))
        e_sm = ember.softmax(e_lin, -1)
    with torch.autocast("cpu"):
        t_lin = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b))
        t_conv = torch.nn.functional.conv2d(torch.tensor(img), torch.tensor(k), padding=1)
        t_ce = torch.nn.functional.cross_entropy(t_lin, torch.tensor(target))
        t_sm = torch.softmax(t_lin, -1)
    for e, t in ((e_lin, t_lin), (e_conv, t_conv), (e_ce, t_ce), (e_sm, t_sm)):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert_close(f32(e), t.float().numpy(), rtol=2e-2, atol=2e-2)


@needs_torch
def test_grad_scaler_matches_torch():
    grads = [[1.0, 2.0], [float("inf"), 1.0], [3.0, 4.0], [1.0, 1.0], [2.0, 2.0], [1.0, 0.5]]
    e_s = ember.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    t_s = torch.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    e_p = ember.zeros(2).requires_grad_(True)
    t_p = torch.zeros(2, requires_grad=True)
    e_opt, t_opt = ember.optim.SGD([e_p], lr=0.1), torch.optim.SGD([t_p], lr=0.1)
    for g in grads:
        e_s.scale(ember.tensor(1.0))
        t_s.scale(torch.tensor(1.0))
        e_p.grad = ember.tensor(g) * e_s.get_scale()
        t_p.grad = torch.tensor(g) * t_s.get_scale()
        e_s.step(e_opt)
        t_s.step(t_opt)
        e_s.update()
        t_s.update()
        assert e_s.get_scale() == t_s.get_scale()
        assert_close(e_p, t_p.detach().numpy(), rtol=1e-6)
    assert e_s.state_dict() == t_s.state_dict()


# ---- CUDA (skipped without a GPU) -------------------------------------------------------------

@needs_gpu
def test_cuda_autocast_lists():
    a, b = rand(8, 16, device="cuda"), rand(16, 4, device="cuda")
    with ember.autocast("cuda"):
        assert ember.get_autocast_dtype("cuda") == ember.float16
        y = a @ b
        assert y.dtype == ember.float16
        assert ember.softmax(y, -1).dtype == ember.float32  # float32 list on CUDA
        assert y.exp().dtype == ember.float32
        assert y.sum().dtype == ember.float32
        assert F.layer_norm(y, (4,)).dtype == ember.float32
        assert F.cross_entropy(y, ember.tensor([0, 1, 2, 3, 0, 1, 2, 3], device="cuda")).dtype == ember.float32
        with pytest.raises(RuntimeError, match="binary_cross_entropy: unsafe to autocast"):
            F.binary_cross_entropy(y.sigmoid(), y.sigmoid())
        # the CPU is not affected by the CUDA region
        assert (a.cpu() @ b.cpu()).dtype == ember.float32
    ref = a.cpu().half() @ b.cpu().half()
    assert_close(f32(y), f32(ref), rtol=1e-2, atol=1e-2)


@needs_gpu
def test_cuda_autocast_grads_and_scaler_match_cpu():
    w_cpu = rand(4, 6, requires_grad=True)
    w = w_cpu.detach().cuda().requires_grad_(True)
    x = rand(3, 6)
    scaler = ember.amp.GradScaler("cuda", init_scale=128.0)
    opt = ember.optim.SGD([w], lr=0.1)
    with ember.autocast("cuda"):
        loss = F.mse_loss(F.linear(x.cuda(), w), ember.zeros(3, 4, device="cuda"))
    assert loss.dtype == ember.float32
    scaler.scale(loss).backward()
    assert w.grad.dtype == ember.float32 and w.grad.device.type == "cuda"
    scaler.unscale_(opt)
    ref = F.mse_loss(F.linear(x.half().float(), w_cpu.half().float()), ember.zeros(3, 4))
    ref.backward()
    assert_close(w.grad.cpu(), to_numpy(w_cpu.grad), rtol=2e-2, atol=2e-3)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 128.0
    # an inf gradient on the GPU is found and the step skipped
    before = to_numpy(w.detach().cpu())
    scaler.scale(loss.detach())
    w.grad = ember.full((4, 6), float("inf"), device="cuda")
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 64.0
    np.testing.assert_array_equal(to_numpy(w.detach().cpu()), before)


@needs_gpu
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16, ember.float16])
def test_cuda_unscale_kernel_matches_cpu(dtype):
    base = random_array((64, 33)) * 64
    cpu_grads = [ember.tensor(base, dtype=dtype), ember.tensor(base.T.copy(), dtype=dtype).t()]
    gpu_grads = [g.cuda() for g in cpu_grads]
    found_cpu, found_gpu = ember.zeros((1,)), ember.zeros((1,)).cuda()
    _C._amp_foreach_non_finite_check_and_unscale_(cpu_grads, found_cpu, ember.full((1,), 0.125))
    _C._amp_foreach_non_finite_check_and_unscale_(gpu_grads, found_gpu, ember.full((1,), 0.125).cuda())
    assert found_gpu.item() == 0.0
    for c, g in zip(cpu_grads, gpu_grads):
        np.testing.assert_array_equal(f32(g.cpu()), f32(c))
    bad = base.copy()
    bad[40, 7] = np.nan
    g = ember.tensor(bad, dtype=dtype).cuda()
    _C._amp_foreach_non_finite_check_and_unscale_([g], found_gpu, ember.full((1,), 0.5).cuda())
    assert found_gpu.item() == 1.0
    assert_close(f32(g.cpu())[0], to_numpy(ember.tensor(bad, dtype=dtype).float())[0] * 0.5, rtol=1e-2)


@needs_gpu
def test_cuda_update_scale_kernel_matches_cpu():
    states = {}
    for dev in ("cpu", "cuda"):
        scale = ember.tensor(8.0).to(dev)
        tracker = ember.zeros((), dtype=ember.int32).to(dev)
        seen = []
        for found in (0.0, 0.0, 1.0, 0.0, 0.0, 0.0):
            _C._amp_update_scale_(scale, tracker, ember.tensor(found).to(dev), 2.0, 0.5, 2)
            seen.append((scale.item(), tracker.item()))
        states[dev] = seen
    assert states["cuda"] == states["cpu"]
    assert states["cpu"] == [(8.0, 1), (16.0, 0), (8.0, 0), (8.0, 1), (16.0, 0), (16.0, 1)]
