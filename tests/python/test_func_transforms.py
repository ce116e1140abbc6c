"""ember.func transforms: grad / grad_and_value (argnums, has_aux), vjp, jvp,
jacrev, jacfwd, hessian against closed forms in numpy; vmap against explicit
loops (in_dims, out_dims, nesting, randomness); the per-sample-gradient
recipe with functional_call against a manual loop; torch.func where
importable."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.func import (functional_call, functionalize, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                        linearize, replace_all_batch_norm_modules_, stack_module_state, vjp, vmap)
from harness import torch

CASES = []

RNG = np.random.default_rng(0)
XV = np.array([0.5, -1.2, 2.0])
YV = np.array([1.5, 0.3, -0.7])


def t64(values):
    return ember.tensor(np.asarray(values, dtype=np.float64))


def close(a, b, rtol=1e-10, atol=1e-12):
    a = a.detach().numpy() if isinstance(a, ember.Tensor) else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def f_scalar(x, y):
    return (x.sin() * y).sum() + (x * x).sum()


def test_grad_argnums_and_values():
    x, y = t64(XV), t64(YV)
    close(grad(f_scalar)(x, y), np.cos(XV) * YV + 2 * XV)
    close(grad(f_scalar, argnums=1)(x, y), np.sin(XV))
    gx, gy = grad(f_scalar, argnums=(0, 1))(x, y)
    close(gx, np.cos(XV) * YV + 2 * XV)
    close(gy, np.sin(XV))
    g, value = grad_and_value(f_scalar)(x, y)
    close(value, (np.sin(XV) * YV).sum() + (XV ** 2).sum())
    assert not g.requires_grad and not value.requires_grad and not x.requires_grad
    close(grad(f_scalar, argnums=-1)(x, y), np.sin(XV))


def test_grad_has_aux_and_structures():
    def f(params, x):
        out = (params["w"] * x).sum() + params["b"] ** 2
        return out, {"pred": out.detach() * 2}
    params = {"w": t64(XV), "b": t64(3.0)}
    g, aux = grad(f, has_aux=True)(params, t64(YV))
    assert set(g) == {"w", "b"}
    close(g["w"], YV)
    close(g["b"], 6.0)
    close(aux["pred"], 2 * ((XV * YV).sum() + 9))
    g, (value, aux) = grad_and_value(f, has_aux=True)(params, t64(YV))
    close(value, (XV * YV).sum() + 9)
    # tuples of tensors as one argument
    g = grad(lambda pair: (pair[0] * pair[1]).sum())((t64(XV), t64(YV)))
    assert isinstance(g, tuple)
    close(g[0], YV)
    close(g[1], XV)
    # an input the output ignores gets a zero gradient
    close(grad(lambda a, b: (a * 2).sum(), argnums=1)(t64(XV), t64(YV)), np.zeros(3))


def test_grad_errors():
    with pytest.raises(RuntimeError, match="scalar Tensor"):
        grad(lambda x: x * 2)(t64(XV))
    with pytest.raises(RuntimeError, match="argnums"):
        grad(f_scalar, argnums=2)(t64(XV), t64(YV))
    with pytest.raises(RuntimeError, match="has_aux"):
        grad(lambda x: x.sum(), has_aux=True)(t64(XV))
    with pytest.raises(RuntimeError, match="floating point"):
        grad(lambda x: x.sum())(ember.tensor([1, 2]))


def test_nested_grad_and_hessian():
    x = t64(1.3)
    d3 = grad(grad(grad(lambda x: x.sin())))(x)
    close(d3, -np.cos(1.3))

    def f(x):
        return (x ** 3).sum() + x[0] * x[1]
    want = np.diag(6 * XV)
    want[0, 1] = want[1, 0] = 1
    close(hessian(f)(t64(XV)), want)
    close(jacfwd(jacrev(f))(t64(XV)), want)
    # hessian with respect to the second argument
    close(hessian(lambda a, b: (a * b * b).sum(), argnums=1)(t64(XV), t64(YV)), np.diag(2 * XV))


def test_vjp_and_jvp():
    x = t64(XV)
    out, fn = vjp(lambda x: x.sin() * x, x)
    close(out, np.sin(XV) * XV)
    (g,) = fn(t64(YV))
    close(g, YV * (np.cos(XV) * XV + np.sin(XV)))
    out, fn = vjp(lambda a, b: (a * b, a + b), t64(XV), t64(YV))
    ga, gb = fn((t64([1.0, 1.0, 1.0]), t64([2.0, 2.0, 2.0])))
    close(ga, YV + 2)
    close(gb, XV + 2)
    with pytest.raises(RuntimeError, match="shape"):
        vjp(lambda x: x * 2, x)[1](t64([1.0]))
    out, tangent_out = jvp(lambda x: x.sin() * x, (x,), (t64(YV),))
    close(out, np.sin(XV) * XV)
    close(tangent_out, YV * (np.cos(XV) * XV + np.sin(XV)))
    # a matrix function: J t for y = A x
    A = RNG.standard_normal((2, 3))
    _, jt = jvp(lambda v: t64(A) @ v, (x,), (t64(YV),))
    close(jt, A @ YV)
    _, jt = jvp(lambda a, b: a * b, (t64(XV), t64(YV)), (t64([1.0, 0.0, 0.0]), t64([0.0, 1.0, 0.0])))
    close(jt, [YV[0], XV[1], 0.0])
    with pytest.raises(RuntimeError, match="tuples"):
        jvp(lambda x: x, x, x)


def test_jacrev_jacfwd():
    A = RNG.standard_normal((2, 3))

    def f(x):
        return t64(A) @ x.sin()
    want = A * np.cos(XV)
    close(jacrev(f)(t64(XV)), want)
    close(jacfwd(f)(t64(XV)), want)
    ja, jb = jacrev(lambda a, b: a * b, argnums=(0, 1))(t64(XV), t64(YV))
    close(ja, np.diag(YV))
    close(jb, np.diag(XV))
    j = jacrev(lambda m: m.sum(0))(t64(np.ones((2, 3))))
    assert j.shape == (3, 2, 3)
    close(j, np.stack([np.eye(3)] * 2, 1))
    jac, aux = jacrev(lambda x: (x * 2, x.sum()), has_aux=True)(t64(XV))
    close(jac, 2 * np.eye(3))
    close(aux, XV.sum())


def test_vmap_matches_loop():
    xs = RNG.standard_normal((4, 3))
    ys = RNG.standard_normal((4, 3))
    out = vmap(lambda a, b: (a * b).sum())(t64(xs), t64(ys))
    close(out, (xs * ys).sum(1))
    out = vmap(lambda a, b: a * b, in_dims=(1, None))(t64(xs), t64(YV[:1].repeat(4)))
    assert out.shape == (3, 4)
    close(out, xs.T * YV[0])
    out = vmap(lambda a: a * 2, out_dims=1)(t64(xs))
    close(out, (xs * 2).T)
    a, b = vmap(lambda v: (v.sum(), v * 2))(t64(xs))
    close(a, xs.sum(1))
    close(b, xs * 2)
    d = vmap(lambda v: {"m": v.max()})(t64(xs))
    close(d["m"], xs.max(1))
    # nested: an outer product by two vmaps
    outer = vmap(vmap(lambda u, v: u * v, in_dims=(None, 0)), in_dims=(0, None))(t64(XV), t64(YV))
    close(outer, np.outer(XV, YV))
    # pytree arguments with per-leaf in_dims
    out = vmap(lambda p: p[0] + p[1], in_dims=((0, None),))((t64(xs), t64(YV)))
    close(out, xs + YV)
    # gradients flow through vmap
    w = t64(XV).requires_grad_()
    vmap(lambda r: (r * w).sum())(t64(xs)).sum().backward()
    close(w.grad, xs.sum(0))


def test_vmap_errors_and_randomness():
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap(lambda a, b: a + b)(ember.ones(3), ember.ones(4))
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        vmap(lambda a, b: a + b, in_dims=(0,))(ember.ones(3), ember.ones(3))
    with pytest.raises(ValueError, match="dimensionality"):
        vmap(lambda a: a, in_dims=2)(ember.ones(3, 2))
    with pytest.raises(ValueError, match="at least one input"):
        vmap(lambda a: a, in_dims=None)(ember.ones(3))
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda a: a + ember.rand(()))(ember.ones(3))
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda a: a, randomness="sometimes")
    ember.manual_seed(0)
    same = vmap(lambda a: a + ember.rand(()), randomness="same")(ember.zeros(4)).numpy()
    assert np.all(same == same[0])
    different = vmap(lambda a: a + ember.rand(()), randomness="different")(ember.zeros(4)).numpy()
    assert len(set(different.tolist())) == 4


def _model_and_data():
    ember.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    x = ember.randn(6, 3)
    y = ember.tensor([0, 1, 1, 0, 1, 0])
    return model, x, y


def test_per_sample_gradients_match_manual_loop():
    model, x, y = _model_and_data()
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_fn(params, sample, target):
        logits = functional_call(model, params, (sample.unsqueeze(0),))
        return nn.functional.cross_entropy(logits, target.unsqueeze(0))
    per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x, y)
    for name, g in per_sample.items():
        assert g.shape == (6,) + tuple(params[name].shape)
    for i in range(6):
        model.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for name, p in model.named_parameters():
            close(per_sample[name][i], p.grad, rtol=1e-5, atol=1e-6)
    # the mean of the per-sample gradients is the batch gradient
    model.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    for name, p in model.named_parameters():
        close(per_sample[name].mean(0), p.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_against_torch_func():
    tf = torch.func
    xt, yt = torch.tensor(XV), torch.tensor(YV)

    def ft(x, y):
        return (x.sin() * y).sum() + (x * x).sum()
    close(grad(f_scalar, argnums=(0, 1))(t64(XV), t64(YV))[1], tf.grad(ft, argnums=(0, 1))(xt, yt)[1])
    close(hessian(lambda x: (x.sin() * x.exp()).sum())(t64(XV)), tf.hessian(lambda x: (x.sin() * x.exp()).sum())(xt))
    close(jacrev(lambda x: x.cumsum(0) * x)(t64(XV)), tf.jacrev(lambda x: x.cumsum(0) * x)(xt))
    close(jvp(lambda x: x.tanh(), (t64(XV),), (t64(YV),))[1], tf.jvp(lambda x: x.tanh(), (xt,), (yt,))[1])
    xs = RNG.standard_normal((4, 3))
    close(vmap(lambda a: a.softmax(0), in_dims=1, out_dims=1)(t64(xs)),
          tf.vmap(lambda a: a.softmax(0), in_dims=1, out_dims=1)(torch.tensor(xs)))


def test_ensembles_with_stack_module_state():
    ember.manual_seed(2)
    models = [nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).eval() for _ in range(3)]
    params, buffers = stack_module_state(models)
    assert params["0.weight"].shape == (3, 4, 3) and params["0.weight"].requires_grad
    assert buffers["1.running_mean"].shape == (3, 4)
    x = ember.randn(5, 3)
    base = models[0]

    def run(p, b, data):
        return functional_call(base, (p, b), (data,))
    out = vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    assert out.shape == (3, 5, 2)
    for i, m in enumerate(models):
        close(out[i], m(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="same class"):
        stack_module_state([nn.Linear(2, 2), nn.Conv1d(2, 2, 1)])


def test_linearize_and_replace_batch_norm():
    x = t64(XV)
    out, jvp_fn = linearize(lambda v: v.sin() * v, x)
    close(out, np.sin(XV) * XV)
    close(jvp_fn(t64(YV)), YV * (np.cos(XV) * XV + np.sin(XV)))
    net = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    assert replace_all_batch_norm_modules_(net) is net
    bn = net[1]
    assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    net(ember.randn(4, 3))  # batch statistics, nothing tracked
    assert "1.running_mean" not in net.state_dict()


def test_functionalize_passes_mutating_functions_through():
    def f(x):
        y = x.clone()
        y.mul_(2)
        return (y * x).sum()
    g = functionalize(f)
    close(grad(g)(t64(XV)), 4 * XV)
    with pytest.raises(RuntimeError, match="remove"):
        functionalize(f, remove="views")


def test_jacfwd_columns_match_jacrev_rows():
    A = RNG.standard_normal((5, 3))

    def f(x, y):
        return (t64(A) @ (x.sin() * y), (x * y).sum())
    x, y = t64(XV), t64(YV)
    fwd = jacfwd(f, argnums=(0, 1))(x, y)
    rev = jacrev(f, argnums=(0, 1))(x, y)
    for out_f, out_r in zip(fwd, rev):
        for a, b in zip(out_f, out_r):
            assert a.shape == b.shape
            close(a, b)
    close(fwd[0][0], A * (np.cos(XV) * YV))
    close(fwd[1][1], XV)
    # an output that ignores an input: a zero block
    close(jacfwd(lambda a, b: a * 2, argnums=1)(x, y), np.zeros((3, 3)))
    # matrix inputs and outputs
    m = t64(RNG.standard_normal((2, 3)))
    close(jacfwd(lambda v: v.t() @ v)(m), jacrev(lambda v: v.t() @ v)(m))
    # nested both ways: second derivatives
    f2 = lambda v: (v.exp() * v[0]).sum()  # noqa: E731
    for outer in (jacfwd, jacrev):
        for inner in (jacfwd, jacrev):
            close(outer(inner(f2))(x), hessian(f2)(x), rtol=1e-9)
