"""The autograd engine and its Python API, against PyTorch's semantics:
backward and autograd.grad, graph lifetime, in-place checks, grad modes,
hooks, leaves, double backward, deep graphs and gradcheck itself."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import ember
from harness import assert_close, make, random_array


def leaf(values, dtype=ember.float64):
    return ember.tensor(values, dtype=dtype, requires_grad=True)


# ---- backward

def test_backward_scalar_default_gradient():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    assert_close(x.grad, [2.0, 4.0, 6.0])


def test_backward_non_scalar_needs_gradient_and_names_shape():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * 2
    with pytest.raises(RuntimeError, match=r"grad can be implicitly created only for scalar outputs.*\[2, 2\]"):
        y.backward()
    y.backward(ember.tensor([[1.0, 0.0], [0.5, 2.0]], dtype=ember.float64))
    assert_close(x.grad, [[2.0, 0.0], [1.0, 4.0]])


def test_backward_gradient_shape_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"\[3\].*\[2\]"):
        (x * 2).backward(ember.ones(3, dtype=ember.float64))


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.ones(2).sum().backward()


def test_gradients_accumulate_across_backward_calls():
    x = leaf([1.0, -2.0])
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert_close(x.grad, [3.0 + 2.0, 3.0 - 4.0])
    x.grad = None
    (x * 3).sum().backward()
    assert_close(x.grad, [3.0, 3.0])


def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()  # mul saves its inputs
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, [4.0, 8.0])


def test_autograd_grad_frees_graph_too():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    ember.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="second time"):
        ember.autograd.grad(y, x)


def test_functional_backward():
    x = leaf([1.0, 2.0])
    y = leaf([3.0])
    ember.autograd.backward([(x * 2).sum(), (y * y).sum()])
    assert_close(x.grad, [2.0, 2.0])
    assert_close(y.grad, [6.0])


# ---- in-place modification of saved tensors

def test_modified_saved_input_raises_naming_op():
    w = leaf([1.0, 2.0])
    a = w * 2
    b = a * a  # saves a
    a.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*MulBackward0.*version 1; expected version 0"):
        b.sum().backward()


def test_modified_saved_input_of_div_names_div():
    x = leaf([1.0, 2.0])
    d = x * 1
    y = ember.div(x, d)
    d.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been modified "
                                           "by an inplace operation.*DivBackward0"):
        y.sum().backward()


def test_inplace_on_unsaved_tensor_is_fine():
    x = leaf([1.0, 2.0])
    a = x * 2
    b = a + 1  # add saves nothing
    a.mul_(10)
    b.sum().backward()
    assert_close(x.grad, [2.0, 2.0])


def test_inplace_through_a_view_bumps_the_shared_version():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    a = x * 1
    y = a * a
    with ember.no_grad():
        a.t().mul_(2)
    with pytest.raises(RuntimeError, match="inplace"):
        y.sum().backward()


# ---- grad modes

def test_no_grad_context_and_decorator():
    x = leaf([1.0])
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        y = x * 2
    assert ember.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None

    @ember.no_grad()
    def f(t):
        assert not ember.is_grad_enabled()
        return t * 2

    assert not f(x).requires_grad
    assert ember.is_grad_enabled()


def test_no_grad_restores_on_exception_and_nests():
    ng = ember.no_grad()
    with pytest.raises(KeyError):
        with ng:
            raise KeyError
    assert ember.is_grad_enabled()
    with ng:
        with ng:  # the same instance entered twice
            pass
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf([1.0])
    with ember.no_grad():
        with ember.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and not z.requires_grad

    @ember.enable_grad()
    def f():
        return (x * 2).requires_grad

    with ember.no_grad():
        assert f()


def test_set_grad_enabled_function_context_and_decorator():
    x = leaf([1.0])
    try:
        ember.set_grad_enabled(False)
        assert not ember.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        ember.set_grad_enabled(True)
    assert ember.is_grad_enabled()
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with ember.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()

    @ember.set_grad_enabled(False)
    def f():
        return ember.is_grad_enabled()

    assert ember.is_grad_enabled(), "decorating must not switch grad mode off"
    assert f() is False
    assert ember.is_grad_enabled()


def test_inference_mode():
    x = leaf([1.0])
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled()
        assert not ember.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert not ember.is_inference_mode_enabled()
    assert ember.is_grad_enabled()
    with ember.inference_mode(False):
        assert (x * 2).requires_grad

    @ember.inference_mode()
    def f():
        return ember.is_inference_mode_enabled()

    assert f() and not ember.is_inference_mode_enabled()


def test_inference_tensors_cannot_be_saved_for_backward():
    # PyTorch's rule: tensors made under inference_mode (and their views) may
    # be read later but not saved by an op autograd records.
    with ember.inference_mode():
        x = ember.ones(2)
        v = x[:1]
    assert x.is_inference() and v.is_inference() and not ember.ones(1).is_inference()
    with ember.no_grad():
        assert not ember.ones(1).is_inference()
    w = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="MulBackward0: inference tensors cannot be saved for backward"):
        w * x
    (w + x).sum().backward()  # add saves nothing: allowed, as in PyTorch
    assert w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="requires_grad=True on an inference tensor"):
        x.requires_grad_()
    y = x.clone()  # outside inference mode: a normal tensor
    assert not y.is_inference()
    (w * y).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]


def test_grad_mode_generator_decorator():
    @ember.no_grad()
    def gen():
        for _ in range(2):
            yield ember.is_grad_enabled()

    g = gen()
    assert next(g) is False
    assert ember.is_grad_enabled()  # not leaked while suspended
    assert next(g) is False


def test_grad_mode_is_thread_local():
    x = leaf([1.0])
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with ember.no_grad():
            entered.set()
            release.wait(5)
            seen["worker"] = (x * 2).requires_grad

    t = threading.Thread(target=worker)
    t.start()
    assert entered.wait(5)
    seen["main_enabled"] = ember.is_grad_enabled()
    seen["main"] = (x * 2).requires_grad
    release.set()
    t.join()
    assert seen == {"main_enabled": True, "main": True, "worker": False}


# ---- leaves, detach, requires_grad

def test_leaf_and_grad_fn_names():
    x = leaf([1.0, 2.0])
    y = leaf([3.0, 4.0])
    assert x.is_leaf and x.grad_fn is None
    assert (x * y).grad_fn.name() == "MulBackward0"
    assert (x + y).grad_fn.name() == "AddBackward0"
    assert (x - y).grad_fn.name() == "SubBackward0"
    assert (x / y).grad_fn.name() == "DivBackward0"
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert x.mean().grad_fn.name() == "MeanBackward0"
    z = x * y
    assert not z.is_leaf
    assert "MulBackward0" in repr(z.grad_fn)
    assert ember.ones(2).is_leaf and (ember.ones(2) * 2).is_leaf  # no grad: still a leaf


def test_next_functions():
    x = leaf([1.0, 2.0])
    y = leaf([3.0, 4.0])
    nf = (x * y).grad_fn.next_functions
    assert len(nf) == 2
    assert [f.name() for f, _ in nf] == ["AccumulateGrad", "AccumulateGrad"]
    assert [i for _, i in nf] == [0, 0]
    nf = (x * 2).grad_fn.next_functions
    assert nf[0][0].name() == "AccumulateGrad" and nf[1][0] is None
    s = (x * y).sum()
    assert s.grad_fn.next_functions[0][0].name() == "MulBackward0"


def test_requires_grad_on_integer_tensor_raises():
    with pytest.raises(RuntimeError, match="floating point"):
        ember.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        ember.tensor([1, 2], requires_grad=True)
    t = ember.tensor([1, 2])
    with pytest.raises(RuntimeError):
        t.requires_grad = True
    t.requires_grad_(False)  # turning it off is always fine


def test_requires_grad_setters():
    x = ember.ones(2)
    assert not x.requires_grad
    assert x.requires_grad_() is not None and x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)


def test_detach_shares_memory_and_cuts_graph():
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.mul_(10)  # same storage as y
    assert y.tolist() == [20.0, 40.0]
    y.sum().backward()  # add/mul by constant saved nothing of y
    assert_close(x.grad, [2.0, 2.0])


def test_detach_in_place():
    x = leaf([1.0, 2.0])
    y = x * 2
    assert y.detach_() is not None
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None


def test_data_read_and_assign():
    x = leaf([1.0, 2.0])
    d = x.data
    assert not d.requires_grad
    d.mul_(3)  # writes into x without autograd noticing a leaf update
    assert x.tolist() == [3.0, 6.0]
    x.data = ember.tensor([5.0, 6.0, 7.0], dtype=ember.float64)
    assert x.requires_grad and x.is_leaf and x.shape == (3,)
    (x * x).sum().backward()
    assert_close(x.grad, [10.0, 12.0, 14.0])


def test_grad_assignment_checks():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"\[2\].*\[3\]"):
        x.grad = ember.zeros(2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = ember.zeros(3, dtype=ember.float32)
    x.grad = ember.ones(3, dtype=ember.float64)
    (x * 2).sum().backward()
    assert_close(x.grad, [3.0, 3.0, 3.0])
    x.grad = None
    assert x.grad is None


def test_grad_is_none_before_backward_and_on_non_leaves():
    x = leaf([1.0])
    y = x * 2
    assert x.grad is None
    y.sum().backward()
    assert y.grad is None and x.grad is not None


def test_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert_close(y.grad, [6.0, 12.0])
    assert_close(x.grad, [18.0, 36.0])
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        ember.ones(2).retain_grad()


# ---- graph shapes

def test_diamond_sums_gradients():
    x = leaf([1.0, 2.0])
    a = x * 2
    y = a * x + a * 3 + x  # x reaches y along four paths
    y.sum().backward()
    # y = 2x^2 + 6x + x -> 4x + 7
    assert_close(x.grad, [11.0, 15.0])


def test_broadcast_gradients_reduce_to_input_shape():
    a = ember.tensor(random_array((3, 1), np.float64), requires_grad=True)
    b = ember.tensor(random_array((4,), np.float64), requires_grad=True)
    (a * b).sum().backward()
    bn = b.detach().numpy()
    an = a.detach().numpy()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    assert_close(a.grad, np.full((3, 1), bn.sum()))
    assert_close(b.grad, np.full(4, an.sum()))


def test_gradient_dtype_follows_input():
    a = ember.tensor([1.0, 2.0], dtype=ember.float32, requires_grad=True)
    b = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == ember.float32 and b.grad.dtype == ember.float64


def test_unused_branch_and_non_float_outputs():
    x = leaf([1.0, 2.0])
    y = leaf([1.0, 2.0])
    out = (x * 2).sum()
    _ = y * 5  # not part of out
    out.backward()
    assert y.grad is None


def test_deep_chain_backward_and_teardown():
    x = leaf([1.0])
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.sum().backward(retain_graph=True)
    assert_close(x.grad, [1.0])
    (g,) = ember.autograd.grad(y.sum(), x)
    assert_close(g, [1.0])
    del y  # tearing down 5000 nodes


def test_very_deep_graph_on_a_small_stack_does_not_crash():
    # Recursive node destruction or graph walks overflow a 256 KiB thread stack
    # long before 20000 nodes; a crash is reported as this test failing.
    script = textwrap.dedent("""
        import threading, ember
        threading.stack_size(256 * 1024)
        def run():
            x = ember.tensor([1.0], requires_grad=True)
            y = x
            for _ in range(20000):
                y = y * 1.0
            (g,) = ember.autograd.grad(y.sum(), x, retain_graph=True)
            y.sum().backward()
            assert x.grad.tolist() == [1.0] and g.tolist() == [1.0]
            del y, g
            print("ok")
        t = threading.Thread(target=run)
        t.start()
        t.join()
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and "ok" in r.stdout, f"rc={r.returncode}\n{r.stdout}\n{r.stderr}"


# ---- autograd.grad

def test_grad_with_grad_outputs():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    (g,) = ember.autograd.grad(y, x, grad_outputs=ember.tensor([1.0, 0.5, 2.0], dtype=ember.float64))
    assert_close(g, [2.0, 2.0, 12.0])
    assert x.grad is None  # grad() does not accumulate


def test_grad_multiple_inputs_and_outputs():
    a = leaf([2.0])
    b = leaf([3.0])
    ga, gb = ember.autograd.grad([(a * b).sum(), (a * a).sum()], [a, b])
    assert_close(ga, [3.0 + 4.0])
    assert_close(gb, [2.0])


def test_grad_allow_unused():
    x = leaf([1.0])
    z = leaf([1.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph.*allow_unused=True"):
        ember.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = ember.autograd.grad(y, [x, z], allow_unused=True)
    assert_close(gx, [2.0])
    assert gz is None


def test_grad_of_non_leaf_input():
    x = leaf([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    (gh,) = ember.autograd.grad(y, h)
    assert_close(gh, [6.0, 12.0])


def test_grad_input_without_requires_grad():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.autograd.grad((x * 2).sum(), ember.ones(1))


def test_double_backward_cube():
    xs = np.array([0.5, -1.0, 2.0])
    x = leaf(xs.tolist())
    y = (x * x * x).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    assert_close(g, 3 * xs ** 2)
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert_close(gg, 6 * xs)


def test_double_backward_grad_norm_penalty():
    ws = np.array([0.5, -1.5, 2.0])
    w = leaf(ws.tolist())
    loss = (w * w * w).sum()
    (g,) = ember.autograd.grad(loss, w, create_graph=True)  # 3 w^2
    penalty = (g * g).sum()  # 9 w^4
    penalty.backward()
    assert_close(w.grad, 36 * ws ** 3)


def test_backward_create_graph_makes_grad_differentiable():
    x = leaf([2.0])
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (gg,) = ember.autograd.grad(x.grad.sum(), x)
    assert_close(gg, [12.0])


# ---- hooks

def test_hook_on_leaf_replaces_gradient_and_can_be_removed():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    assert_close(x.grad, [6.0, 6.0])
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert_close(x.grad, [3.0, 3.0])


def test_hook_on_leaf_applies_to_autograd_grad():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    (g,) = ember.autograd.grad((x * 3).sum(), x)
    assert_close(g, [30.0, 30.0])


def test_hook_on_non_leaf():
    x = leaf([1.0, 2.0])
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))  # observe only
    h = y.register_hook(lambda g: g * 0)
    (y * y).sum().backward(retain_graph=True)
    assert seen == [[4.0, 8.0]]
    assert_close(x.grad, [0.0, 0.0])
    h.remove()
    x.grad = None
    (y * y).sum().backward()
    assert_close(x.grad, [8.0, 16.0])


def test_hook_errors():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ember.ones(2).register_hook(lambda g: g)

    def boom(g):
        raise ValueError("boom from hook")

    h = x.register_hook(boom)
    with pytest.raises(ValueError, match="boom from hook"):
        (x * 2).sum().backward()
    h.remove()
    h = x.register_hook(lambda g: ember.zeros(5, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"hook.*size.*\[2\].*\[5\]"):
        (x * 2).sum().backward()
    h.remove()
    h = x.register_hook(lambda g: 5)
    with pytest.raises(TypeError, match="hook"):
        (x * 2).sum().backward()
    h.remove()


# ---- gradcheck itself

def test_gradcheck_passes_on_correct_gradients():
    a = make(random_array((2, 3), np.float64), requires_grad=True)
    b = make(random_array((3,), np.float64, domain=(0.5, 2.0)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda p, q: (p * q) / q.sum(), (a, b))


def test_gradcheck_detects_a_wrong_gradient_via_leaf_hook():
    x = make(random_array((3,), np.float64), requires_grad=True)
    x.register_hook(lambda g: g * 2)  # backward now reports twice the true gradient
    with pytest.raises(ember.autograd.GradcheckError, match="input 0"):
        ember.autograd.gradcheck(lambda t: t * t, (x,))
    assert ember.autograd.gradcheck(lambda t: t * t, (x,), raise_exception=False) is False


def test_gradcheck_detects_a_wrong_gradient_inside_the_function():
    def wrong(t):
        y = t * 3
        y.register_hook(lambda g: g * 1.5)
        return y

    x = make(random_array((2, 2), np.float64), requires_grad=True)
    with pytest.raises(ember.autograd.GradcheckError):
        ember.autograd.gradcheck(wrong, (x,))


def test_gradcheck_non_contiguous_input():
    base = random_array((3, 2), np.float64)
    x = make(np.ascontiguousarray(base.T)).t()  # stored transposed
    x.requires_grad_()
    assert not x.is_contiguous()
    assert ember.autograd.gradcheck(lambda t: t * t * ember.tensor([1.0, 2.0], dtype=ember.float64, device=t.device),
                                    (x,))


def test_gradcheck_perturbs_through_a_host_copy_as_for_a_gpu_input():
    """The path gradcheck takes for an input off the CPU (a perturbed host
    copy written back with copy_), driven here on a CPU input: it finds the
    same Jacobian as the numpy-view path and leaves the input as it was."""
    from ember.autograd import _numerical_jacobian
    base = random_array((3, 2), np.float64)
    x = ember.tensor(np.ascontiguousarray(base.T)).t().requires_grad_()  # non-contiguous
    w = ember.tensor([1.0, -2.0], dtype=ember.float64)
    fn = lambda t: (t * t * w).sum(0)  # noqa: E731
    via_copy = _numerical_jacobian(fn, (x,), 0, 1e-6, on_host=False)
    np.testing.assert_array_equal(x.detach().numpy(), base)
    via_view = _numerical_jacobian(fn, (x,), 0, 1e-6, on_host=True)
    np.testing.assert_allclose(via_copy, via_view, rtol=1e-9, atol=1e-9)
    expected = np.zeros((2, 6))
    for i in range(3):
        for j in range(2):
            expected[j, i * 2 + j] = 2 * base[i, j] * [1.0, -2.0][j]
    np.testing.assert_allclose(via_copy, expected, rtol=1e-6, atol=1e-6)


def test_gradcheck_rejects_float32():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="float64"):
        ember.autograd.gradcheck(lambda t: t * 2, (x,))


def test_backward_inputs_limits_accumulation():
    a = leaf([1.0, 2.0])
    b = leaf([3.0, 4.0])
    h = a * b
    (h * 2).sum().backward(inputs=[a], retain_graph=True)
    assert_close(a.grad, [6.0, 8.0])
    assert b.grad is None
    (h * 2).sum().backward(inputs=[h])  # a non-leaf's .grad, as in torch
    assert_close(h.grad, [2.0, 2.0])
    assert_close(a.grad, [6.0, 8.0])
    ember.autograd.backward([(a * b).sum()], inputs=[b])
    assert_close(b.grad, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (a * b).sum().backward(inputs=[])


def test_concurrent_backward_into_one_leaf():
    w = leaf([1.0, 1.0])
    errors = []

    def worker():
        try:
            for _ in range(100):
                (w * 2).sum().backward()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert_close(w.grad, [800.0, 800.0])


def test_grad_of_intermediate_does_not_run_its_node():
    x = leaf([1.0, 2.0])
    h = x * 3
    y = h * h
    # Only y's node runs: h's saved tensors stay usable by a later backward.
    (gh,) = ember.autograd.grad(y.sum(), h)
    assert_close(gh, [6.0, 12.0])
    h.sum().backward()
    assert_close(x.grad, [3.0, 3.0])


def test_grad_multiple_roots_sharing_a_path():
    x = leaf([2.0])
    y = x * x
    z = y * 3
    ember.autograd.backward([y.sum(), z.sum()])  # z's gradient flows through y too
    assert_close(x.grad, [4.0 * 4.0])


def test_bare_decorators():
    @ember.no_grad
    def f():
        return ember.is_grad_enabled()

    @ember.inference_mode
    def g():
        return ember.is_inference_mode_enabled()

    with ember.no_grad():
        @ember.enable_grad
        def h():
            return ember.is_grad_enabled()
        assert h()
    assert f() is False and g() is True and ember.is_grad_enabled()


def test_grad_materialize_grads():
    x = leaf([1.0, 2.0])
    z = leaf([3.0])
    gx, gz = ember.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
    assert_close(gx, [2.0, 2.0])
    assert_close(gz, [0.0])


def test_post_accumulate_grad_hook():
    w = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda p: seen.append((p, p.grad.tolist())))
    (w * 3).sum().backward()
    (w * 2).sum().backward()
    assert [g for _, g in seen] == [[3.0, 3.0], [5.0, 5.0]]
    assert seen[0][0] is w  # the parameter itself, as in torch
    ember.autograd.grad((w * w).sum(), w)  # returns, does not accumulate: no hook
    assert len(seen) == 2
    handle.remove()
    w.sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="must return None"):
        w.register_post_accumulate_grad_hook(lambda p: p)
        w.sum().backward()


def test_queue_callback_runs_at_end_of_backward():
    a = leaf([1.0])
    b = leaf([2.0])
    order = []

    def hook(p):
        order.append("a")
        ember._C._queue_callback(lambda: order.append(("callback", b.grad is not None)))

    a.register_post_accumulate_grad_hook(hook)
    b.register_post_accumulate_grad_hook(lambda p: order.append("b"))
    (a * b).sum().backward()
    assert sorted(order[:2]) == ["a", "b"] and order[2] == ("callback", True)
    with pytest.raises(RuntimeError, match="while a backward pass is running"):
        ember._C._queue_callback(lambda: None)

    def failing():
        raise ValueError("from the callback")

    c = leaf([1.0])
    c.register_hook(lambda g: ember._C._queue_callback(failing))
    with pytest.raises(ValueError, match="from the callback"):
        (c * 2).sum().backward()


def test_repeated_uses_sum_in_place_without_touching_incoming_gradients():
    # The engine adds a third and later gradient into its own running sum in place; the
    # gradients nodes hand it (and the caller's grad_outputs) must stay as they were.
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    seen = []
    y.register_hook(lambda g: seen.append(g.clone()))
    z = y + y + y + y + y  # y reaches the engine five times
    seed = ember.ones(2)
    z.backward(seed)
    assert seen[0].tolist() == [5.0, 5.0] and x.grad.tolist() == [5.0, 5.0]
    assert seed.tolist() == [1.0, 1.0]
    # One grad_outputs tensor given for several outputs of one graph.
    a = ember.tensor([3.0], requires_grad=True)
    outs = [a * k for k in (1.0, 2.0, 3.0, 4.0)]
    g = ember.tensor([1.0])
    (ga,) = ember.autograd.grad(outs, [a], [g, g, g, g])
    assert ga.tolist() == [10.0] and g.tolist() == [1.0]


def test_repeated_uses_under_create_graph_stay_differentiable():
    x = ember.tensor([2.0], requires_grad=True)
    y = x * x
    z = y + y + y + y
    (gx,) = ember.autograd.grad(z, [x], create_graph=True)  # 8 x
    assert gx.tolist() == [16.0]
    (ggx,) = ember.autograd.grad(gx, [x])
    assert ggx.tolist() == [8.0]


@pytest.mark.parametrize("shape", [(5, 3), (2, 5, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_transposed_weight_gradient_keeps_its_layout(shape, bias):
    # The gradient of W.t() is computed in W.t()'s column-major layout (so it reaches W contiguous
    # through the transpose's backward, as torch does), for mm, addmm and a batch folded into one gemm.
    ember.manual_seed(0)
    w = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(4, dtype=ember.float64, requires_grad=True)
    x = ember.randn(*shape, dtype=ember.float64, requires_grad=True)
    wt = w.t()
    seen = []
    wt.register_hook(lambda g: seen.append(g))
    out = ember.addmm(b, x, wt) if bias and len(shape) == 2 else x @ wt + (b if bias else 0)
    out.square().sum().backward()
    assert seen[0].stride() == wt.stride()
    xs = x.detach().numpy().reshape(-1, 3)
    wn = w.detach().numpy()
    y = xs @ wn.T + (b.detach().numpy() if bias else 0)
    np.testing.assert_allclose(w.grad.numpy(), (2 * y).T @ xs, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy().reshape(-1, 3), (2 * y) @ wn, rtol=1e-12)


def test_mm_and_addmm_gradients_of_transposed_operands():
    ember.manual_seed(1)
    a = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)
    c = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: ember.mm(a.t(), b.t()), [a, b])
    assert ember.autograd.gradcheck(lambda c, a, b: ember.addmm(c, a.t(), b.t()), [c, a, b])
    assert ember.autograd.gradcheck(lambda a, b: ember.matmul(a.t(), b.t()), [a, b])
