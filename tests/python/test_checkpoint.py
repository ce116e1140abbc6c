"""ember.utils.checkpoint: the same gradients as running the block normally,
with the block's activations dropped after forward."""
import gc
import weakref

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import Function
from ember.utils.checkpoint import checkpoint, checkpoint_sequential

CASES = []  # no OpCase rows


def block():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Dropout(0.4), nn.Linear(12, 6))


def grads_of(module, x, run, seed=7):
    module.zero_grad()
    if x.requires_grad:
        x.grad = None
    ember.manual_seed(seed)
    out = run(module, x)
    (out * out).sum().backward()
    got = [p.grad.detach().numpy().copy() for p in module.parameters()]
    return out.detach().numpy(), got, None if x.grad is None else x.grad.numpy().copy()


def assert_same(a, b):
    out_a, params_a, x_a = a
    out_b, params_b, x_b = b
    np.testing.assert_allclose(out_a, out_b, rtol=1e-6, atol=1e-6)
    for ga, gb in zip(params_a, params_b):
        np.testing.assert_allclose(ga, gb, rtol=1e-5, atol=1e-6)
    assert (x_a is None) == (x_b is None)
    if x_a is not None:
        np.testing.assert_allclose(x_a, x_b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("input_requires_grad", [False, True])
def test_same_gradients_as_without_checkpointing(use_reentrant, input_requires_grad):
    m = block()
    x = ember.randn(5, 6, requires_grad=input_requires_grad)
    plain = grads_of(m, x, lambda mod, t: mod(t))
    # The dropout mask of the rerun must be the forward's: the RNG state is restored.
    ckpt = grads_of(m, x, lambda mod, t: checkpoint(mod, t, use_reentrant=use_reentrant))
    assert_same(plain, ckpt)


def test_rerun_uses_the_forward_rng_state_and_leaves_the_current_one():
    m = block()
    x = ember.randn(5, 6)
    ember.manual_seed(3)
    out = checkpoint(m, x, use_reentrant=False)
    after_forward = ember.rand(4).numpy()
    ember.manual_seed(3)
    out = checkpoint(m, x, use_reentrant=False)
    state = ember.get_rng_state()
    out.sum().backward()
    assert np.array_equal(ember.get_rng_state().numpy(), state.numpy())
    np.testing.assert_array_equal(ember.rand(4).numpy(), after_forward)


def test_tuple_outputs_non_tensor_arguments_and_keywords():
    lin = nn.Linear(4, 4)
    x = ember.randn(3, 4, requires_grad=True)

    def fn(t, scale, shift=None):
        h = lin(t) * scale
        return h.relu(), h.sigmoid() + shift, "tag"

    def loss(outs):
        return (outs[0] * 2 + outs[1] * 3).sum()

    loss(fn(x, 0.5, shift=1.0)).backward()
    ref_x, ref_w = x.grad.numpy().copy(), lin.weight.grad.numpy().copy()
    x.grad, lin.weight.grad, lin.bias.grad = None, None, None
    outs = checkpoint(fn, x, 0.5, shift=1.0, use_reentrant=False)
    assert isinstance(outs, tuple) and outs[2] == "tag"
    assert outs[0].grad_fn.name() == "CheckpointFunctionBackward"
    loss(outs).backward()
    np.testing.assert_allclose(x.grad.numpy(), ref_x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref_w, rtol=1e-5, atol=1e-6)


def test_activations_are_not_kept_after_forward():
    alive = []

    class Tracked(Function):
        """Saves its input; its context lives exactly as long as the graph node."""

        @staticmethod
        def forward(ctx, t):
            alive.append(weakref.ref(ctx))
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 2 * t * g

    lin = nn.Linear(4, 4)
    x = ember.randn(2, 4, requires_grad=True)
    out = checkpoint(lambda t: Tracked.apply(lin(t)), x, use_reentrant=False)
    gc.collect()
    assert alive[0]() is None  # the forward's graph is gone
    plain = Tracked.apply(lin(x))
    assert alive[1]() is not None  # without checkpointing it stays until backward
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ember.autograd.grad(plain.sum(), x)[0].numpy(), rtol=1e-6)


def test_double_backward_through_a_checkpoint():
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    fn = lambda t: (t * t * t).sum()  # noqa: E731
    (g,) = ember.autograd.grad(checkpoint(fn, x, use_reentrant=False), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * x.detach().numpy())


def test_checkpoint_sequential_matches_sequential():
    ember.manual_seed(1)
    seq = nn.Sequential(*[nn.Sequential(nn.Linear(5, 5), nn.GELU()) for _ in range(5)])
    x = ember.randn(4, 5, requires_grad=True)
    plain = grads_of(seq, x, lambda mod, t: mod(t))
    ckpt = grads_of(seq, x, lambda mod, t: checkpoint_sequential(mod, 3, t, use_reentrant=False))
    assert_same(plain, ckpt)


def test_errors_and_no_grad():
    lin = nn.Linear(3, 3)
    outer = lin(ember.randn(2, 3))  # requires grad, computed before the call
    with pytest.raises(RuntimeError, match="captured from an enclosing scope"):
        checkpoint(lambda t: t + outer, ember.randn(2, 3), use_reentrant=False)
    x = ember.randn(2, 3, requires_grad=True)
    h = x * 1.0
    out = checkpoint(lin, h, use_reentrant=False)
    h.add_(1.0)  # the argument changed before backward could rerun the block
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    with ember.no_grad():
        assert checkpoint(lin, x, use_reentrant=False).grad_fn is None
    with pytest.raises(ValueError, match="segments must be at least 1"):
        checkpoint_sequential(nn.Sequential(lin), 0, x)


def test_cuda_rng_state_api_without_a_gpu_too():
    ember.cuda.manual_seed_all(5)
    state = ember.cuda.get_rng_state()
    assert state.dtype == ember.uint8 and state.device.type == "cpu" and state.numel() == 16
    ember.cuda.manual_seed_all(6)
    assert not np.array_equal(ember.cuda.get_rng_state().numpy(), state.numpy())
    ember.cuda.set_rng_state(state)
    np.testing.assert_array_equal(ember.cuda.get_rng_state("cuda:0").numpy(), state.numpy())
    assert ember.cuda.initial_seed() == 5
    assert len(ember.cuda.get_rng_state_all()) >= 1


def test_rerun_under_the_forward_autocast_settings():
    lin = nn.Linear(8, 8)
    x = ember.randn(4, 8, requires_grad=True)
    dtypes = []

    def fn(t):
        out = lin(t)
        dtypes.append(out.dtype)
        return out

    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = checkpoint(fn, x, use_reentrant=False)
    out.float().sum().backward()  # outside autocast: the rerun must still be in bfloat16
    assert dtypes == [ember.bfloat16, ember.bfloat16]
    assert lin.weight.grad.dtype == ember.float32
