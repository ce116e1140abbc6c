"""ember.autograd.Function: custom forward/backward pairs, as torch's."""
import gc
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, once_differentiable

CASES = []  # no OpCase rows: custom functions are not ops


def f64(*shape, requires_grad=True):
    return ember.randn(*shape, dtype=ember.float64, requires_grad=requires_grad)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)  # an output: saved without a reference cycle
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class ScaledAdd(Function):
    """x * alpha + y * beta: tensor and non-tensor arguments, two inputs."""

    @staticmethod
    def forward(ctx, x, alpha, y, beta=1.0):
        ctx.alpha, ctx.beta = alpha, beta
        return x * alpha + y * beta

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.alpha, None, grad * ctx.beta, None


class SumAndProduct(Function):
    """Two outputs from the new-style forward plus setup_context."""

    @staticmethod
    def forward(x, y):
        return x + y, x * y

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g_sum, g_prod):
        x, y = ctx.saved_tensors
        return g_sum + g_prod * y, g_sum + g_prod * x


def test_forward_and_backward_of_a_custom_function():
    x = f64(3, 4)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward" and y.requires_grad
    np.testing.assert_allclose(y.detach().numpy(), np.exp(x.detach().numpy()))
    (y * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()))


def test_gradcheck_and_double_backward():
    x, y = f64(2, 3), f64(2, 3)
    assert gradcheck(lambda t: Exp.apply(t), (x,))
    assert gradcheck(lambda a, b: SumAndProduct.apply(a, b), (x, y))
    assert gradcheck(lambda a, b: ScaledAdd.apply(a, 0.5, b, beta=-2.0), (x, y))
    # The backward is written with ember ops, so it differentiates again.
    (g,) = ember.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp(x.detach().numpy()))


def test_keyword_arguments_and_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, scale=1.0):
            seen["needs"] = ctx.needs_input_grad
            return a * b * scale

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    a, b = f64(2), f64(2, requires_grad=False)
    out = Probe.apply(a, b, scale=3.0)
    assert seen["needs"] == (True, False, False)
    np.testing.assert_allclose(out.detach().numpy(), (a * b * 3.0).detach().numpy())


def test_no_graph_without_inputs_requiring_grad_or_under_no_grad():
    x = f64(3, requires_grad=False)
    assert Exp.apply(x).grad_fn is None
    with ember.no_grad():
        assert not Exp.apply(f64(3)).requires_grad


def test_backward_gets_zeros_for_unused_outputs():
    got = {}

    class Split(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g2, g3):
            got["g3"] = g3
            return g2 * 2 + g3 * 3

    x = f64(4)
    a, _ = Split.apply(x)
    a.sum().backward()
    assert got["g3"] is not None and float(got["g3"].abs().sum()) == 0.0
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))


def test_set_materialize_grads_false_passes_none_for_unused_outputs():
    got = {}

    class Split(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            marker = x.detach().clone()
            ctx.mark_non_differentiable(marker)
            return x * 2, x * 3, marker

        @staticmethod
        def backward(ctx, g2, g3, g_marker):
            got.update(g2=g2, g3=g3, g_marker=g_marker)
            return g2 * 2 if g3 is None else g2 * 2 + g3 * 3

    x = f64(4)
    a, b, _ = Split.apply(x)
    a.sum().backward(retain_graph=True)
    assert got["g2"] is not None and got["g3"] is None and got["g_marker"] is None
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))
    x.grad = None
    (a.sum() + b.sum()).backward()
    assert got["g3"] is not None
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 5.0))


def test_non_differentiable_outputs():
    class MaxWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            marker = x.detach().clone()
            ctx.mark_non_differentiable(marker)
            ctx.save_for_backward(idx)
            ctx.numel = x.numel()
            return x.max(), idx, marker

        @staticmethod
        def backward(ctx, g, g_idx, g_marker):
            (idx,) = ctx.saved_tensors
            assert float(g_marker.abs().sum()) == 0.0  # a zero gradient for the marked output
            grad = ember.zeros(ctx.numel, dtype=g.dtype)
            grad[idx] = g
            return grad

    x = f64(5)
    value, index, marker = MaxWithIndex.apply(x)
    assert value.requires_grad and not index.requires_grad and not marker.requires_grad
    value.backward()
    expected = np.zeros(5)
    expected[int(np.argmax(x.detach().numpy()))] = 1.0
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_an_input_returned_unchanged_gets_a_new_history():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = f64(3)
    y = Identity.apply(x)
    assert y is not x and y.grad_fn.name() == "IdentityBackward" and x.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 5.0))


def test_mark_dirty_in_place_function():
    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    leaf = f64(3)
    h = leaf * 1.0
    out = DoubleInPlace.apply(h)
    assert out is h and h.grad_fn.name() == "DoubleInPlaceBackward"
    (out * 3).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), np.full(3, 6.0))
    np.testing.assert_allclose(h.detach().numpy(), 2 * leaf.detach().numpy())
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        DoubleInPlace.apply(f64(3))


def test_wrong_backward_results_are_reported():
    def make(result):
        class Bad(Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return result(g)
        return Bad

    x = f64(3)
    with pytest.raises(RuntimeError, match=r"BadBackward returned an incorrect number of gradients \(expected 2, got 1\)"):
        make(lambda g: g).apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match="different than None at position 2"):
        make(lambda g: (g, g)).apply(x, 2.0).sum().backward()
    with pytest.raises(TypeError, match="returned int as the gradient at position 1"):
        make(lambda g: (1, None)).apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \[4\]"):
        make(lambda g: (ember.ones(4, dtype=ember.float64), None)).apply(x, 2.0).sum().backward()
    # Extra trailing Nones are fine, as in torch.
    make(lambda g: (g * 2, None, None)).apply(x, 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))


def test_errors_in_user_backward_propagate():
    class Raises(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom from backward")

    with pytest.raises(ValueError, match="boom from backward"):
        Raises.apply(f64(2)).sum().backward()


def test_saved_tensors_are_version_checked_and_freed_after_backward():
    x = f64(3)
    h = x * 1.0
    y = Exp.apply(h)
    y.add_(1)  # modifies the saved output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_no_reference_cycle_through_the_context():
    contexts = []

    class Keeps(Function):
        @staticmethod
        def forward(ctx, x):
            contexts.append(weakref.ref(ctx))
            y = x * 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Keeps.apply(f64(3))
    assert contexts[0]() is not None
    del y
    gc.collect()
    assert contexts[0]() is None


def test_once_differentiable_backward_records_nothing():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = f64(3)
    (g,) = ember.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * x.detach().numpy())
    assert not g.requires_grad


def test_functions_are_not_instantiated():
    with pytest.raises(RuntimeError, match=r"call Exp.apply\(...\) instead"):
        Exp()
    with pytest.raises(TypeError, match="save_for_backward can only save tensors"):
        class SavesInt(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(3)
                return x
        SavesInt.apply(f64(2))


def test_an_output_kept_on_ctx_does_not_leak():
    contexts = []

    class KeepsOnCtx(Function):
        @staticmethod
        def forward(ctx, x):
            contexts.append(weakref.ref(ctx))
            y = x.exp()
            ctx.y = y  # not save_for_backward: ember moves it into the saved tensors
            return y

        @staticmethod
        def backward(ctx, g):
            return g * ctx.y

    x = f64(3)
    y = KeepsOnCtx.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))
    del y
    gc.collect()
    assert contexts[0]() is None
