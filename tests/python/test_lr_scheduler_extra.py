"""ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR and ReduceLROnPlateau: against closed
forms and hand-worked sequences (always), and against torch's schedulers (when torch is importable)."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.optim import lr_scheduler as sched
from harness import torch

N = 30
BASES = (0.1, 0.02)
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")


def make_optimizer(cls=ember.optim.SGD, lrs=BASES, **kwargs):
    groups = [{"params": [ember.tensor([1.0], dtype=ember.float64).requires_grad_(True)], "lr": lr} for lr in lrs]
    return cls(groups, **kwargs)


def make_torch_optimizer(cls_name="SGD", lrs=BASES, **kwargs):
    groups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
    return getattr(torch.optim, cls_name)(groups, **kwargs)


def lr_sequence(scheduler, steps=N, epochs=None, key="lr"):
    """Each group's `key` before each of `steps` scheduler steps (or after each step(epoch))."""
    out = []
    opt = scheduler.optimizer
    if epochs is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in epochs:
                scheduler.step(e)
                out.append([g[key] for g in opt.param_groups])
        return np.array(out)
    for _ in range(steps):
        out.append([g[key] if key != "beta1" else g["betas"][0] for g in opt.param_groups])
        assert list(scheduler.get_last_lr()) == [g["lr"] for g in opt.param_groups]
        opt.step()
        scheduler.step()
    return np.array(out)


def closed_form(fn, steps=N, bases=BASES):
    return np.array([[fn(b, t) for b in bases] for t in range(steps)])


def warm_restarts(b, t, T_0, T_mult, eta_min=0.0):
    T_i, start = T_0, 0
    while t >= start + T_i:
        start += T_i
        T_i *= T_mult
    return eta_min + (b - eta_min) * (1 + math.cos(math.pi * (t - start) / T_i)) / 2


def triangle(t, step_up, step_down):
    """0 at the start of each cycle, 1 after step_up steps, back to 0 after step_down more."""
    x = t % (step_up + step_down)
    return x / step_up if x <= step_up else 1 - (x - step_up) / step_down


CLOSED = [
    ("ConstantLR", lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=4),
     lambda b, t: b * (0.25 if t < 4 else 1.0)),
    ("PolynomialLR", lambda m, o: m.PolynomialLR(o, total_iters=12, power=2.0),
     lambda b, t: b * (1 - min(t, 12) / 12) ** 2),
    ("PolynomialLR-linear", lambda m, o: m.PolynomialLR(o, total_iters=7),
     lambda b, t: b * (1 - min(t, 7) / 7)),
    ("CosineAnnealingWarmRestarts", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5),
     lambda b, t: warm_restarts(b, t, 5, 1)),
    ("CosineAnnealingWarmRestarts-Tmult", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                                        eta_min=0.001),
     lambda b, t: warm_restarts(b, t, 3, 2, 0.001)),
    ("CyclicLR-triangular", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
     lambda b, t: 0.01 + 0.09 * triangle(t, 4, 4)),
    ("CyclicLR-triangular2-asym", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                          step_size_down=5, mode="triangular2"),
     lambda b, t: 0.01 + 0.09 * triangle(t, 3, 5) / 2 ** (t // 8)),
    ("CyclicLR-exp_range", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range",
                                                   gamma=0.9),
     lambda b, t: 0.01 + 0.09 * triangle(t, 5, 5) * 0.9 ** t),
]


@pytest.mark.parametrize("name,make,form", CLOSED, ids=[c[0] for c in CLOSED])
def test_closed_forms(name, make, form):
    opt = make_optimizer(momentum=0.9)
    got = lr_sequence(make(sched, opt))
    np.testing.assert_allclose(got, closed_form(form), rtol=1e-9, atol=1e-15)


def test_step_with_epoch_closed_forms():
    s = sched.PolynomialLR(make_optimizer(), total_iters=10, power=0.5)
    got = lr_sequence(s, epochs=[3, 8, 1, 12])
    np.testing.assert_allclose(got, [[b * (1 - min(e, 10) / 10) ** 0.5 for b in BASES] for e in (3, 8, 1, 12)],
                               rtol=1e-12)


def test_warm_restarts_fractional_epochs():
    s = sched.CosineAnnealingWarmRestarts(make_optimizer(), T_0=2, T_mult=2, eta_min=0.01)
    epochs = [0.5, 1.75, 2.0, 3.5, 5.9, 6.0, 13.25, 0.25]
    got = lr_sequence(s, epochs=epochs)
    np.testing.assert_allclose(got, [[warm_restarts_fractional(b, e, 2, 2, 0.01) for b in BASES] for e in epochs],
                               rtol=1e-12)
    assert s.last_epoch == 0  # floor of the last epoch
    s = sched.CosineAnnealingWarmRestarts(make_optimizer(), T_0=4)
    got = lr_sequence(s, epochs=[4.5, 9.0, 10.5])
    np.testing.assert_allclose(got, [[warm_restarts_fractional(b, e, 4, 1) for b in BASES] for e in (4.5, 9, 10.5)],
                               rtol=1e-12)


def warm_restarts_fractional(b, e, T_0, T_mult, eta_min=0.0):
    T_i, start = T_0, 0.0
    while e >= start + T_i:
        start += T_i
        T_i *= T_mult
    return eta_min + (b - eta_min) * (1 + math.cos(math.pi * (e - start) / T_i)) / 2


def test_cyclic_momentum_and_adam_beta1():
    opt = make_optimizer(momentum=0.5, lrs=(0.1,))
    s = sched.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4, base_momentum=0.8, max_momentum=0.95)
    got = lr_sequence(s, 12, key="momentum")
    np.testing.assert_allclose(got[:, 0], [0.95 - 0.15 * triangle(t, 4, 4) for t in range(12)], rtol=1e-12)
    opt = make_optimizer(ember.optim.Adam, lrs=(0.1, 0.2), betas=(0.9, 0.99))
    s = sched.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=2)
    got = lr_sequence(s, 8, key="beta1")
    np.testing.assert_allclose(got[:, 1], [0.9 - 0.1 * triangle(t, 2, 2) for t in range(8)], rtol=1e-12)
    assert opt.param_groups[0]["betas"][1] == 0.99
    opt = make_optimizer(ember.optim.Adam, lrs=(0.1, 0.2))
    s = sched.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=2, cycle_momentum=False)
    np.testing.assert_allclose(lr_sequence(s, 8)[:, 1], [0.02 + 0.28 * triangle(t, 2, 2) for t in range(8)],
                               rtol=1e-12)


def test_cyclic_custom_scale_fn_and_errors():
    opt = make_optimizer(lrs=(0.1,))
    s = sched.CyclicLR(opt, 0.0, 1.0, step_size_up=2, scale_fn=lambda x: 1.0 / x, cycle_momentum=False)
    np.testing.assert_allclose(lr_sequence(s, 8)[:, 0], [triangle(t, 2, 2) / (t // 4 + 1) for t in range(8)],
                               rtol=1e-12)
    state = s.state_dict()
    assert "_scale_fn_custom" not in state
    s.load_state_dict(state)
    with pytest.raises(ValueError, match="mode is invalid"):
        sched.CyclicLR(make_optimizer(), 0.1, 1.0, mode="sine")
    with pytest.raises(ValueError, match="momentum"):
        sched.CyclicLR(make_optimizer(ember.optim.Adagrad), 0.1, 1.0)
    with pytest.raises(ValueError, match="base_lr"):
        sched.CyclicLR(make_optimizer(), [0.1], 1.0)


def test_reduce_on_plateau_hand_worked():
    opt = make_optimizer(lrs=(1.0,))
    s = sched.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, threshold=0.0, min_lr=0.2)
    metrics = [5, 4, 4, 4, 4, 4, 4, 3] + [3.9] * 11
    got = []
    for m in metrics:
        s.step(ember.tensor(float(m)) if m == 4 else m)
        got.append(opt.param_groups[0]["lr"])
        assert s.get_last_lr() == [got[-1]]
    expected = [1, 1, 1, 1, .5, .5, .5, .5, .5, .5, .25, .25, .25, .25, .2, .2, .2, .2, .2]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("mode,threshold_mode,metrics,expected", [
    # max, rel 0.1: 1.05 is not 10% better than 1.0; 1.2 is.
    ("max", "rel", [1.0, 1.05, 1.05, 1.2, 1.2, 1.2], [1, 1, .1, .1, .1, .01]),
    # min, abs 0.5: 9.6 is not 0.5 below 10, 9.4 is.
    ("min", "abs", [10, 9.6, 9.4, 9.4, 9.0, 8.8], [1, 1, 1, 1, .1, .1]),
])
def test_reduce_on_plateau_threshold_modes(mode, threshold_mode, metrics, expected):
    opt = make_optimizer(lrs=(1.0,))
    s = sched.ReduceLROnPlateau(opt, mode=mode, patience=1, threshold=0.1 if threshold_mode == "rel" else 0.5,
                                threshold_mode=threshold_mode)
    got = []
    for m in metrics:
        s.step(m)
        got.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_reduce_on_plateau_per_group_min_lr_eps_and_state():
    opt = make_optimizer(lrs=(1.0, 1e-8))
    s = sched.ReduceLROnPlateau(opt, patience=0, min_lr=[0.3, 0.0])
    for m in (1.0, 1.0, 1.0, 1.0):
        s.step(m)
    assert opt.param_groups[0]["lr"] == 0.3
    assert opt.param_groups[1]["lr"] == 1e-8  # the change would be below eps: kept
    state = s.state_dict()
    s2 = sched.ReduceLROnPlateau(make_optimizer(lrs=(1.0, 1.0)))
    s2.load_state_dict(state)
    assert s2.best == 1.0 and s2.patience == 0 and s2.min_lrs == [0.3, 0.0]
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        sched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown"):
        sched.ReduceLROnPlateau(opt, mode="avg")
    with pytest.raises(ValueError, match="threshold mode"):
        sched.ReduceLROnPlateau(opt, threshold_mode="pct")
    with pytest.raises(ValueError, match="expected 2 min_lrs"):
        sched.ReduceLROnPlateau(opt, min_lr=[0.1])


def test_constructor_errors():
    with pytest.raises(ValueError, match="T_0"):
        sched.CosineAnnealingWarmRestarts(make_optimizer(), T_0=0)
    with pytest.raises(ValueError, match="T_mult"):
        sched.CosineAnnealingWarmRestarts(make_optimizer(), T_0=2, T_mult=1.5)
    with pytest.raises(ValueError, match="non-negative epoch"):
        sched.CosineAnnealingWarmRestarts(make_optimizer(), T_0=2).step(-1)
    with pytest.raises(ValueError, match="between 0 and 1"):
        sched.ConstantLR(make_optimizer(), factor=2.0)


# ---- torch parity -----------------------------------------------------------------------------------

TORCH_CASES = [
    ("ConstantLR", dict(factor=0.5, total_iters=3), {}),
    ("PolynomialLR", dict(total_iters=9, power=1.5), {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=4, T_mult=2, eta_min=1e-3), {}),
    ("CosineAnnealingWarmRestarts", dict(T_0=3), {}),
    ("CyclicLR", dict(base_lr=0.01, max_lr=[0.1, 0.05], step_size_up=3, step_size_down=4, mode="triangular2"),
     dict(momentum=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.2, step_size_up=2, mode="exp_range", gamma=0.95,
                      base_momentum=0.7, max_momentum=0.85), dict(momentum=0.9)),
]


@needs_torch
@pytest.mark.parametrize("name,kwargs,opt_kwargs", TORCH_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(TORCH_CASES)])
def test_matches_torch(name, kwargs, opt_kwargs):
    opt = make_optimizer(**opt_kwargs)
    topt = make_torch_optimizer(**opt_kwargs)
    got = lr_sequence(getattr(sched, name)(opt, **kwargs))
    ts = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    ref = []
    for _ in range(N):
        ref.append([g["lr"] for g in topt.param_groups])
        topt.step()
        ts.step()
    np.testing.assert_allclose(got, np.array(ref), rtol=1e-12, atol=1e-15)
    if "momentum" in opt_kwargs:
        assert [g["momentum"] for g in opt.param_groups] == pytest.approx([g["momentum"] for g in topt.param_groups])


@needs_torch
def test_warm_restarts_fractional_matches_torch():
    epochs = [0.0, 0.5, 2.75, 3.0, 7.2, 14.99, 15.0, 1.1, 40.5]
    for T_mult in (1, 2, 3):
        s = sched.CosineAnnealingWarmRestarts(make_optimizer(), T_0=3, T_mult=T_mult, eta_min=0.002)
        ts = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(make_torch_optimizer(), T_0=3, T_mult=T_mult,
                                                                  eta_min=0.002)
        got = lr_sequence(s, epochs=epochs)
        ref = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in epochs:
                ts.step(e)
                ref.append([g["lr"] for g in ts.optimizer.param_groups])
        np.testing.assert_allclose(got, ref, rtol=1e-12)
        assert s.T_i == ts.T_i and s.last_epoch == ts.last_epoch


@needs_torch
@pytest.mark.parametrize("kwargs", [dict(), dict(mode="max", factor=0.5, patience=2, cooldown=2),
                                    dict(threshold_mode="abs", threshold=0.05, patience=1, min_lr=[0.05, 0.001]),
                                    dict(mode="max", threshold_mode="abs", threshold=0.1, patience=0, eps=1e-3)])
def test_reduce_on_plateau_matches_torch(kwargs):
    rng = np.random.default_rng(3)
    metrics = np.cumsum(rng.normal(0, 0.1, 60)) + np.linspace(1, 0, 60) * rng.integers(0, 2, 60)
    s = sched.ReduceLROnPlateau(make_optimizer(), **kwargs)
    ts = torch.optim.lr_scheduler.ReduceLROnPlateau(make_torch_optimizer(), **kwargs)
    got, ref = [], []
    for m in metrics:
        s.step(float(m))
        ts.step(float(m))
        got.append([g["lr"] for g in s.optimizer.param_groups])
        ref.append([g["lr"] for g in ts.optimizer.param_groups])
        assert s.num_bad_epochs == ts.num_bad_epochs and s.cooldown_counter == ts.cooldown_counter
    assert len({tuple(r) for r in ref}) > 1, "the metric sequence should make torch reduce the lr"
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    assert s.get_last_lr() == ts.get_last_lr()
