"""ember.distributions on CUDA tensors against the CPU: every distribution is a
composition of ember ops, so parameters on the GPU give densities, moments and
KL divergences equal to the CPU's, draws on the GPU with the right statistics,
and reparameterized gradients on the GPU.

Every test needs a CUDA GPU and skips, saying why, without one."""
import math

import numpy as np
import pytest

import ember
import ember.distributions as D
from ember.distributions import constraints, transforms
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends

COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])

# name -> (factory of the distribution from tensors on a device, values to score)
FACTORIES = {
    "Gamma": (lambda t: D.Gamma(t([0.5, 3.0]), t([2.0, 0.7])), [0.3, 4.0]),
    "Chi2": (lambda t: D.Chi2(t([1.5, 4.0])), [0.3, 4.0]),
    "Beta": (lambda t: D.Beta(t([0.5, 3.0]), t([2.0, 0.7])), [0.3, 0.9]),
    "Dirichlet": (lambda t: D.Dirichlet(t([[0.5, 3.0, 1.2]])), [[0.2, 0.5, 0.3]]),
    "LogNormal": (lambda t: D.LogNormal(t([0.5, -1.0]), t([0.6, 0.3])), [0.3, 4.0]),
    "HalfNormal": (lambda t: D.HalfNormal(t([2.0, 0.3])), [0.3, 4.0]),
    "StudentT": (lambda t: D.StudentT(t([3.5, 5.0]), t([0.1, -1.0]), t([2.0, 0.3])), [0.3, 4.0]),
    "Cauchy": (lambda t: D.Cauchy(t([0.5, -1.0]), t([2.0, 0.3])), [0.3, 4.0]),
    "Gumbel": (lambda t: D.Gumbel(t([0.5, -1.0]), t([2.0, 0.3])), [0.3, 4.0]),
    "Poisson": (lambda t: D.Poisson(t([0.5, 30.0])), [0.0, 4.0]),
    "Binomial": (lambda t: D.Binomial(t([5.0, 5.0]), t([0.2, 0.7])), [0.0, 4.0]),
    "Geometric": (lambda t: D.Geometric(t([0.2, 0.7])), [0.0, 4.0]),
    "Multinomial": (lambda t: D.Multinomial(4, t([0.2, 0.3, 0.5])), [1.0, 0.0, 3.0]),
    "MultivariateNormal": (lambda t: D.MultivariateNormal(t([0.1, -0.2, 0.3]), covariance_matrix=t(COV)),
                           [0.3, 0.1, -0.5]),
    "LowRankMultivariateNormal": (lambda t: D.LowRankMultivariateNormal(t([0.1, -0.2, 0.3]), t([[1.0], [0.5], [0.2]]),
                                                                     t([1.0, 0.5, 2.0])), [0.3, 0.1, -0.5]),
    "HalfCauchy": (lambda t: D.HalfCauchy(t([2.0, 0.3])), [0.3, 4.0]),
    "Pareto": (lambda t: D.Pareto(t([0.5, 1.0]), t([2.5, 3.0])), [0.7, 4.0]),
    "Weibull": (lambda t: D.Weibull(t([0.5, 2.0]), t([2.5, 0.7])), [0.3, 4.0]),
    "InverseGamma": (lambda t: D.InverseGamma(t([2.5, 3.0]), t([2.0, 0.7])), [0.3, 4.0]),
    "Kumaraswamy": (lambda t: D.Kumaraswamy(t([0.5, 3.0]), t([2.0, 0.7])), [0.3, 0.9]),
    "FisherSnedecor": (lambda t: D.FisherSnedecor(t([3.0, 5.0]), t([5.0, 7.0])), [0.3, 4.0]),
    "NegativeBinomial": (lambda t: D.NegativeBinomial(t([3.0, 5.5]), t([0.3, 0.6])), [0.0, 4.0]),
    "LogisticNormal": (lambda t: D.LogisticNormal(t([0.5, 3.0]), t([2.0, 0.7])), [0.3, 0.5, 0.2]),
    "VonMises": (lambda t: D.VonMises(t([0.5, -1.0]), t([2.0, 0.3])), [0.1, 3.0]),
    "ContinuousBernoulli": (lambda t: D.ContinuousBernoulli(t([0.2, 0.4995])), [0.1, 0.3]),
    "LKJCholesky": (lambda t: D.LKJCholesky(3, t([0.5, 2.0])),
                    np.linalg.cholesky([[1.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.0]]).tolist()),
    "Wishart": (lambda t: D.Wishart(t([4.0, 6.5]), t(COV)), (np.eye(3) + 0.1).tolist()),
    "GeneralizedPareto": (lambda t: D.GeneralizedPareto(t([0.1, 0.0]), t([2.0, 1.0]), t([0.4, -0.3])), [1.5, 0.7]),
    "Mixture": (lambda t: D.MixtureSameFamily(D.Categorical(logits=t([0.1, 0.5, -0.3])),
                                              D.Normal(t([0.0, 1.0, 2.0]), t([1.0, 0.5, 2.0]))), [0.3, 2.0]),
    "RelaxedBernoulli": (lambda t: D.RelaxedBernoulli(t(0.5), probs=t([0.2, 0.7])), [0.3, 0.9]),
    "RelaxedOneHotCategorical": (lambda t: D.RelaxedOneHotCategorical(t(0.5), probs=t([0.2, 0.7, 0.1])),
                                 [0.3, 0.6, 0.1]),
}


def on(device):
    return lambda values: ember.tensor(np.asarray(values, dtype=np.float64), device=device)


def cpu_numpy(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_scores_and_moments_match_cpu(name):
    factory, values = FACTORIES[name]
    cpu, gpu = factory(on("cpu")), factory(on("cuda"))
    lp = gpu.log_prob(on("cuda")(values))
    if hasattr(cpu, "cdf") and name in ("Gamma", "Chi2", "Weibull", "Pareto", "HalfCauchy", "Kumaraswamy"):
        np.testing.assert_allclose(cpu_numpy(gpu.cdf(on("cuda")(values))), cpu_numpy(cpu.cdf(on("cpu")(values))),
                                   rtol=1e-10)
    assert lp.device.type == "cuda"
    np.testing.assert_allclose(cpu_numpy(lp), cpu_numpy(cpu.log_prob(on("cpu")(values))), rtol=1e-10)
    for attr in ("mean", "variance"):
        try:
            want = getattr(cpu, attr)
        except NotImplementedError:
            continue
        np.testing.assert_allclose(cpu_numpy(getattr(gpu, attr)), cpu_numpy(want), rtol=1e-10)
    expanded = gpu.expand((3,) + tuple(gpu.batch_shape))
    assert expanded.sample().device.type == "cuda"
    try:
        want = cpu.entropy()
    except NotImplementedError:
        return
    # Entropies near zero (ContinuousBernoulli at 0.4995: -1.7e-7) are differences of terms of size ~1,
    # so the two backends' libm may differ there by an ulp of those terms.
    np.testing.assert_allclose(cpu_numpy(gpu.entropy()), cpu_numpy(want), rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_samples_on_gpu(name):
    factory, _ = FACTORIES[name]
    d = factory(on("cuda"))
    ember.manual_seed(0)
    s = d.sample((20000,))
    assert s.device.type == "cuda"
    assert tuple(s.shape) == (20000,) + tuple(d.batch_shape) + tuple(d.event_shape)
    support = d.support
    if support is not None and not constraints.is_dependent(support):
        assert bool(support.check(s).all())
    if name in ("Cauchy", "RelaxedBernoulli", "RelaxedOneHotCategorical", "LogisticNormal",
                "VonMises", "LKJCholesky"):
        return
    s = cpu_numpy(s)
    mean, var = cpu_numpy(d.mean), cpu_numpy(d.variance)
    finite = np.isfinite(var)
    np.testing.assert_allclose(s.mean(0)[finite], mean[finite], rtol=0.05, atol=0.05)


def test_reparameterized_gradients_on_gpu():
    ember.manual_seed(1)
    a = ember.tensor([0.4, 3.0], dtype=ember.float64, device="cuda", requires_grad=True)
    rate = ember.tensor([1.0, 2.0], dtype=ember.float64, device="cuda", requires_grad=True)
    D.Gamma(a, rate).rsample((20000,)).mean(0).sum().backward()
    assert a.grad.device.type == "cuda"
    np.testing.assert_allclose(cpu_numpy(a.grad), [1.0, 0.5], rtol=0.06)
    conc = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, device="cuda", requires_grad=True)
    D.Dirichlet(conc).rsample((20000,))[:, 0].mean().backward()
    np.testing.assert_allclose(cpu_numpy(conc.grad), [5 / 36, -1 / 36, -1 / 36], atol=0.01)
    loc = ember.tensor([0.1, -0.2, 0.3], dtype=ember.float64, device="cuda", requires_grad=True)
    tril = ember.tensor(np.linalg.cholesky(COV), device="cuda", requires_grad=True)
    D.MultivariateNormal(loc, scale_tril=tril).rsample((5,)).sum().backward()
    np.testing.assert_allclose(cpu_numpy(loc.grad), [5.0, 5.0, 5.0])


def test_kl_transforms_and_constraints_on_gpu():
    t = on("cuda")
    c = on("cpu")
    for make_p, make_q in (
            (lambda f: D.Gamma(f([0.5, 3.0]), f([2.0, 0.7])), lambda f: D.Gamma(f([1.5, 2.0]), f([1.0, 1.7]))),
            (lambda f: D.Beta(f([0.5, 3.0]), f([2.0, 0.7])), lambda f: D.Beta(f([1.5, 2.0]), f([1.0, 1.7]))),
            (lambda f: D.MultivariateNormal(f([0.1, 0.2, 0.3]), f(COV)),
             lambda f: D.MultivariateNormal(f([0.0, 1.0, 0.0]), scale_tril=f(np.diag([1.0, 2.0, 0.5]))))):
        got = D.kl_divergence(make_p(t), make_q(t))
        np.testing.assert_allclose(cpu_numpy(got), cpu_numpy(D.kl_divergence(make_p(c), make_q(c))), rtol=1e-10)
    x = np.array([[0.3, -1.2, 2.0], [0.1, 0.5, -0.4]])
    for tr in (transforms.StickBreakingTransform(), transforms.SigmoidTransform(), transforms.TanhTransform(),
               D.biject_to(constraints.interval(-1.0, 3.0)), transforms.CorrCholeskyTransform()):
        y = tr(t(x))
        assert y.device.type == "cuda"
        np.testing.assert_allclose(cpu_numpy(y), cpu_numpy(tr(c(x))), rtol=1e-12)
        np.testing.assert_allclose(cpu_numpy(tr.log_abs_det_jacobian(t(x), y)),
                                   cpu_numpy(tr.log_abs_det_jacobian(c(x), tr(c(x)))), rtol=1e-10)
    assert constraints.positive_definite.check(t(COV)).item()
    assert constraints.simplex.check(t([0.2, 0.8])).item()
    with pytest.raises(ValueError, match="Expected parameter rate"):
        D.Gamma(t([1.0]), t([-1.0]))
    assert math.isfinite(D.Binomial(t([3.0]), t([0.5])).entropy().item())
