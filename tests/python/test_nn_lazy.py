"""Lazy modules: UninitializedParameter/Buffer, materialization on the first forward
(the module becomes its regular class with torch's initialization), loading a
state dict into a lazy module, and training after a dry run."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from harness import torch


def test_uninitialized_parameter_and_buffer():
    p = nn.UninitializedParameter()
    assert isinstance(p, nn.Parameter) and p.requires_grad and repr(p) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        p.shape
    p.materialize((2, 3), dtype=ember.float64)
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == ember.float64 and p.requires_grad
    b = nn.UninitializedBuffer()
    assert not b.requires_grad
    b.materialize(4)
    assert type(b) is ember.Tensor and tuple(b.shape) == (4,)
    from ember.nn.parameter import UninitializedParameter
    assert UninitializedParameter is nn.UninitializedParameter


@pytest.mark.parametrize("make, x, regular, weight_shape", [
    (lambda: nn.LazyLinear(4), ember.randn(2, 5, 3), nn.Linear, (4, 3)),
    (lambda: nn.LazyConv1d(4, 3, padding=1), ember.randn(2, 6, 7), nn.Conv1d, (4, 6, 3)),
    (lambda: nn.LazyConv2d(4, 3, groups=2), ember.randn(1, 6, 5, 5), nn.Conv2d, (4, 3, 3, 3)),
    (lambda: nn.LazyConv2d(4, 3), ember.randn(6, 5, 5), nn.Conv2d, (4, 6, 3, 3)),  # unbatched
    (lambda: nn.LazyConvTranspose1d(4, 3, stride=2), ember.randn(2, 6, 5), nn.ConvTranspose1d, (6, 4, 3)),
    (lambda: nn.LazyConvTranspose2d(4, 2, groups=2), ember.randn(1, 6, 3, 3), nn.ConvTranspose2d, (6, 2, 2, 2)),
    (lambda: nn.LazyConv3d(4, 3, padding=1), ember.randn(1, 2, 4, 5, 3), nn.Conv3d, (4, 2, 3, 3, 3)),
    (lambda: nn.LazyConvTranspose3d(4, 2, stride=2), ember.randn(2, 3, 2, 3, 2), nn.ConvTranspose3d, (3, 4, 2, 2, 2)),
])
def test_first_forward_materializes_and_matches_the_regular_module(make, x, regular, weight_shape):
    m = make()
    assert isinstance(m.weight, nn.UninitializedParameter) and m.has_uninitialized_params()
    weight = m.weight
    out = m(x)
    assert type(m) is regular and m.weight is weight  # same object, materialized in place
    assert tuple(m.weight.shape) == weight_shape and type(m.weight) is nn.Parameter
    # the regular module's forward with the same weights gives the same output
    np.testing.assert_allclose(out.detach().numpy(), regular.forward(m, x).detach().numpy(), rtol=1e-6)
    # torch's default init: weights bounded by 1/sqrt(fan_in) (kaiming_uniform a=sqrt(5)), not left as garbage
    fan_in = int(np.prod(weight_shape[1:])) if regular not in (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d) else \
        int(weight_shape[1] * np.prod(weight_shape[2:]))
    bound = 1 / np.sqrt(fan_in)
    assert np.abs(m.weight.detach().numpy()).max() <= bound + 1e-6
    assert np.abs(m.bias.detach().numpy()).max() <= bound + 1e-6
    assert not hasattr(m, "_initialize_hook")
    m(x)  # later calls are regular calls


def test_lazy_linear_matches_linear_math():
    m = nn.LazyLinear(2, bias=False)
    x = ember.tensor([[1.0, 2.0, 3.0]])
    m(x)
    assert m.bias is None and m.in_features == 3
    np.testing.assert_allclose(m(x).detach().numpy(), x.numpy() @ m.weight.detach().numpy().T, rtol=1e-6)


@pytest.mark.parametrize("make, x, regular", [
    (lambda: nn.LazyBatchNorm1d(), ember.randn(8, 3), nn.BatchNorm1d),
    (lambda: nn.LazyBatchNorm2d(momentum=0.5), ember.randn(4, 3, 2, 2), nn.BatchNorm2d),
    (lambda: nn.LazyBatchNorm3d(), ember.randn(2, 3, 2, 2, 2), nn.BatchNorm3d),
    (lambda: nn.LazyInstanceNorm1d(affine=True, track_running_stats=True), ember.randn(2, 3, 5), nn.InstanceNorm1d),
    (lambda: nn.LazyInstanceNorm2d(), ember.randn(2, 3, 4, 4), nn.InstanceNorm2d),
    (lambda: nn.LazyInstanceNorm2d(affine=False, track_running_stats=False), ember.randn(2, 3, 4, 4),
     nn.InstanceNorm2d),
])
def test_lazy_norms(make, x, regular):
    m = make()
    out = m(x)
    assert type(m) is regular and m.num_features == 3
    ref = regular(3, eps=m.eps, momentum=m.momentum, affine=m.affine, track_running_stats=m.track_running_stats)
    expected = ref(x)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    if m.affine:
        assert m.weight.tolist() == [1.0] * 3 and m.bias.tolist() == [0.0] * 3
    if m.track_running_stats:
        np.testing.assert_allclose(m.running_mean.numpy(), ref.running_mean.numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(m.running_var.numpy(), ref.running_var.numpy(), rtol=1e-5, atol=1e-7)
        assert int(m.num_batches_tracked) == int(ref.num_batches_tracked)
    else:
        assert m.running_mean is None


def test_lazy_instance_norm_defaults_are_torchs():
    m = nn.LazyInstanceNorm1d()
    assert m.affine and m.track_running_stats  # as torch's lazy instance norms, unlike InstanceNorm1d


def test_lazy_instance_norm_reads_channels_of_an_unbatched_input():
    m = nn.LazyInstanceNorm1d(affine=True)
    m(ember.randn(4, 6))  # (C, L)
    assert m.num_features == 4 and tuple(m.weight.shape) == (4,)


def test_training_after_a_dry_run():
    ember.manual_seed(0)
    model = nn.Sequential(nn.LazyConv2d(4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    x = ember.randn(8, 1, 6, 6)
    y = ember.tensor([0, 1] * 4)
    model(x)  # dry run, then the optimizer (as torch documents)
    opt = ember.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.5
    assert [type(m) for m in model] == [nn.Conv2d, nn.ReLU, nn.Flatten, nn.Linear]


def test_load_state_dict_materializes_with_the_checkpoint_shapes():
    src = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    src(ember.randn(5, 3))
    state = src.state_dict()
    lazy = nn.Sequential(nn.LazyLinear(4), nn.LazyBatchNorm1d())
    lazy.load_state_dict(state)
    assert not lazy[0].has_uninitialized_params() and not lazy[1].has_uninitialized_params()
    for key, value in state.items():
        np.testing.assert_array_equal(lazy.state_dict()[key].numpy(), value.numpy())
    x = ember.randn(2, 3)
    src.eval(), lazy.eval()
    np.testing.assert_allclose(lazy(x).detach().numpy(), src(x).detach().numpy(), rtol=1e-6)
    assert type(lazy[0]) is nn.Linear


def test_state_dict_of_an_uninitialized_module_round_trips():
    src = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    state = src.state_dict()
    assert list(state) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                           "1.num_batches_tracked"]
    assert isinstance(state["0.weight"], nn.UninitializedParameter)
    assert isinstance(state["1.running_mean"], nn.UninitializedBuffer)
    dst = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    dst.load_state_dict(state)  # strict: nothing missing or unexpected, everything still lazy
    assert dst[0].has_uninitialized_params() and dst[1].has_uninitialized_params()
    assert list(dst[0]._parameters) == ["weight", "bias"]
    dst(ember.randn(4, 2))
    assert tuple(dst[0].weight.shape) == (3, 2) and tuple(dst[1].running_var.shape) == (3,)


def test_to_dtype_before_materialization_is_kept():
    m = nn.LazyLinear(2).double()
    m(ember.randn(1, 3, dtype=ember.float64))
    assert m.weight.dtype == ember.float64


def test_lazy_buffers_stay_placeholders_through_to():
    # model.to(...) / .cuda() before the first forward moves the running
    # statistics' placeholders; they must still be materialized then.
    m = nn.LazyBatchNorm2d().double()
    placeholder = m.running_mean
    assert isinstance(placeholder, nn.UninitializedBuffer) and placeholder.dtype == ember.float64
    m(ember.randn(2, 3, 4, 4, dtype=ember.float64))
    assert m.running_mean is placeholder and m.running_mean.shape == (3,)
    assert m.running_var.dtype == ember.float64 and not isinstance(m.running_var, nn.UninitializedBuffer)


def test_bad_inputs():
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to LazyConv2d"):
        nn.LazyConv2d(2, 3)(ember.randn(5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 1, groups=2)(ember.randn(1, 3, 2, 2))
    m = nn.LazyLinear(3)
    with pytest.raises(RuntimeError, match="uninitialized"):
        m.weight.shape


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_state_dict_keys_and_types_like_torch():
    mine, theirs = nn.LazyBatchNorm2d(), torch.nn.LazyBatchNorm2d()
    mine(ember.randn(2, 3, 2, 2))
    theirs(torch.randn(2, 3, 2, 2))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert type(mine).__name__ == type(theirs).__name__ == "BatchNorm2d"
    lin, tlin = nn.LazyLinear(5), torch.nn.LazyLinear(5)
    lin(ember.randn(2, 7))
    tlin(torch.randn(2, 7))
    assert tuple(lin.weight.shape) == tuple(tlin.weight.shape) and repr(lin) == repr(tlin)
