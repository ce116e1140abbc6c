"""ember.optim.lr_scheduler against closed-form references (and torch's
schedulers when torch is importable)."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.optim import lr_scheduler as sched
from harness import torch

N = 30


def make_optimizer(cls=ember.optim.SGD, lrs=(0.1,), **kwargs):
    groups = [{"params": [ember.tensor([1.0], dtype=ember.float64).requires_grad_(True)], "lr": lr} for lr in lrs]
    return cls(groups, **kwargs)


def lr_sequence(scheduler, steps=N):
    """The lrs of every group before each of `steps` scheduler steps."""
    out = []
    for _ in range(steps):
        out.append([g["lr"] for g in scheduler.optimizer.param_groups])
        assert scheduler.get_last_lr() == out[-1]
        scheduler.optimizer.step()
        scheduler.step()
    return np.array(out)


def closed_form(fn, bases, steps=N):
    return np.array([[fn(base, t) for base in bases] for t in range(steps)])


BASES = (0.1, 0.02)

CLOSED_FORMS = [
    ("StepLR", lambda m, o: m.StepLR(o, step_size=4, gamma=0.5),
     lambda b, t: b * 0.5 ** (t // 4)),
    ("MultiStepLR", lambda m, o: m.MultiStepLR(o, milestones=[3, 7, 7, 15], gamma=0.1),
     lambda b, t: b * 0.1 ** sum(t >= m for m in [3, 7, 7, 15])),
    ("ExponentialLR", lambda m, o: m.ExponentialLR(o, gamma=0.9),
     lambda b, t: b * 0.9 ** t),
    ("CosineAnnealingLR", lambda m, o: m.CosineAnnealingLR(o, T_max=10),
     lambda b, t: b * (1 + math.cos(math.pi * t / 10)) / 2),
    ("CosineAnnealingLR-eta_min", lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
     lambda b, t: 0.001 + (b - 0.001) * (1 + math.cos(math.pi * t / 7)) / 2),
    ("LambdaLR", lambda m, o: m.LambdaLR(o, lambda t: 1 / (1 + t)),
     lambda b, t: b / (1 + t)),
    ("LinearLR", lambda m, o: m.LinearLR(o),
     lambda b, t: b * (1 / 3 + (1 - 1 / 3) * min(t, 5) / 5)),
    ("LinearLR-decay", lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=12),
     lambda b, t: b * (1.0 - 0.9 * min(t, 12) / 12)),
]


@pytest.mark.parametrize("name,make,form", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_closed_forms(name, make, form):
    opt = make_optimizer(lrs=BASES)
    got = lr_sequence(make(sched, opt))
    np.testing.assert_allclose(got, closed_form(form, BASES), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("name,make,form", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_step_with_epoch_uses_closed_form(name, make, form):
    opt = make_optimizer(lrs=BASES)
    s = make(sched, opt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in (5, 2, 9, 13):
            s.step(t)
            np.testing.assert_allclose(s.get_last_lr(), [form(b, t) for b in BASES], rtol=1e-9)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("name,make,form", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_matches_torch(name, make, form):
    ember_seq = lr_sequence(make(sched, make_optimizer(lrs=BASES)))
    params = [torch.zeros(1, requires_grad=True) for _ in BASES]
    topt = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, BASES)])
    s = make(torch.optim.lr_scheduler, topt)
    torch_seq = []
    for _ in range(N):
        torch_seq.append([g["lr"] for g in topt.param_groups])
        topt.step()
        s.step()
    np.testing.assert_allclose(ember_seq, np.array(torch_seq), rtol=1e-9)


def test_chained_schedulers_multiply():
    opt = make_optimizer(lrs=BASES)
    s1 = sched.ExponentialLR(opt, gamma=0.9)
    s2 = sched.StepLR(opt, step_size=3, gamma=0.1)
    got = []
    for _ in range(N):
        got.append([g["lr"] for g in opt.param_groups])
        opt.step()
        s1.step()
        s2.step()
    np.testing.assert_allclose(got, closed_form(lambda b, t: b * 0.9 ** t * 0.1 ** (t // 3), BASES), rtol=1e-9)


def test_lambda_per_group():
    opt = make_optimizer(lrs=BASES)
    s = sched.LambdaLR(opt, [lambda t: 0.5 ** t, lambda t: 1.0 + t])
    got = lr_sequence(s, 10)
    expected = [[0.1 * 0.5 ** t, 0.02 * (1.0 + t)] for t in range(10)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        sched.LambdaLR(opt, [lambda t: 1.0])


def one_cycle_reference(t, total, max_lr, pct_start=0.3, div=25.0, final_div=1e4, strategy="cos",
                        three_phase=False, lo_m=0.85, hi_m=0.95):
    """(lr, momentum) at step t, written from the documented schedule."""
    def anneal(a, b, pct):
        if strategy == "cos":
            return b + (a - b) / 2 * (math.cos(math.pi * pct) + 1)
        return a + (b - a) * pct
    initial = max_lr / div
    minimum = initial / final_div
    up = pct_start * total - 1
    if three_phase:
        down = 2 * pct_start * total - 2
        if t <= up:
            pct = t / up
            return anneal(initial, max_lr, pct), anneal(hi_m, lo_m, pct)
        if t <= down:
            pct = (t - up) / (down - up)
            return anneal(max_lr, initial, pct), anneal(lo_m, hi_m, pct)
        pct = (t - down) / (total - 1 - down)
        return anneal(initial, minimum, pct), hi_m
    if t <= up:
        pct = t / up
        return anneal(initial, max_lr, pct), anneal(hi_m, lo_m, pct)
    pct = (t - up) / (total - 1 - up)
    return anneal(max_lr, minimum, pct), anneal(lo_m, hi_m, pct)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_sgd_momentum(strategy, three_phase):
    total = 25
    opt = make_optimizer(lrs=(0.1,), momentum=0.9)
    s = sched.OneCycleLR(opt, max_lr=1.0, total_steps=total, anneal_strategy=strategy, three_phase=three_phase)
    for t in range(total):
        lr, momentum = one_cycle_reference(t, total, 1.0, strategy=strategy, three_phase=three_phase)
        assert opt.param_groups[0]["lr"] == pytest.approx(lr, rel=1e-9)
        assert opt.param_groups[0]["momentum"] == pytest.approx(momentum, rel=1e-9)
        opt.step()
        s.step()
    with pytest.raises(ValueError, match="Tried to step 26 times. The specified number of total steps is 25"):
        s.step()


def test_one_cycle_adam_betas_and_epochs():
    opt = make_optimizer(ember.optim.Adam, lrs=(0.1, 0.2), betas=(0.9, 0.99))
    s = sched.OneCycleLR(opt, max_lr=[0.5, 2.0], epochs=4, steps_per_epoch=6, pct_start=0.25,
                         base_momentum=0.8, max_momentum=0.9, div_factor=10.0, final_div_factor=100.0)
    assert s.total_steps == 24
    for t in range(24):
        for group, peak in zip(opt.param_groups, (0.5, 2.0)):
            lr, beta1 = one_cycle_reference(t, 24, peak, pct_start=0.25, div=10.0, final_div=100.0,
                                            lo_m=0.8, hi_m=0.9)
            assert group["lr"] == pytest.approx(lr, rel=1e-9)
            assert group["betas"][0] == pytest.approx(beta1, rel=1e-9) and group["betas"][1] == 0.99
        opt.step()
        s.step()


def test_one_cycle_errors():
    opt = make_optimizer()
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        sched.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Expected positive integer total_steps, but got 0"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="Expected positive integer epochs, but got -1"):
        sched.OneCycleLR(opt, max_lr=1.0, epochs=-1, steps_per_epoch=3)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start, but got 1.5"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        sched.OneCycleLR(make_optimizer(ember.optim.Adagrad), max_lr=1.0, total_steps=10)


def test_sequential():
    opt = make_optimizer(lrs=BASES)
    warm = sched.LinearLR(opt, start_factor=0.1, total_iters=3)
    decay = sched.ExponentialLR(opt, gamma=0.9)
    s = sched.SequentialLR(opt, [warm, decay], milestones=[5])
    got = lr_sequence(s, N)

    def form(b, t):
        return b * (0.1 + 0.9 * min(t, 3) / 3) if t < 5 else b * 0.9 ** (t - 5)
    np.testing.assert_allclose(got, closed_form(form, BASES), rtol=1e-9)


def test_sequential_errors():
    opt = make_optimizer()
    a = sched.StepLR(opt, 2)
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        sched.SequentialLR(opt, [], milestones=[])
    with pytest.raises(ValueError, match="number of schedulers 1 and the number of milestones to be equal to 1"):
        sched.SequentialLR(opt, [a], milestones=[3])
    with pytest.raises(ValueError, match="same optimizer"):
        sched.SequentialLR(opt, [a, sched.StepLR(make_optimizer(), 2)], milestones=[3])


def test_linear_errors():
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        sched.LinearLR(make_optimizer(), start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        sched.LinearLR(make_optimizer(), end_factor=1.5)


def test_resuming_needs_initial_lr():
    with pytest.raises(KeyError, match="initial_lr"):
        sched.StepLR(make_optimizer(), step_size=2, last_epoch=4)


def test_initial_lr_and_base_lrs():
    opt = make_optimizer(lrs=BASES)
    s = sched.StepLR(opt, step_size=2)
    assert s.base_lrs == list(BASES)
    assert [g["initial_lr"] for g in opt.param_groups] == list(BASES)
    assert s.last_epoch == 0 and s.get_last_lr() == list(BASES)


class Halving:
    """A callable object: its attributes go into LambdaLR's state_dict."""

    def __init__(self):
        self.factor = 0.5

    def __call__(self, t):
        return self.factor ** t


ROUND_TRIPS = [
    ("StepLR", lambda o: sched.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda o: sched.MultiStepLR(o, milestones=[2, 9])),
    ("CosineAnnealingLR", lambda o: sched.CosineAnnealingLR(o, T_max=6, eta_min=0.01)),
    ("LinearLR", lambda o: sched.LinearLR(o, total_iters=10)),
    ("OneCycleLR", lambda o: sched.OneCycleLR(o, max_lr=1.0, total_steps=20, three_phase=True)),
    ("LambdaLR", lambda o: sched.LambdaLR(o, Halving())),
    ("SequentialLR", lambda o: sched.SequentialLR(
        o, [sched.LinearLR(o, total_iters=4), sched.CosineAnnealingLR(o, T_max=8)], milestones=[4])),
]


@pytest.mark.parametrize("name,make", ROUND_TRIPS, ids=[r[0] for r in ROUND_TRIPS])
def test_state_dict_round_trip(name, make):
    opt = make_optimizer(lrs=BASES, momentum=0.9)
    s = make(opt)
    if name == "LambdaLR":
        s.lr_lambdas[0].factor = 0.8  # state the copy must pick up
    for _ in range(7):
        opt.step()
        s.step()
    saved_sched, saved_opt = s.state_dict(), opt.state_dict()
    assert "optimizer" not in saved_sched and saved_sched["last_epoch"] == 7

    opt2 = make_optimizer(lrs=BASES, momentum=0.9)
    s2 = make(opt2)
    opt2.load_state_dict(saved_opt)
    s2.load_state_dict(saved_sched)
    if name == "LambdaLR":
        assert s2.lr_lambdas[0].factor == 0.8
    assert s2.get_last_lr() == s.get_last_lr()
    for _ in range(10):
        opt.step()
        s.step()
        opt2.step()
        s2.step()
        assert [g["lr"] for g in opt2.param_groups] == [g["lr"] for g in opt.param_groups]
        assert s2.get_last_lr() == s.get_last_lr()


def test_scheduler_drives_optimizer_updates():
    p = ember.tensor([1.0], dtype=ember.float64).requires_grad_(True)
    opt = ember.optim.SGD([p], lr=1.0)
    s = sched.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(3):
        p.grad = ember.tensor([1.0], dtype=ember.float64)
        opt.step()
        s.step()
    assert p.item() == pytest.approx(1.0 - (1.0 + 0.5 + 0.25))


def test_stepping_the_scheduler_before_the_optimizer_warns():
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.1)
    scheduler = ember.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    with pytest.warns(UserWarning, match=r"lr_scheduler.step\(\) was called before optimizer.step\(\)"):
        scheduler.step()
    opt2 = ember.optim.SGD([p], lr=0.1)
    scheduler2 = ember.optim.lr_scheduler.StepLR(opt2, 1, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            opt2.step()
            scheduler2.step()
    assert scheduler2.get_last_lr() == [0.025]
