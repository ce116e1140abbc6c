"""ember.optim optimizers against numpy implementations of torch.optim's
published update rules (and torch.optim itself when it is importable)."""
import numpy as np
import pytest

import ember
from harness import DEVICE, torch

SHAPES = [(3,), (2, 3), ()]
STEPS = 5


# ---- numpy references of torch.optim's update rules (single-tensor form)

class RefSGD:
    def __init__(self, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
        self.o = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                      nesterov=nesterov, maximize=maximize)
        self.state = {}

    def update(self, i, p, g, o):
        d = -g if o["maximize"] else g
        if o["weight_decay"]:
            d = d + o["weight_decay"] * p
        if o["momentum"]:
            st = self.state.setdefault(i, {})
            if "momentum_buffer" not in st:
                buf = d.copy()
            else:
                buf = o["momentum"] * st["momentum_buffer"] + (1 - o["dampening"]) * d
            st["momentum_buffer"] = buf
            d = d + o["momentum"] * buf if o["nesterov"] else buf
        return p - o["lr"] * d


class RefAdam:
    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
                 decoupled_weight_decay=False):
        self.o = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
        self.decoupled = decoupled_weight_decay
        self.state = {}

    def update(self, i, p, g, o):
        st = self.state.setdefault(i, {"step": 0, "exp_avg": np.zeros_like(p), "exp_avg_sq": np.zeros_like(p),
                                       "max_exp_avg_sq": np.zeros_like(p)})
        st["step"] += 1
        t, (b1, b2), lr, wd = st["step"], o["betas"], o["lr"], o["weight_decay"]
        g = -g if o["maximize"] else g
        if self.decoupled:
            p = p * (1 - lr * wd)
        elif wd:
            g = g + wd * p
        st["exp_avg"] = b1 * st["exp_avg"] + (1 - b1) * g
        st["exp_avg_sq"] = b2 * st["exp_avg_sq"] + (1 - b2) * g * g
        second = st["exp_avg_sq"]
        if o["amsgrad"]:
            st["max_exp_avg_sq"] = np.maximum(st["max_exp_avg_sq"], st["exp_avg_sq"])
            second = st["max_exp_avg_sq"]
        denom = np.sqrt(second) / np.sqrt(1 - b2 ** t) + o["eps"]
        return p - lr / (1 - b1 ** t) * st["exp_avg"] / denom


class RefAdamW(RefAdam):
    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, maximize=False):
        super().__init__(lr, betas, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay=True)


class RefRMSprop:
    def __init__(self, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, maximize=False):
        self.o = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                      centered=centered, maximize=maximize)
        self.state = {}

    def update(self, i, p, g, o):
        st = self.state.setdefault(i, {"step": 0, "square_avg": np.zeros_like(p), "grad_avg": np.zeros_like(p),
                                       "momentum_buffer": np.zeros_like(p)})
        st["step"] += 1
        a = o["alpha"]
        g = -g if o["maximize"] else g
        if o["weight_decay"]:
            g = g + o["weight_decay"] * p
        st["square_avg"] = a * st["square_avg"] + (1 - a) * g * g
        if o["centered"]:
            st["grad_avg"] = a * st["grad_avg"] + (1 - a) * g
            avg = np.sqrt(st["square_avg"] - st["grad_avg"] ** 2) + o["eps"]
        else:
            avg = np.sqrt(st["square_avg"]) + o["eps"]
        if o["momentum"] > 0:
            st["momentum_buffer"] = o["momentum"] * st["momentum_buffer"] + g / avg
            return p - o["lr"] * st["momentum_buffer"]
        return p - o["lr"] * g / avg


class RefAdagrad:
    def __init__(self, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, maximize=False):
        self.o = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                      initial_accumulator_value=initial_accumulator_value, eps=eps, maximize=maximize)
        self.state = {}

    def update(self, i, p, g, o):
        st = self.state.setdefault(i, {"step": 0, "sum": np.full_like(p, o["initial_accumulator_value"])})
        st["step"] += 1
        g = -g if o["maximize"] else g
        if o["weight_decay"]:
            g = g + o["weight_decay"] * p
        clr = o["lr"] / (1 + (st["step"] - 1) * o["lr_decay"])
        st["sum"] = st["sum"] + g * g
        return p - clr * g / (np.sqrt(st["sum"]) + o["eps"])


class RefAdadelta:
    def __init__(self, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
        self.o = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        self.state = {}

    def update(self, i, p, g, o):
        st = self.state.setdefault(i, {"step": 0, "square_avg": np.zeros_like(p), "acc_delta": np.zeros_like(p)})
        st["step"] += 1
        g = -g if o["maximize"] else g
        g = g + o["weight_decay"] * p
        rho, eps = o["rho"], o["eps"]
        st["square_avg"] = rho * st["square_avg"] + (1 - rho) * g * g
        delta = np.sqrt(st["acc_delta"] + eps) / np.sqrt(st["square_avg"] + eps) * g
        st["acc_delta"] = rho * st["acc_delta"] + (1 - rho) * delta * delta
        return p - o["lr"] * delta


class RefAdamax:
    def __init__(self, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False):
        self.o = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize)
        self.state = {}

    def update(self, i, p, g, o):
        st = self.state.setdefault(i, {"step": 0, "exp_avg": np.zeros_like(p), "exp_inf": np.zeros_like(p)})
        st["step"] += 1
        (b1, b2), t = o["betas"], st["step"]
        g = (-g if o["maximize"] else g) + o["weight_decay"] * p
        st["exp_avg"] = b1 * st["exp_avg"] + (1 - b1) * g
        st["exp_inf"] = np.maximum(b2 * st["exp_inf"], np.abs(g) + o["eps"])
        return p - o["lr"] / (1 - b1 ** t) * st["exp_avg"] / st["exp_inf"]


class RefNAdam:
    def __init__(self, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, maximize=False):
        self.o = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        self.state = {}

    def update(self, i, p, g, o):
        st = self.state.setdefault(i, {"step": 0, "mu_product": np.float32(1.0), "exp_avg": np.zeros_like(p),
                                       "exp_avg_sq": np.zeros_like(p)})
        st["step"] += 1
        (b1, b2), t, lr, wd, psi = o["betas"], st["step"], o["lr"], o["weight_decay"], o["momentum_decay"]
        g = -g if o["maximize"] else g
        if o["decoupled_weight_decay"]:
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        mu = b1 * (1 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
        st["mu_product"] = np.float32(st["mu_product"] * np.float32(mu))  # a float32 tensor in torch
        prod = float(st["mu_product"])
        st["exp_avg"] = b1 * st["exp_avg"] + (1 - b1) * g
        st["exp_avg_sq"] = b2 * st["exp_avg_sq"] + (1 - b2) * g * g
        denom = np.sqrt(st["exp_avg_sq"] / (1 - b2 ** t)) + o["eps"]
        return p - lr * (1 - mu) / (1 - prod) * g / denom - lr * mu_next / (1 - prod * mu_next) * st["exp_avg"] / denom


class RefRAdam:
    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 maximize=False):
        self.o = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        self.state = {}

    def update(self, i, p, g, o):
        st = self.state.setdefault(i, {"step": 0, "exp_avg": np.zeros_like(p), "exp_avg_sq": np.zeros_like(p)})
        st["step"] += 1
        (b1, b2), t, lr, wd = o["betas"], st["step"], o["lr"], o["weight_decay"]
        g = -g if o["maximize"] else g
        if o["decoupled_weight_decay"]:
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        st["exp_avg"] = b1 * st["exp_avg"] + (1 - b1) * g
        st["exp_avg_sq"] = b2 * st["exp_avg_sq"] + (1 - b2) * g * g
        m_hat = st["exp_avg"] / (1 - b1 ** t)
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t <= 5:
            return p - lr * m_hat
        rect = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return p - lr * m_hat * rect * np.sqrt(1 - b2 ** t) / (np.sqrt(st["exp_avg_sq"]) + o["eps"])


REFS = {"SGD": RefSGD, "Adam": RefAdam, "AdamW": RefAdamW, "RMSprop": RefRMSprop, "Adagrad": RefAdagrad,
        "Adadelta": RefAdadelta, "Adamax": RefAdamax, "NAdam": RefNAdam, "RAdam": RefRAdam}

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True, eps=1e-3)),
    ("Adam", dict(lr=0.05, amsgrad=True, maximize=True, weight_decay=0.05)),
    ("Adam", dict(lr=0.05, weight_decay=0.3, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, eps=1e-4)),
    ("RMSprop", dict(lr=0.02, centered=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.05)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    # rho_t is 1 at step 1 and passes 5 at step 6 whatever beta2 is: these 5
    # steps take the unrectified update (test_radam_rectified_steps the other).
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
]


def config_id(config):
    name, kwargs = config
    return name + "-" + ",".join(f"{k}={v}" for k, v in kwargs.items())


def initial_arrays(seed=0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, size=s) for s in shapes]


def grad_at(step, i, shape):
    """A fixed, step-dependent gradient (deterministic, different per step)."""
    rng = np.random.default_rng(100 * step + i)
    return rng.uniform(-1, 1, size=shape)


def leaf(array, dtype=ember.float64):
    return ember.tensor(np.array(array, copy=True), dtype=dtype).requires_grad_(True)


def fixed_grad(step, i, p):
    return grad_at(step, i, p.shape)


def run_reference(config, arrays, steps, grad_fn=fixed_grad):
    """Parameter values after each step; grad_fn(step, index, value) gives the gradient."""
    name, kwargs = config
    ref = REFS[name](**kwargs)
    ps = [a.copy() for a in arrays]
    history = []
    for step in range(steps):
        ps = [ref.update(i, p, grad_fn(step, i, p), ref.o) for i, p in enumerate(ps)]
        history.append([p.copy() for p in ps])
    return history, ref


def run_ember(config, params, steps):
    name, kwargs = config
    opt = getattr(ember.optim, name)(params, **kwargs)
    history = []
    for step in range(steps):
        for i, p in enumerate(params):
            p.grad = ember.tensor(grad_at(step, i, tuple(p.shape)), dtype=p.dtype)
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


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
    return history


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_matches_reference(config):
    arrays = initial_arrays()
    expected, ref = run_reference(config, arrays, STEPS)
    got, opt = run_ember(config, [leaf(a) for a in arrays], STEPS)
    for step, (g, e) in enumerate(zip(got, expected)):
        for i, (a, b) in enumerate(zip(g, e)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"step {step} param {i}")
    # The state holds torch's buffers under torch's names.
    for i, p in enumerate(opt.param_groups[0]["params"]):
        state = opt.state[p]
        for key, value in ref.state.get(i, {}).items():
            if key == "step":
                assert state["step"].dtype == ember.float32 and state["step"].dim() == 0
                assert state["step"].item() == value
            elif key in state:
                np.testing.assert_allclose(state[key].numpy(), value, rtol=1e-10, atol=1e-12, err_msg=key)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_matches_torch(config):
    arrays = initial_arrays()
    expected = run_torch(config, arrays, STEPS)
    got, _ = run_ember(config, [leaf(a) for a in arrays], STEPS)
    for g, e in zip(got, expected):
        for a, b in zip(g, e):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("config", [("RAdam", dict(lr=0.05, betas=(0.9, 0.99), weight_decay=0.1)),
                                    ("RAdam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.2))],
                         ids=config_id)
def test_radam_rectified_steps(config):
    arrays = initial_arrays()
    steps = 12
    expected, _ = run_reference(config, arrays, steps)
    got, _ = run_ember(config, [leaf(a) for a in arrays], steps)
    for g, e in zip(got, expected):
        for a, b in zip(g, e):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    if torch is not None:
        for g, e in zip(got, run_torch(config, arrays, steps)):
            for a, b in zip(g, e):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("config", [CONFIGS[3], CONFIGS[8], CONFIGS[10], CONFIGS[15], CONFIGS[19]], ids=config_id)
def test_quadratic_loss_with_closure(config):
    # loss = sum((a * p - b)^2): the gradient comes from autograd, through a closure.
    rng = np.random.default_rng(5)
    arrays = initial_arrays(1)
    scales = [rng.uniform(0.5, 2, size=a.shape) for a in arrays]
    targets = [rng.uniform(-1, 1, size=a.shape) for a in arrays]
    expected, _ = run_reference(config, arrays, STEPS,
                                grad_fn=lambda step, i, p: 2 * scales[i] * (scales[i] * p - targets[i]))
    params = [leaf(a) for a in arrays]
    a_t = [ember.tensor(s) for s in scales]
    b_t = [ember.tensor(t) for t in targets]
    name, kwargs = config
    opt = getattr(ember.optim, name)(params, **kwargs)

    def closure():
        opt.zero_grad()
        loss = sum(((a * p - b) * (a * p - b)).sum() for a, p, b in zip(a_t, params, b_t))
        loss.backward()
        return loss

    losses = []
    for step in range(STEPS):
        losses.append(opt.step(closure).item())
        for i, p in enumerate(params):
            np.testing.assert_allclose(p.detach().numpy(), expected[step][i], rtol=1e-10, atol=1e-12)
    assert losses[0] == pytest.approx(sum(((s * a - t) ** 2).sum() for s, a, t in zip(scales, arrays, targets)))


@pytest.mark.parametrize("config", [CONFIGS[1], CONFIGS[7], CONFIGS[10], CONFIGS[15], CONFIGS[19]], ids=config_id)
def test_state_dict_round_trip(config):
    name, kwargs = config
    arrays = initial_arrays(2)
    params = [leaf(a) for a in arrays]
    opt = getattr(ember.optim, name)(params, **kwargs)
    for step in range(3):
        for i, p in enumerate(params):
            p.grad = ember.tensor(grad_at(step, i, tuple(p.shape)))
        opt.step()
    saved = opt.state_dict()
    # torch's layout: state keyed by parameter index, params as indices.
    assert sorted(saved["state"]) == list(range(len(params)))
    assert saved["param_groups"][0]["params"] == list(range(len(params)))
    assert saved["param_groups"][0]["lr"] == kwargs["lr"]
    if name != "SGD":
        step = saved["state"][0]["step"]
        assert isinstance(step, ember.Tensor) and step.dtype == ember.float32 and step.dim() == 0
        assert step.item() == 3

    clones = [leaf(p.detach().numpy()) for p in params]
    restored = getattr(ember.optim, name)(clones, lr=123.0)
    restored.load_state_dict(saved)
    assert restored.param_groups[0]["lr"] == kwargs["lr"]
    for step in range(3, 6):
        for i, (p, q) in enumerate(zip(params, clones)):
            p.grad = ember.tensor(grad_at(step, i, tuple(p.shape)))
            q.grad = ember.tensor(grad_at(step, i, tuple(q.shape)))
        opt.step()
        restored.step()
        for p, q in zip(params, clones):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_load_state_dict_copies_buffers():
    p = leaf([1.0, 2.0])
    opt = ember.optim.Adam([p], lr=0.1)
    p.grad = ember.tensor([1.0, -1.0], dtype=ember.float64)
    opt.step()
    q = leaf([1.0, 2.0])
    other = ember.optim.Adam([q], lr=0.1)
    other.load_state_dict(opt.state_dict())
    opt.step()  # must not move `other`'s buffers
    assert other.state[q]["step"].item() == 1
    np.testing.assert_allclose(other.state[q]["exp_avg"].numpy(), [0.1, -0.1])


def test_load_state_dict_mismatched_groups():
    a, b = leaf([1.0]), leaf([2.0])
    opt = ember.optim.SGD([a, b], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        ember.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(opt.state_dict())
    with pytest.raises(ValueError, match="doesn't match the size"):
        ember.optim.SGD([a], lr=0.1).load_state_dict(opt.state_dict())


def test_param_groups_with_different_lrs():
    arrays = initial_arrays(3)
    params = [leaf(a) for a in arrays]
    opt = ember.optim.SGD([{"params": params[:2]}, {"params": params[2:], "lr": 0.5, "momentum": 0.9}],
                          lr=0.1, momentum=0.0)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[0]["momentum"] == 0.0
    ref0, ref1 = RefSGD(lr=0.1), RefSGD(lr=0.5, momentum=0.9)
    expected = [a.copy() for a in arrays]
    for step in range(STEPS):
        for i, p in enumerate(params):
            p.grad = ember.tensor(grad_at(step, i, tuple(p.shape)))
        opt.step()
        for i in range(len(expected)):
            ref = ref0 if i < 2 else ref1
            expected[i] = ref.update(i, expected[i], grad_at(step, i, expected[i].shape), ref.o)
        for p, e in zip(params, expected):
            np.testing.assert_allclose(p.detach().numpy(), e, rtol=1e-12)
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert list(sd["state"]) == [2]  # only the momentum group keeps a buffer


def test_add_param_group():
    a, b = leaf([1.0]), leaf([2.0])
    opt = ember.optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["betas"] == (0.9, 0.999) and opt.param_groups[1]["lr"] == 0.01
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_none_grads_are_skipped():
    a, b = leaf([1.0, 2.0]), leaf([3.0])
    for cls in (ember.optim.SGD, ember.optim.Adam, ember.optim.RMSprop):
        opt = cls([a, b], lr=0.1)
        a.grad = ember.tensor([1.0, 1.0], dtype=ember.float64)
        b.grad = None
        opt.step()
        assert b.detach().numpy().tolist() == [3.0]
        assert a.detach().numpy()[0] < 1.0
        assert len(opt.state[b]) == 0 or cls is ember.optim.SGD


def test_step_without_any_grad_changes_nothing():
    a = leaf([1.0, 2.0])
    opt = ember.optim.AdamW([a])
    opt.step()
    assert a.detach().numpy().tolist() == [1.0, 2.0]
    assert "step" not in opt.state[a]


def test_zero_grad():
    a = leaf([1.0, 2.0])
    opt = ember.optim.SGD([a], lr=0.1)
    (a * a).sum().backward()
    assert a.grad is not None
    opt.zero_grad(set_to_none=False)
    assert a.grad.numpy().tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None


def test_step_returns_closure_loss_and_enables_grad():
    a = leaf([3.0])
    opt = ember.optim.SGD([a], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    with ember.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0
    assert a.item() == pytest.approx(3.0 - 0.25 * 6.0)


def test_update_bumps_version_and_runs_without_autograd():
    a = leaf([1.0, 2.0])
    opt = ember.optim.Adam([a], lr=0.1)
    a.grad = ember.tensor([1.0, 1.0], dtype=ember.float64)
    before = a._version
    opt.step()
    assert a._version > before
    assert a.is_leaf and a.grad_fn is None and a.requires_grad


def test_float32_large_parallel_tensor():
    # Large enough to split across threads; float32 math.
    rng = np.random.default_rng(7)
    start = rng.uniform(-1, 1, size=(300, 401)).astype(np.float32)
    grad = rng.uniform(-1, 1, size=start.shape).astype(np.float32)
    p = leaf(start, dtype=ember.float32)
    opt = ember.optim.Adam([p], lr=0.01, weight_decay=0.1)
    ref = RefAdam(lr=0.01, weight_decay=0.1)
    expected = start.astype(np.float64)
    for _ in range(3):
        p.grad = ember.tensor(grad)
        opt.step()
        expected = ref.update(0, expected, grad.astype(np.float64), ref.o)
    assert p.dtype == ember.float32 and opt.state[p]["exp_avg"].dtype == ember.float32
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_non_contiguous_parameter():
    base = np.arange(6, dtype=np.float64).reshape(2, 3)
    p = ember.tensor(base).t().detach().requires_grad_(True)  # a transposed leaf
    assert not p.is_contiguous()
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9)
    ref = RefSGD(lr=0.1, momentum=0.9)
    expected = base.T.copy()
    for step in range(3):
        g = grad_at(step, 0, (3, 2))
        p.grad = ember.tensor(g)
        opt.step()
        expected = ref.update(0, expected, g, ref.o)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12)


def test_half_parameter_computes_in_float32():
    p = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float16).requires_grad_(True)
    opt = ember.optim.SGD([p], lr=0.5, momentum=0.9)
    p.grad = ember.tensor([1.0, 1.0, -1.0], dtype=ember.float16)
    opt.step()
    assert p.dtype == ember.float16 and opt.state[p]["momentum_buffer"].dtype == ember.float16
    np.testing.assert_allclose(p.detach().float().numpy(), [0.5, -2.5, 1.0])


BAD_ARGS = [
    (ember.optim.SGD, dict(lr=-1), "Invalid learning rate: -1"),
    (ember.optim.SGD, dict(lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    (ember.optim.SGD, dict(lr=0.1, weight_decay=-1), "Invalid weight_decay value: -1"),
    (ember.optim.SGD, dict(lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (ember.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov momentum"),
    (ember.optim.Adam, dict(lr=-0.01), "Invalid learning rate: -0.01"),
    (ember.optim.Adam, dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (ember.optim.Adam, dict(betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    (ember.optim.Adam, dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (ember.optim.AdamW, dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    (ember.optim.RMSprop, dict(alpha=-0.5), "Invalid alpha value: -0.5"),
    (ember.optim.RMSprop, dict(momentum=-1), "Invalid momentum value: -1"),
    (ember.optim.RMSprop, dict(lr=-1), "Invalid learning rate: -1"),
    (ember.optim.Adagrad, dict(lr_decay=-1), "Invalid lr_decay value: -1"),
    (ember.optim.Adagrad, dict(initial_accumulator_value=-1), "Invalid initial_accumulator_value value: -1"),
    (ember.optim.Adagrad, dict(eps=-1), "Invalid epsilon value: -1"),
]


@pytest.mark.parametrize("cls,kwargs,message", BAD_ARGS, ids=lambda x: getattr(x, "__name__", str(x)))
def test_bad_hyper_parameters(cls, kwargs, message):
    with pytest.raises(ValueError) as info:
        cls([leaf([1.0])], **kwargs)
    assert message in str(info.value)


def test_bad_params():
    with pytest.raises(ValueError, match="empty parameter list"):
        ember.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        ember.optim.SGD(leaf([1.0]), lr=0.1)
    a = leaf([1.0])
    with pytest.raises(ValueError, match="non-leaf"):
        ember.optim.SGD([a * 2], lr=0.1)
    with pytest.raises(TypeError, match="only optimize Tensors"):
        ember.optim.SGD([1.0], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        ember.optim.SGD([{"params": {a}}], lr=0.1)


def test_kernel_argument_errors():
    p = leaf([1.0, 2.0])
    g = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    with pytest.raises(RuntimeError, match=r"sgd: grads\[0\] has shape \[3\] but its parameter has shape \[2\]"):
        ember._C._optim_sgd([p], [g], [None], 0.1, 0.0, 0.0, False, 0.0, False)
    with pytest.raises(TypeError, match=r"adam: grads\[0\] has dtype float32"):
        ember._C._optim_adam([p], [ember.tensor([1.0, 2.0])], [None], [None], [None], [ember.tensor(0.0)],
                             0.1, 0.9, 0.999, 0.0, 1e-8, False, False)
    with pytest.raises(ValueError, match="adagrad: got 1 params but 2 grads"):
        ember._C._optim_adagrad([p], [g, g], [None], [ember.tensor(0.0)], 0.1, 0.0, 0.0, 0.0, 1e-10, False)
    with pytest.raises(RuntimeError, match=r"rmsprop: square_avgs\[0\] has shape \[3\]"):
        ember._C._optim_rmsprop([p], [p.detach()], [g], [None], [None], [ember.tensor(0.0)],
                                0.1, 0.99, 1e-8, 0.0, 0.0, False, False)
    with pytest.raises(TypeError, match="sgd: params\\[0\\] has dtype int64"):
        ember._C._optim_sgd([ember.tensor([1, 2])], [ember.tensor([1, 2])], [None], 0.1, 0.0, 0.0, False, 0.0, False)
    assert p.detach().numpy().tolist() == [1.0, 2.0]  # nothing was updated


def test_repr_and_defaults():
    opt = ember.optim.AdamW([leaf([1.0])])
    assert opt.defaults["weight_decay"] == 1e-2 and opt.defaults["lr"] == 1e-3
    assert ember.optim.SGD([leaf([1.0])]).defaults["lr"] == 1e-3
    assert ember.optim.RMSprop([leaf([1.0])]).defaults["alpha"] == 0.99
    assert ember.optim.Adagrad([leaf([1.0])]).defaults["eps"] == 1e-10
    assert "Parameter Group 0" in repr(opt)


def test_load_state_dict_casts_buffers_to_the_parameter_dtype():
    p = leaf([1.0, 2.0])
    opt = ember.optim.RMSprop([p], lr=0.1, momentum=0.5)
    p.grad = ember.tensor([1.0, -1.0], dtype=ember.float64)
    opt.step()
    q = ember.tensor(p.detach().numpy(), dtype=ember.float32).requires_grad_(True)
    other = ember.optim.RMSprop([q], lr=0.1, momentum=0.5)
    other.load_state_dict(opt.state_dict())
    state = other.state[q]
    assert state["square_avg"].dtype == ember.float32 and state["momentum_buffer"].dtype == ember.float32
    assert state["step"].dtype == ember.float32 and state["step"].item() == 1
    q.grad = ember.tensor([1.0, -1.0])
    other.step()
    p.grad = ember.tensor([1.0, -1.0], dtype=ember.float64)
    opt.step()
    np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-6)


# ---- Adam's decoupled_weight_decay, named parameters, step hooks, duplicate parameters

def test_adam_decoupled_weight_decay_is_adamw():
    assert ember.optim.Adam([leaf([1.0])]).defaults["decoupled_weight_decay"] is False
    assert ember.optim.AdamW([leaf([1.0])]).defaults["decoupled_weight_decay"] is True
    opt = ember.optim.Adam([leaf([1.0])], decoupled_weight_decay=True)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True
    assert "decoupled_weight_decay: True" in repr(opt)
    arrays = initial_arrays()
    adam, _ = run_ember(("Adam", dict(lr=0.05, weight_decay=0.3, decoupled_weight_decay=True)),
                        [leaf(a) for a in arrays], STEPS)
    adamw, _ = run_ember(("AdamW", dict(lr=0.05, weight_decay=0.3)), [leaf(a) for a in arrays], STEPS)
    for a, w in zip(adam, adamw):
        for x, y in zip(a, w):
            np.testing.assert_array_equal(x, y)


def _after_load(cls, saved, **kwargs):
    """The decoupled flag of a `cls` optimizer that loaded `saved`, and its first step from p = 1, g = 1."""
    p = leaf([1.0])
    opt = cls([p], lr=0.1, weight_decay=0.5, **kwargs)
    opt.load_state_dict(saved)
    p.grad = ember.tensor([1.0], dtype=ember.float64)
    opt.step()
    return opt.param_groups[0]["decoupled_weight_decay"], p.item()


def test_load_state_dict_honours_decoupled_weight_decay():
    def saved(cls, drop_key=False, **kwargs):
        sd = cls([leaf([1.0])], lr=0.1, weight_decay=0.5, **kwargs).state_dict()
        if drop_key:  # a checkpoint from a torch that had no such key
            del sd["param_groups"][0]["decoupled_weight_decay"]
        return sd

    # p = 1, g = 1, lr = 0.1, wd = 0.5, first step: L2 decay moves p by lr (the Adam step is lr * sign);
    # decoupled decay scales p by 1 - lr * wd first.
    l2, decoupled = 1.0 - 0.1, 1.0 * (1 - 0.1 * 0.5) - 0.1
    Adam, AdamW = ember.optim.Adam, ember.optim.AdamW
    assert _after_load(Adam, saved(Adam, decoupled_weight_decay=True)) == (True, pytest.approx(decoupled))
    assert _after_load(Adam, saved(Adam), decoupled_weight_decay=True) == (False, pytest.approx(l2))
    assert _after_load(Adam, saved(AdamW, drop_key=True), decoupled_weight_decay=True) == (False, pytest.approx(l2))
    assert _after_load(AdamW, saved(Adam)) == (True, pytest.approx(decoupled))  # AdamW is always decoupled
    if torch is not None:
        for cls, src, drop, kw in [("Adam", "Adam", False, {"decoupled_weight_decay": True}),
                                   ("Adam", "AdamW", True, {}), ("AdamW", "Adam", False, {})]:
            sd = getattr(torch.optim, src)([torch.zeros(1, requires_grad=True)], lr=0.1, weight_decay=0.5,
                                           **kw).state_dict()
            if drop:
                del sd["param_groups"][0]["decoupled_weight_decay"]
            ref = getattr(torch.optim, cls)([torch.zeros(1, requires_grad=True)])
            ref.load_state_dict(sd)
            ours = getattr(ember.optim, cls)([leaf([0.0])])
            ours.load_state_dict(sd)
            assert ours.param_groups[0]["decoupled_weight_decay"] == ref.param_groups[0]["decoupled_weight_decay"]


def test_named_parameters_record_param_names():
    model = ember.nn.Linear(2, 1).double()
    opt = ember.optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)
    group = opt.param_groups[0]
    assert group["param_names"] == ["weight", "bias"]
    assert [id(p) for p in group["params"]] == [id(p) for p in model.parameters()]
    for p in model.parameters():
        p.grad = ember.ones_like(p)
    opt.step()
    saved = opt.state_dict()
    assert saved["param_groups"][0]["param_names"] == ["weight", "bias"]
    assert saved["param_groups"][0]["params"] == [0, 1] and sorted(saved["state"]) == [0, 1]
    # Loading keeps this optimizer's names when the checkpoint has none, else takes the checkpoint's.
    plain = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    plain.load_state_dict(saved)
    assert plain.param_groups[0]["param_names"] == ["weight", "bias"]
    opt.load_state_dict(ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9).state_dict())
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    grouped = ember.optim.Adam([{"params": model.named_parameters(), "lr": 0.3}], lr=0.1)
    assert grouped.param_groups[0]["param_names"] == ["weight", "bias"] and grouped.param_groups[0]["lr"] == 0.3
    with pytest.raises(ValueError, match="cannot add param group without names"):
        opt.add_param_group({"params": [leaf([1.0])]})
    with pytest.raises(ValueError, match="Some param names are missing"):
        ember.optim.SGD([("a", leaf([1.0])), leaf([2.0])], lr=0.1)
    if torch is not None:
        ref = torch.optim.SGD(torch.nn.Linear(2, 1).named_parameters(), lr=0.1, momentum=0.9)
        assert list(ref.state_dict()["param_groups"][0]) == list(
            ember.optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9).state_dict()["param_groups"][0])


def test_step_hooks():
    p = leaf([1.0])
    opt = ember.optim.SGD([p], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt, args, kwargs)))
    post = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", args, kwargs)))
    p.grad = ember.tensor([1.0], dtype=ember.float64)
    opt.step()
    opt.step(closure=None)
    # args holds the optimizer first, as torch passes step's own arguments.
    assert calls == [("pre", True, (opt,), {}), ("post", (opt,), {}),
                     ("pre", True, (opt,), {"closure": None}), ("post", (opt,), {"closure": None})]
    assert p.item() == pytest.approx(0.8)
    pre.remove()
    post.remove()
    calls.clear()
    opt.step()
    assert calls == []
    # A pre-hook may replace the arguments.
    with opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: 7.0})):
        assert opt.step() == 7.0
    with opt.register_step_pre_hook(lambda o, args, kwargs: 5):
        with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\)"):
            opt.step()


def test_global_step_hooks_and_subclass_steps():
    from ember.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
    order = []

    class Scaled(ember.optim.SGD):  # a user optimizer whose step calls the base class's
        def step(self, closure=None):
            order.append("step")
            return super().step(closure)

    p = leaf([1.0])
    opt = Scaled([p], lr=0.1)
    handles = [register_optimizer_step_pre_hook(lambda o, a, k: order.append("global pre")),
               opt.register_step_pre_hook(lambda o, a, k: order.append("pre")),
               opt.register_step_post_hook(lambda o, a, k: order.append("post")),
               register_optimizer_step_post_hook(lambda o, a, k: order.append("global post"))]
    try:
        p.grad = ember.tensor([1.0], dtype=ember.float64)
        opt.step()
        assert order == ["global pre", "pre", "step", "post", "global post"]  # once, around the outer step
        order.clear()
        ember.optim.Adam([leaf([1.0])]).step()
        assert order == ["global pre", "global post"]
    finally:
        for h in handles:
            h.remove()
    order.clear()
    ember.optim.Adam([leaf([1.0])]).step()
    assert order == []


@pytest.mark.parametrize("layout", ["float32", "bfloat16", "transposed"])
@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "Adagrad"])
def test_a_repeated_parameter_is_stepped_once_per_place_on_every_kernel_path(name, layout):
    # The fused kernels (CUDA's one launch, the CPU's work copies for bfloat16 and non-contiguous
    # parameters) step the places of a repeated parameter in turn: the same as two steps of an
    # optimizer holding it once.
    dtype = ember.bfloat16 if layout == "bfloat16" else ember.float32
    def param(seed):
        t = ember.tensor(np.random.default_rng(seed).standard_normal((4, 3)), dtype=dtype, device=DEVICE)
        return (t.t().contiguous().t() if layout == "transposed" else t).requires_grad_()
    w, other, w_ref = param(0), param(1), param(0)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        opt = getattr(ember.optim, name)([w, other, w], lr=0.05)
    ref = getattr(ember.optim, name)([w_ref], lr=0.05)
    for step in range(3):
        g = ember.tensor(np.random.default_rng(10 + step).standard_normal((4, 3)), dtype=dtype, device=DEVICE)
        w.grad, other.grad, w_ref.grad = g.clone(), g.clone(), g.clone()
        opt.step()
        ref.step()
        ref.step()
    assert not w.is_contiguous() if layout == "transposed" else w.is_contiguous()
    assert ember.equal(w.detach(), w_ref.detach()), (w, w_ref)


def test_duplicate_parameters_warn_and_step_each_place():
    # torch warns and keeps both places; each is stepped in turn (its for-loop implementation).
    w, b = leaf([1.0, -2.0, 3.0]), leaf([0.5, 0.5])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        opt = ember.optim.SGD([w, b, w], lr=0.1, momentum=0.9)
    assert len(opt.param_groups[0]["params"]) == 3
    w.grad = ember.tensor([1.0, 1.0, 1.0], dtype=ember.float64)
    b.grad = ember.tensor([1.0, 1.0], dtype=ember.float64)
    opt.step()
    # As in torch's SGD, both places start a buffer (the gradient) on the first step: w moves twice by lr * g.
    np.testing.assert_allclose(w.detach().numpy(), [0.8, -2.2, 2.8])
    np.testing.assert_allclose(b.detach().numpy(), [0.4, 0.4])
    # torch's state_dict numbering: a repeated parameter takes the index of its last place.
    saved = opt.state_dict()
    assert saved["param_groups"][0]["params"] == [2, 1, 2] and sorted(saved["state"]) == [1, 2]
    restored_w, restored_b = leaf([0.0, 0.0, 0.0]), leaf([0.0, 0.0])
    with pytest.warns(UserWarning):
        restored = ember.optim.SGD([restored_w, restored_b, restored_w], lr=0.1, momentum=0.9)
    restored.load_state_dict(saved)
    np.testing.assert_allclose(restored.state[restored_w]["momentum_buffer"].numpy(), [1.0, 1.0, 1.0])
    opt.step()  # from then on one buffer, updated at each place in turn: 0.9 + 1, then 0.9 * 1.9 + 1
    np.testing.assert_allclose(w.detach().numpy(), np.array([0.8, -2.2, 2.8]) - 0.1 * (1.9 + 2.71))
    for name, kwargs in [("Adam", dict(lr=0.1, amsgrad=True)), ("RMSprop", dict(lr=0.1, momentum=0.5, centered=True)),
                         ("Adagrad", dict(lr=0.1))]:
        arrays = initial_arrays(shapes=[(3,), (2,)])
        params = [leaf(a) for a in arrays]
        with pytest.warns(UserWarning):
            opt = getattr(ember.optim, name)([params[0], params[1], params[0]], **kwargs)
        ref = REFS[name](**kwargs)
        expected = [a.copy() for a in arrays]
        for step in range(3):
            for i, p in enumerate(params):
                p.grad = ember.tensor(grad_at(step, i, tuple(p.shape)))
            opt.step()
            for i in (0, 1, 0):  # the reference steps each place, in order
                expected[i] = ref.update(i, expected[i], grad_at(step, i, expected[i].shape), ref.o)
        for p, e in zip(params, expected):
            np.testing.assert_allclose(p.detach().numpy(), e, rtol=1e-10, err_msg=name)
        assert opt.state[params[0]]["step"].item() == 6
        if torch is not None:
            tparams = [torch.tensor(a, requires_grad=True) for a in arrays]
            with pytest.warns(UserWarning):
                topt = getattr(torch.optim, name)([tparams[0], tparams[1], tparams[0]], foreach=False, **kwargs)
            for step in range(3):
                for i, p in enumerate(tparams):
                    p.grad = torch.tensor(grad_at(step, i, tuple(p.shape)))
                topt.step()
            for p, t in zip(params, tparams):
                np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-10, err_msg=name)


def test_a_repeated_parameter_with_state_lists_of_the_wrong_length_is_reported():
    p, g = ember.ones(3), ember.ones(3)
    with pytest.raises(ValueError, match="sgd: got 2 params but 1 momentum_buffers"):
        ember._C._optim_sgd([p, p], [g, g], [None], 0.1, 0.9, 0.0, False, 0.0, False)
    bufs = ember._C._optim_sgd([p, p], [g, g], [], 0.1, 0.9, 0.0, False, 0.0, False)
    assert len(bufs) == 2 and p.tolist() == pytest.approx([0.8] * 3)  # each place started its own buffer
