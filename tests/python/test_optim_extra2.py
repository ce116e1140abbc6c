"""Rprop, ASGD, Adafactor and the MultiplicativeLR / ChainedScheduler schedulers,
step by step against numpy references of torch's update rules (and torch.optim
itself when it is importable)."""
import numpy as np
import pytest

import ember
from harness import torch

SHAPES = [(3,), (2, 3), (), (2, 2, 3)]
STEPS = 6


def initial_arrays(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, size=s) for s in SHAPES]


def grad_at(step, i, shape):
    rng = np.random.default_rng(100 * step + i)
    return rng.uniform(-1, 1, size=shape)


# ---- numpy references (one parameter at a time, float64)

class RefRprop:
    def __init__(self, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
        self.lr, self.etas, self.sizes, self.maximize = lr, etas, step_sizes, maximize
        self.state = {}

    def update(self, i, p, g):
        g = -g if self.maximize else g
        st = self.state.setdefault(i, {"prev": np.zeros_like(p), "step_size": np.full_like(p, self.lr)})
        sign = np.sign(g * st["prev"])
        factor = np.where(sign > 0, self.etas[1], np.where(sign < 0, self.etas[0], 1.0))
        st["step_size"] = np.clip(st["step_size"] * factor, *self.sizes)
        g = np.where(factor == self.etas[0], 0.0, g)
        st["prev"] = g
        return p - np.sign(g) * st["step_size"]


class RefASGD:
    def __init__(self, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False):
        self.lr, self.lambd, self.alpha, self.t0, self.wd, self.maximize = lr, lambd, alpha, t0, weight_decay, maximize
        self.state = {}

    def update(self, i, p, g):
        g = -g if self.maximize else g
        st = self.state.setdefault(i, {"step": 0, "eta": np.float32(self.lr), "mu": np.float32(1), "ax": 0 * p})
        st["step"] += 1
        g = g + self.wd * p
        eta = float(st["eta"])
        p = p * (1 - self.lambd * eta) - eta * g
        st["ax"] = st["ax"] + (p - st["ax"]) * float(st["mu"]) if st["mu"] != 1 else p.copy()
        st["eta"] = np.float32(self.lr / (1 + self.lambd * self.lr * st["step"]) ** self.alpha)
        st["mu"] = np.float32(1 / max(1, st["step"] - self.t0))
        return p


class RefAdafactor:
    def __init__(self, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, maximize=False):
        self.lr, self.decay, self.d, self.wd, self.maximize = lr, beta2_decay, d, weight_decay, maximize
        self.eps1 = np.finfo(np.float64).eps if eps[0] is None else eps[0]
        self.eps2 = eps[1]
        self.state = {}

    def update(self, i, p, g):
        g = -g if self.maximize else g
        st = self.state.setdefault(i, {"step": 0})
        st["step"] += 1
        t = st["step"]
        w = t ** self.decay
        rho = min(self.lr, 1 / t ** 0.5)
        alpha = max(self.eps2, np.sqrt((p * p).sum()) / np.sqrt(p.size)) * rho
        p = p * (1 - self.lr * self.wd)
        if g.ndim > 1:
            row = st.setdefault("row_var", np.zeros(g.shape[:-1] + (1,)))
            col = st.setdefault("col_var", np.zeros(g.shape[:-2] + (1, g.shape[-1])))
            row += w * ((g * g).mean(-1, keepdims=True) - row)
            col += w * ((g * g).mean(-2, keepdims=True) - col)
            var = row @ col / np.maximum(row.mean(-2, keepdims=True), self.eps1)
        else:
            v = st.setdefault("variance", np.zeros_like(g))
            v += w * (g * g - v)
            var = v.copy()
        update = g / np.sqrt(np.maximum(var, self.eps1 ** 2))
        denom = max(1.0, np.sqrt((update * update).sum()) / (np.sqrt(update.size) * self.d))
        return p - alpha / denom * update


REFS = {"Rprop": RefRprop, "ASGD": RefASGD, "Adafactor": RefAdafactor}

CONFIGS = [
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.08), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.1, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1)),
    ("ASGD", dict(lr=0.1, t0=0, maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.1, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=1.5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.5, maximize=True, d=1.0)),
]


def config_id(config):
    name, kwargs = config
    return name + "-" + ",".join(f"{k}={v}" for k, v in kwargs.items())


def run_ember(config, arrays, steps):
    name, kwargs = config
    params = [ember.tensor(a, dtype=ember.float64).requires_grad_(True) for a in arrays]
    opt = getattr(ember.optim, name)(params, **kwargs)
    history = []
    for step in range(steps):
        for i, p in enumerate(params):
            p.grad = ember.tensor(grad_at(step, i, tuple(p.shape)), dtype=ember.float64)
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


def run_reference(config, arrays, steps):
    name, kwargs = config
    ref = REFS[name](**kwargs)
    ps = [a.copy() for a in arrays]
    history = []
    for step in range(steps):
        ps = [ref.update(i, p, grad_at(step, i, p.shape)) for i, p in enumerate(ps)]
        history.append([np.array(p) for p in ps])
    return history, ref


def run_torch(config, arrays, steps):
    name, kwargs = config
    params = [torch.tensor(a, requires_grad=True) for a in arrays]
    opt = getattr(torch.optim, name)(params, **kwargs)
    history = []
    for step in range(steps):
        for i, p in enumerate(params):
            p.grad = torch.tensor(grad_at(step, i, tuple(p.shape)))
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


def assert_histories_close(got, expected):
    for step, (g, e) in enumerate(zip(got, expected)):
        for i, (a, b) in enumerate(zip(g, e)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"step {step} param {i}")


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_matches_reference(config):
    arrays = initial_arrays()
    expected, ref = run_reference(config, arrays, STEPS)
    got, opt = run_ember(config, arrays, STEPS)
    assert_histories_close(got, expected)
    for i, p in enumerate(opt.param_groups[0]["params"]):
        state = opt.state[p]
        assert state["step"].dtype == ember.float32 and state["step"].item() == STEPS
        for key, value in ref.state[i].items():
            if key != "step":
                np.testing.assert_allclose(np.asarray(state[key].numpy(), np.float64), value, rtol=1e-10,
                                           atol=1e-12, err_msg=key)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_matches_torch(config):
    arrays = initial_arrays(1)
    expected, topt = run_torch(config, arrays, STEPS)
    got, opt = run_ember(config, arrays, STEPS)
    assert_histories_close(got, expected)
    # the same state keys, shapes and dtypes as torch
    for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        mine, theirs = opt.state[p], topt.state[tp]
        assert sorted(mine) == sorted(theirs)
        for key in theirs:
            assert tuple(mine[key].shape) == tuple(theirs[key].shape), key
            assert str(mine[key].dtype).split(".")[-1] == str(theirs[key].dtype).split(".")[-1], key
    assert sorted(opt.param_groups[0]) == sorted(topt.param_groups[0])


@pytest.mark.parametrize("config", [CONFIGS[1], CONFIGS[3], CONFIGS[6]], ids=config_id)
def test_state_dict_round_trip(config):
    name, kwargs = config
    arrays = initial_arrays(2)
    history, opt = run_ember(config, arrays, 3)
    saved = opt.state_dict()
    assert sorted(saved["state"]) == list(range(len(arrays)))
    assert saved["param_groups"][0]["params"] == list(range(len(arrays)))
    params = opt.param_groups[0]["params"]
    clones = [ember.tensor(p.detach().numpy()).requires_grad_(True) for p in params]
    restored = getattr(ember.optim, name)(clones, lr=123.0)
    restored.load_state_dict(saved)
    assert restored.param_groups[0]["lr"] == kwargs.get("lr", 1e-2)
    for step in range(3, 6):
        for i, (p, q) in enumerate(zip(params, clones)):
            p.grad = ember.tensor(grad_at(step, i, tuple(p.shape)))
            q.grad = ember.tensor(grad_at(step, i, tuple(q.shape)))
        opt.step()
        restored.step()
        for p, q in zip(params, clones):
            # ASGD's eta/mu are loaded in the parameter's dtype (as torch does), the rest is exact
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-9)


def test_rprop_sign_flip_rests_the_element():
    p = ember.tensor([1.0, 1.0], dtype=ember.float64).requires_grad_(True)
    opt = ember.optim.Rprop([p], lr=0.1)
    for g in ([1.0, 1.0], [1.0, -1.0], [1.0, -1.0]):
        p.grad = ember.tensor(g, dtype=ember.float64)
        opt.step()
    # element 0: steps 0.1, 0.12, 0.144 down; element 1: 0.1 down, rest (flip), then 0.05 up
    np.testing.assert_allclose(p.detach().numpy(), [1 - 0.1 - 0.12 - 0.144, 1 - 0.1 + 0.05])
    np.testing.assert_allclose(opt.state[p]["step_size"].numpy(), [0.144, 0.05])


def test_adafactor_factored_state_is_small():
    p = ember.zeros(4, 5).requires_grad_(True)
    opt = ember.optim.Adafactor([p])
    p.grad = ember.ones(4, 5)
    opt.step()
    assert tuple(opt.state[p]["row_var"].shape) == (4, 1)
    assert tuple(opt.state[p]["col_var"].shape) == (1, 5)
    assert "variance" not in opt.state[p]


def test_float32_parameters_and_none_grads():
    for cls in (ember.optim.Rprop, ember.optim.ASGD, ember.optim.Adafactor):
        a, b = ember.ones(3).requires_grad_(True), ember.ones(2, 2).requires_grad_(True)
        opt = cls([a, b])
        b.grad = ember.full((2, 2), 0.5)
        opt.step()
        assert a.detach().tolist() == [1.0, 1.0, 1.0] and a not in opt.state
        assert b.dtype == ember.float32 and (b.detach().numpy() < 1).all()


@pytest.mark.parametrize("cls, kwargs, message", [
    (ember.optim.Rprop, dict(lr=-1), "Invalid learning rate"),
    (ember.optim.Rprop, dict(etas=(1.2, 0.5)), "Invalid eta values"),
    (ember.optim.ASGD, dict(lambd=-1), "Invalid lambd value"),
    (ember.optim.ASGD, dict(alpha=-1), "Invalid alpha value"),
    (ember.optim.ASGD, dict(weight_decay=-1), "Invalid weight_decay value"),
    (ember.optim.Adafactor, dict(beta2_decay=0.5), "beta2_decay should be <= 0"),
    (ember.optim.Adafactor, dict(eps=(-1, 1e-3)), "epsilon1 should be >= 0"),
    (ember.optim.Adafactor, dict(d=0.5), "Clipping threshold d should be >= 1"),
    (ember.optim.Adafactor, dict(lr=-0.1), "Learning rate should be >= 0"),
])
def test_bad_hyper_parameters(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cls([ember.ones(2).requires_grad_(True)], **kwargs)


def test_closure_loss_is_returned():
    p = ember.tensor([2.0]).requires_grad_(True)
    opt = ember.optim.ASGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 4.0
    assert p.item() == pytest.approx(2.0 * (1 - 1e-4 * 0.1) - 0.1 * 4.0, rel=1e-6)


# ---- schedulers

def lrs(make_sched, steps, lib=ember):
    p = lib.zeros(1, requires_grad=True) if lib is torch else ember.zeros(1).requires_grad_(True)
    opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.zeros(1, requires_grad=True) if lib is torch
                                                      else ember.zeros(1).requires_grad_(True)], "lr": 0.5}],
                        lr=1.0)
    sched = make_sched(lib, opt)
    out = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
    return out, sched, opt


def multiplicative(lib, opt):
    return lib.optim.lr_scheduler.MultiplicativeLR(opt, [lambda e: 0.9, lambda e: 1.0 / (e + 1)])


def chained(lib, opt):
    s = lib.optim.lr_scheduler
    return s.ChainedScheduler([s.ExponentialLR(opt, gamma=0.9), s.StepLR(opt, step_size=2, gamma=0.5)])


def test_multiplicative_lr():
    got, _, _ = lrs(multiplicative, 4)
    expected = [[1.0, 0.5]]
    for epoch in range(1, 5):
        a, b = expected[-1]
        expected.append([a * 0.9, b / (epoch + 1)])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_chained_scheduler_composes():
    got, sched, opt = lrs(chained, 5)
    expected = [[base * 0.9 ** e * 0.5 ** (e // 2) for base in (1.0, 0.5)] for e in range(6)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    state = sched.state_dict()
    assert len(state["_schedulers"]) == 2 and "optimizer" not in state
    fresh = chained(ember, opt)
    fresh.load_state_dict(state)
    assert fresh._schedulers[0].last_epoch == sched._schedulers[0].last_epoch


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("make", [multiplicative, chained])
def test_schedulers_match_torch(make):
    got, _, _ = lrs(make, 6)
    expected, _, _ = lrs(make, 6, lib=torch)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_multiplicative_lr_resumes_without_multiplying_on_construction():
    p = ember.zeros(1).requires_grad_(True)
    opt = ember.optim.SGD([p], lr=0.1)
    opt.param_groups[0]["initial_lr"] = 1.0
    sched = ember.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5, last_epoch=3)
    assert sched.get_last_lr() == [0.1] and sched.last_epoch == 4
    sched.step()
    assert sched.get_last_lr() == [0.05]


def test_scheduler_errors():
    s = ember.optim.lr_scheduler
    p = ember.zeros(1).requires_grad_(True)
    opt, other = ember.optim.SGD([p], lr=1.0), ember.optim.SGD([ember.zeros(1).requires_grad_(True)], lr=1.0)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        s.MultiplicativeLR(opt, [lambda e: 1.0] * 2)
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        s.MultiplicativeLR(opt, 0.5)
    with pytest.raises(ValueError, match="at least one scheduler"):
        s.ChainedScheduler([])
    with pytest.raises(ValueError, match="same optimizer"):
        s.ChainedScheduler([s.StepLR(opt, 1), s.StepLR(other, 1)])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        s.ChainedScheduler([s.ReduceLROnPlateau(opt)])
