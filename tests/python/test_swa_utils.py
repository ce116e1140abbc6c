"""ember.optim.swa_utils: AveragedModel (SWA running mean, EMA via get_ema_multi_avg_fn / get_ema_avg_fn,
use_buffers), update_bn and SWALR, against hand-computed values and torch when importable."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.optim import swa_utils
from harness import torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")


def npy(t):
    return t.detach().cpu().numpy()


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).double()


def _shift(model, amount):
    with ember.no_grad():
        for p in model.parameters():
            p.add_(amount)


def test_swa_is_the_running_mean():
    model = _model()
    swa = swa_utils.AveragedModel(model)
    seen = []
    for k in range(4):
        _shift(model, float(k))
        seen.append([npy(p).copy() for p in model.parameters()])
        swa.update_parameters(model)
    assert int(swa.n_averaged.item()) == 4
    for i, p in enumerate(swa.module.parameters()):
        np.testing.assert_allclose(npy(p), np.mean([s[i] for s in seen], 0), rtol=1e-12)
    # Buffers follow the model without use_buffers.
    with ember.no_grad():
        model[1].running_mean.fill_(7.0)
    swa.update_parameters(model)
    np.testing.assert_allclose(npy(swa.module[1].running_mean), 7.0)
    x = ember.ones(2, 3, dtype=ember.float64)
    swa.eval()
    np.testing.assert_allclose(npy(swa(x)), npy(swa.module(x)))


@pytest.mark.parametrize("multi", [True, False])
def test_ema(multi):
    model = _model()
    fn = swa_utils.get_ema_multi_avg_fn(0.8) if multi else swa_utils.get_ema_avg_fn(0.8)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=fn) if multi else swa_utils.AveragedModel(model, avg_fn=fn)
    expected = None
    for k in range(3):
        _shift(model, 0.5 * (k + 1))
        current = [npy(p).copy() for p in model.parameters()]
        expected = current if expected is None else [0.8 * e + 0.2 * c for e, c in zip(expected, current)]
        ema.update_parameters(model)
    for p, e in zip(ema.module.parameters(), expected):
        np.testing.assert_allclose(npy(p), e, rtol=1e-12)


def test_use_buffers_averages_buffers_too():
    model = _model()
    avg = swa_utils.AveragedModel(model, use_buffers=True)
    for value in (1.0, 3.0):
        with ember.no_grad():
            model[1].running_var.fill_(value)
        avg.update_parameters(model)
    np.testing.assert_allclose(npy(avg.module[1].running_var), 2.0)
    with pytest.raises(AssertionError):
        swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


def test_swa_multi_avg_fn_matches_default():
    model = _model()
    a = swa_utils.AveragedModel(model)
    b = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    c = swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn())
    for k in range(3):
        _shift(model, 1.0 + k)
        for m in (a, b, c):
            m.update_parameters(model)
    for pa, pb, pc in zip(a.parameters(), b.parameters(), c.parameters()):
        np.testing.assert_allclose(npy(pb), npy(pa), rtol=1e-12)
        np.testing.assert_allclose(npy(pc), npy(pa), rtol=1e-12)


def test_update_bn_recomputes_statistics():
    model = _model()
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((5, 3)) for _ in range(3)]
    model[1].momentum = 0.3
    with ember.no_grad():
        model[1].running_mean.fill_(100.0)
    model.eval()
    swa_utils.update_bn([(ember.tensor(b), 0) for b in batches], model)
    w, bias = npy(model[0].weight), npy(model[0].bias)
    hidden = [b @ w.T + bias for b in batches]
    # The momentum=None pass averages the per-batch means and unbiased variances equally.
    np.testing.assert_allclose(npy(model[1].running_mean), np.mean([h.mean(0) for h in hidden], 0), rtol=1e-10)
    np.testing.assert_allclose(npy(model[1].running_var), np.mean([h.var(0, ddof=1) for h in hidden], 0),
                               rtol=1e-10)
    assert model[1].momentum == 0.3 and not model.training
    swa_utils.update_bn([], nn.Linear(2, 2))  # no batch norm: nothing to do


def _swalr_lrs(opt, sched, steps):
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_anneals_to_swa_lr(strategy):
    p = nn.Parameter(ember.ones(1))
    opt = ember.optim.SGD([p], lr=1.0)
    lrs = _swalr_lrs(opt, swa_utils.SWALR(opt, swa_lr=0.2, anneal_epochs=4, anneal_strategy=strategy), 6)
    f = (lambda t: (1 - math.cos(math.pi * t)) / 2) if strategy == "cos" else (lambda t: t)
    expected = [0.2 * f(k / 4) + 1.0 * (1 - f(k / 4)) for k in range(5)] + [0.2, 0.2]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)


def test_swalr_errors_and_per_group():
    p, q = nn.Parameter(ember.ones(1)), nn.Parameter(ember.ones(1))
    opt = ember.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=[0.1, 0.05], anneal_epochs=0)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.05]
    assert "anneal_epochs" in sched.state_dict()
    with pytest.raises(ValueError, match="anneal_strategy"):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs"):
        swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr"):
        swa_utils.SWALR(opt, [0.1])


@needs_torch
@pytest.mark.parametrize("strategy,epochs", [("cos", 3), ("linear", 5), ("cos", 0)])
def test_swalr_torch_parity(strategy, epochs):
    p = nn.Parameter(ember.ones(1))
    opt = ember.optim.SGD([p], lr=0.7)
    ours = _swalr_lrs(opt, swa_utils.SWALR(opt, 0.05, epochs, strategy), 7)
    tp = torch.nn.Parameter(torch.ones(1))
    topt = torch.optim.SGD([tp], lr=0.7)
    theirs = _swalr_lrs(topt, torch.optim.swa_utils.SWALR(topt, 0.05, epochs, strategy), 7)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@needs_torch
def test_ema_torch_parity():
    rng = np.random.default_rng(5)
    shapes = [(3, 2), (3,)]
    e_params = [nn.Parameter(ember.tensor(rng.standard_normal(s))) for s in shapes]
    t_params = [torch.nn.Parameter(torch.tensor(npy(p))) for p in e_params]
    e_model, t_model = nn.ParameterList(e_params), torch.nn.ParameterList(t_params)
    e_avg = swa_utils.AveragedModel(e_model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
    t_avg = torch.optim.swa_utils.AveragedModel(t_model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    for _ in range(4):
        steps = [rng.standard_normal(s) for s in shapes]
        with ember.no_grad():
            for p, d in zip(e_params, steps):
                p.add_(ember.tensor(d))
        with torch.no_grad():
            for p, d in zip(t_params, steps):
                p.add_(torch.tensor(d))
        e_avg.update_parameters(e_model)
        t_avg.update_parameters(t_model)
    for a, b in zip(e_avg.module.parameters(), t_avg.module.parameters()):
        np.testing.assert_allclose(npy(a), b.detach().numpy(), rtol=1e-12)
