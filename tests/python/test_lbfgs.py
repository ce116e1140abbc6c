"""optim.LBFGS on the Rosenbrock function: it converges, with and without the
strong-Wolfe line search, and follows torch.optim.LBFGS's iterates (same
evaluation counts) where torch is importable."""
import numpy as np
import pytest

import ember
from harness import torch

CASES = []


def rosenbrock_run(fw, line_search_fn, steps, max_iter=20, history_size=100, start=(-1.5, 2.0)):
    x = fw.tensor(list(start), dtype=fw.float64, requires_grad=True)
    opt = fw.optim.LBFGS([x], lr=1, max_iter=max_iter, history_size=history_size, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return x.detach().numpy().copy(), opt.state[x]["func_evals"]


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_converges_on_rosenbrock(line_search_fn):
    x, evals = rosenbrock_run(ember, line_search_fn, steps=5)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-4)
    assert evals <= 5 * 25 + 5


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("line_search_fn,steps,max_iter,history", [(None, 1, 8, 100), (None, 1, 6, 2),
                                                                   ("strong_wolfe", 5, 20, 100),
                                                                   ("strong_wolfe", 2, 8, 3)])
def test_follows_torch(line_search_fn, steps, max_iter, history):
    ours, our_evals = rosenbrock_run(ember, line_search_fn, steps, max_iter, history)
    theirs, their_evals = rosenbrock_run(torch, line_search_fn, steps, max_iter, history)
    # Rounding differences grow along the iterations (the steps are chaotic): a few ulps become ~1e-11.
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)
    assert our_evals == their_evals


def test_a_least_squares_problem_and_arguments():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((20, 3)), rng.standard_normal(20)
    w = ember.zeros(3, dtype=ember.float64, requires_grad=True)
    A, B = ember.tensor(a), ember.tensor(b)
    opt = ember.optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((A @ w - B) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-6)
    with pytest.raises(RuntimeError, match="needs a closure"):
        opt.step(None)
    with pytest.raises(ValueError, match="only 'strong_wolfe'"):
        ember.optim.LBFGS([w], line_search_fn="armijo")
    with pytest.raises(ValueError, match="per-parameter options"):
        ember.optim.LBFGS([{"params": [w]}, {"params": [ember.zeros(1, requires_grad=True)]}])


def test_result_type_and_can_cast():
    assert ember.result_type(ember.tensor([1]), 1.5) == ember.float32
    assert ember.result_type(ember.tensor([1], dtype=ember.int32), ember.tensor(2)) == ember.int32
    assert ember.result_type(3, ember.tensor([1], dtype=ember.uint8)) == ember.uint8
    assert not ember.can_cast(ember.float64, ember.int32) and ember.can_cast(ember.int32, ember.float16)
    assert not ember.can_cast(ember.int64, ember.bool) and ember.can_cast(ember.bool, ember.int8)
    with pytest.raises(TypeError, match="result_type: expected at least one Tensor"):
        ember.result_type(1, 2)
