"""The fused CUDA optimizer kernels (cuda/optim.cu) against the CPU kernels:
RMSprop and Adagrad with every combination of their options, in float32 and
float64 (SGD and Adam/AdamW are covered in test_cuda_nn.py).

Both backends start from the same parameters, get the same gradients for a
few steps, and must end with the same parameters and optimizer state up to
float rounding. Every test needs a CUDA GPU and skips, saying why, without one.
"""
import itertools

import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

# A large parameter spans several 65536-element chunks of one launch; the
# small ones share it; the transposed one is updated through a work copy.
SHAPES = [(300, 500), (7,), (3, 4)]
TOL = {ember.float32: (2e-5, 2e-5), ember.float64: (1e-12, 1e-12)}
DTYPES = [ember.float32, ember.float64]


def make(shape, seed, dtype):
    rng = np.random.default_rng(seed)
    # Values exactly representable in every dtype, so both backends start equal.
    x = np.round(rng.standard_normal(shape) * 8) / 8
    return ember.tensor(x, dtype=dtype)


def close(got, want, tol, what):
    rtol, atol = tol
    np.testing.assert_allclose(got.detach().cpu().to(ember.float64).numpy(),
                               want.detach().to(ember.float64).numpy(), rtol=rtol, atol=atol, err_msg=what)


def run_both(make_opt, dtype, state_keys, steps=4):
    cpu_params = [make(s, 60 + i, dtype).requires_grad_(True) for i, s in enumerate(SHAPES)]
    # One more parameter, non-contiguous on both sides (a transposed view's leaf).
    cpu_params.append(make((5, 6), 70, dtype).t().detach().requires_grad_(True))
    gpu_params = [p.detach().cuda().requires_grad_(True) for p in cpu_params]
    opt_cpu, opt_gpu = make_opt(cpu_params), make_opt(gpu_params)
    for step in range(steps):
        for i, (pc, pg) in enumerate(zip(cpu_params, gpu_params)):
            g = make(tuple(pc.shape), 100 * step + i, dtype)
            pc.grad, pg.grad = g, g.cuda()
        opt_cpu.step()
        opt_gpu.step()
    tol = TOL[dtype]
    for i, (pc, pg) in enumerate(zip(cpu_params, gpu_params)):
        assert pg.is_cuda and pg.dtype == dtype
        close(pg, pc, tol, f"params[{i}]")
        for key in state_keys:
            sc, sg = opt_cpu.state[pc][key], opt_gpu.state[pg][key]
            assert sg.is_cuda, key
            close(sg, sc, tol, f"state[{i}][{key!r}]")


RMSPROP_OPTIONS = list(itertools.product([0.0, 0.1], [0.0, 0.9], [False, True], [False, True]))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("weight_decay,momentum,centered,maximize", RMSPROP_OPTIONS,
                         ids=[f"wd{w}-mom{m}-centered{c}-max{x}" for w, m, c, x in RMSPROP_OPTIONS])
def test_rmsprop_matches_cpu(weight_decay, momentum, centered, maximize, dtype):
    keys = ["square_avg"] + (["momentum_buffer"] if momentum > 0 else []) + (["grad_avg"] if centered else [])
    run_both(lambda ps: ember.optim.RMSprop(ps, lr=0.01, alpha=0.9, eps=1e-6, weight_decay=weight_decay,
                                            momentum=momentum, centered=centered, maximize=maximize),
             dtype, keys)


ADAGRAD_OPTIONS = list(itertools.product([0.0, 0.1], [0.0, 0.1], [0.0, 0.5], [False, True]))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("lr_decay,weight_decay,initial_accumulator_value,maximize", ADAGRAD_OPTIONS,
                         ids=[f"decay{d}-wd{w}-init{a}-max{x}" for d, w, a, x in ADAGRAD_OPTIONS])
def test_adagrad_matches_cpu(lr_decay, weight_decay, initial_accumulator_value, maximize, dtype):
    run_both(lambda ps: ember.optim.Adagrad(ps, lr=0.1, lr_decay=lr_decay, weight_decay=weight_decay,
                                            initial_accumulator_value=initial_accumulator_value, eps=1e-8,
                                            maximize=maximize),
             dtype, ["sum"])


@pytest.mark.parametrize("make_opt", [lambda ps: ember.optim.RMSprop(ps, lr=0.01),
                                      lambda ps: ember.optim.Adagrad(ps, lr=0.1)], ids=["rmsprop", "adagrad"])
def test_steps_change_the_parameters(make_opt):
    # Guards against a kernel that never runs: the GPU parameters must move.
    p = make((4, 5), 1, ember.float32).cuda().requires_grad_(True)
    before = p.detach().cpu().numpy().copy()
    opt = make_opt([p])
    p.grad = make((4, 5), 2, ember.float32).cuda()
    opt.step()
    assert not np.allclose(p.detach().cpu().numpy(), before)


@pytest.mark.parametrize("make_opt", [lambda ps: ember.optim.RMSprop(ps, lr=0.01),
                                      lambda ps: ember.optim.Adagrad(ps, lr=0.1)], ids=["rmsprop", "adagrad"])
def test_mixed_devices_are_refused(make_opt):
    a = ember.zeros(2, requires_grad=True)
    b = ember.zeros(2).cuda().requires_grad_(True)
    opt = make_opt([a, b])
    a.grad, b.grad = ember.ones(2), ember.ones(2).cuda()
    with pytest.raises(NotImplementedError, match="separate optimizers"):
        opt.step()


# The optimizers written with ember's tensor ops (python/ember/optim/): the
# same update on GPU tensors as on the CPU.
TENSOR_OP_OPTIMIZERS = [
    (lambda ps: ember.optim.Adadelta(ps, lr=0.5, weight_decay=0.1), ["square_avg", "acc_delta"]),
    (lambda ps: ember.optim.Adamax(ps, lr=0.05, weight_decay=0.1), ["exp_avg", "exp_inf"]),
    (lambda ps: ember.optim.NAdam(ps, lr=0.05, weight_decay=0.1), ["exp_avg", "exp_avg_sq"]),
    (lambda ps: ember.optim.RAdam(ps, lr=0.05, decoupled_weight_decay=True, weight_decay=0.1),
     ["exp_avg", "exp_avg_sq"]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("make_opt,state_keys", TENSOR_OP_OPTIMIZERS, ids=["Adadelta", "Adamax", "NAdam", "RAdam"])
def test_tensor_op_optimizers_match_cpu(make_opt, state_keys, dtype):
    run_both(make_opt, dtype, state_keys, steps=8)  # RAdam rectifies from step 6
