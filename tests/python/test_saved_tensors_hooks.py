"""ember.autograd.graph: saved_tensors_hooks, save_on_cpu and
disable_saved_tensors_hooks, against torch where it is importable.

Where ember's ops save other tensors than torch's, the counts differ and the
tests say so instead of forcing them equal: ember's mul saves both operands
even when only one requires grad (torch saves only the one the other's
gradient needs).
"""
import contextlib
import gc
import threading
import weakref

import numpy as np
import pytest

import ember
from ember.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

CASES = []  # no OpCase rows: these test autograd machinery


class Recorder:
    """Pack / unpack hooks that log what they see and pass the tensor through
    detached (so the packed value holds no history)."""

    def __init__(self):
        self.packed = []    # (shape, requires_grad, grad_fn name or None) per pack call
        self.unpacked = []  # shape per unpack call

    def pack(self, t):
        fn = t.grad_fn
        # torch's grad_fn objects have name() too
        self.packed.append((tuple(t.shape), t.requires_grad, None if fn is None else fn.name()))
        return t.detach()

    def unpack(self, t):
        self.unpacked.append(tuple(t.shape))
        return t


def _small_graph(lib, x, w, v):
    """mul (both operands require grad), exp (saves its output), matmul."""
    y = x * v
    z = y.exp()
    m = z @ w
    return m.sum()


def _inputs(lib):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) * 0.5 for s in ((2, 3), (3, 4), (2, 3))]
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def _run_recorded(lib, hooks_cls):
    rec = Recorder()
    x, w, v = _inputs(lib)
    with hooks_cls(rec.pack, rec.unpack):
        loss = _small_graph(lib, x, w, v)
    return rec, loss, (x, w, v)


def test_pack_and_unpack_calls_for_a_small_graph():
    rec, loss, (x, w, v) = _run_recorded(ember, saved_tensors_hooks)
    # MulBackward0 saves x and v, ExpBackward0 its output, MmBackward0 z and w.
    assert sorted(rec.packed, key=repr) == sorted([
        ((2, 3), True, None), ((2, 3), True, None),
        ((2, 3), True, "ExpBackward0"),
        ((2, 3), True, "ExpBackward0"), ((3, 4), True, None)], key=repr)
    assert rec.unpacked == []  # nothing is unpacked before backward
    loss.backward()
    assert sorted(rec.unpacked) == sorted([(2, 3), (2, 3), (2, 3), (2, 3), (3, 4)])
    assert len(rec.packed) == 5
    # The gradients are those of the same graph without hooks.
    x2, w2, v2 = [t.detach().requires_grad_() for t in (x, w, v)]
    _small_graph(ember, x2, w2, v2).backward()
    for a, b in ((x, x2), (w, w2), (v, v2)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)


@pytest.mark.skipif(torch is None, reason="torch is not importable")
def test_small_graph_calls_match_torch():
    ours, loss, ember_inputs = _run_recorded(ember, saved_tensors_hooks)
    theirs, tloss, torch_inputs = _run_recorded(torch, torch.autograd.graph.saved_tensors_hooks)
    assert sorted(ours.packed, key=repr) == sorted(theirs.packed, key=repr)
    loss.backward(retain_graph=True)
    tloss.backward(retain_graph=True)
    assert sorted(ours.unpacked) == sorted(theirs.unpacked)
    for a, b in zip(ember_inputs, torch_inputs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5)


def test_retain_graph_unpacks_on_every_access():
    rec = Recorder()
    x = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(rec.pack, rec.unpack):
        y = x.exp().sum()
    y.backward(retain_graph=True)
    assert len(rec.unpacked) == 1
    y.backward()
    assert len(rec.unpacked) == 2 and len(rec.packed) == 1
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.5, -1.0, 2.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_nested_contexts_innermost_applies():
    outer, inner = Recorder(), Recorder()
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(outer.pack, outer.unpack):
        a = x.exp()
        with saved_tensors_hooks(inner.pack, inner.unpack):
            b = a.exp()
            assert ember._C._saved_tensors_hooks_active()
        c = b.exp()
    assert not ember._C._saved_tensors_hooks_active()
    d = c.exp()  # outside: no hooks
    assert len(outer.packed) == 2 and len(inner.packed) == 1
    d.sum().backward()
    assert len(outer.unpacked) == 2 and len(inner.unpacked) == 1


def test_pack_hook_may_return_a_non_tensor():
    x = ember.tensor([[0.3, -0.7], [1.1, 0.2]], requires_grad=True)
    w = ember.tensor([[1.5, 2.0], [-0.5, 0.25]], requires_grad=True)
    calls = []

    def pack(t):  # a numpy copy plus what it needs to come back
        calls.append("pack")
        return (t.detach().numpy().copy(), t.dtype)

    def unpack(packed):
        calls.append("unpack")
        array, dtype = packed
        return ember.tensor(array, dtype=dtype)

    with saved_tensors_hooks(pack, unpack):
        loss = (x.matmul(w).tanh() * x).sum()
    loss.backward()
    x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
    (x2.matmul(w2).tanh() * x2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-6)
    assert calls.count("pack") == calls.count("unpack") == 5  # mm: 2, tanh: output, mul: 2


def test_packed_values_are_freed_after_backward():
    class Box:
        def __init__(self, t):
            self.t = t

    boxes = []

    def pack(t):
        box = Box(t.detach())
        boxes.append(weakref.ref(box))
        return box

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(pack, lambda box: box.t):
        y = (x * x).exp().sum()
    assert len(boxes) == 3 and all(b() is not None for b in boxes)
    y.backward()
    gc.collect()
    assert all(b() is None for b in boxes)
    # Dropping a graph never run backward through frees them too.
    boxes.clear()
    with saved_tensors_hooks(pack, lambda box: box.t):
        y = (x * x).sum()
    del y
    gc.collect()
    assert len(boxes) == 2 and all(b() is None for b in boxes)


def test_save_on_cpu_on_the_cpu_matches_the_plain_run():
    x, w, v = _inputs(ember)
    hooks = save_on_cpu()
    seen = []
    pack, unpack = hooks.pack_hook, hooks.unpack_hook
    hooks.pack_hook = lambda t: seen.append("pack") or pack(t)
    hooks.unpack_hook = lambda p: seen.append("unpack") or unpack(p)
    with hooks:
        loss = _small_graph(ember, x, w, v)
    loss.backward()
    assert seen.count("pack") == seen.count("unpack") == 5
    x2, w2, v2 = [t.detach().requires_grad_() for t in (x, w, v)]
    _small_graph(ember, x2, w2, v2).backward()
    for a, b in ((x, x2), (w, w2), (v, v2)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)
    # pin_memory without a GPU is a pass-through too.
    x3 = x.detach().requires_grad_()
    with save_on_cpu(pin_memory=True):
        (x3 * x3).sum().backward()
    np.testing.assert_allclose(x3.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("pack", [lambda t: t.detach(), lambda t: t.clone()], ids=["detach", "clone"])
def test_double_backward_through_hooked_saves(pack):
    x = ember.tensor([0.3, -0.2, 0.9], dtype=ember.float64, requires_grad=True)
    with saved_tensors_hooks(pack, lambda t: t):
        # MulBackward0 saves the leaf x twice; ExpBackward0 saves a non-leaf.
        y = (x * x).sum() + (x.exp() * x.exp()).sum()
        (g,) = ember.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
    xs = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), 2 * xs + 2 * np.exp(2 * xs), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2 + 4 * np.exp(2 * xs), rtol=1e-12)
    if torch is not None:
        tx = torch.tensor(xs, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            ty = (tx * tx).sum() + (tx.exp() * tx.exp()).sum()
            (tg,) = torch.autograd.grad(ty, tx, create_graph=True)
            tg.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_gradgradcheck_under_hooks():
    x = ember.tensor([[0.3, -0.2], [0.9, 0.4]], dtype=ember.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        assert ember.autograd.gradgradcheck(lambda a: (a.exp() * a).matmul(a), (x,))


def test_inplace_modification_error_without_hooks_is_unchanged():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    z = (x * 1).exp()
    z.add_(1)  # ExpBackward0 saved its output z
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[float32 \[2\]\], which is "
                                           r"output 0 of ExpBackward0, is at version 1; expected version 0"):
        z.sum().backward()


def test_inplace_modification_under_hooks():
    # When the unpacked tensor is still the saved memory, the version check
    # stays (torch skips it under hooks and silently uses the new values).
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = x * 1
        z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="which is an input of MulBackward0, is at version 1; expected version 0"):
        z.sum().backward()
    # A copy made by the pack hook is a snapshot: no error, and the gradient
    # of the values at save time (as torch).
    with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = x * 1
        z = y * y
    y.add_(1)
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    if torch is not None:
        tx = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            ty = tx * 1
            tz = ty * ty
        ty.add_(1)
        tz.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_pack_hook_modifying_its_input_raises():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    with saved_tensors_hooks(lambda t: t.detach().mul_(2), lambda t: t):
        with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
            y.exp()


def test_hook_exceptions_propagate():
    x = ember.tensor([1.0, 2.0], requires_grad=True)

    def bad_pack(t):
        raise ValueError("pack failed")

    with saved_tensors_hooks(bad_pack, lambda t: t):
        with pytest.raises(ValueError, match="pack failed"):
            x.exp()

    def bad_unpack(t):
        raise KeyError("unpack failed")

    with saved_tensors_hooks(lambda t: t.detach(), bad_unpack):
        y = x.exp().sum()
    with pytest.raises(KeyError, match="unpack failed"):
        y.backward()


def test_unpack_must_return_the_saved_shape_dtype_and_device():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t[:1]):
        y = x.exp().sum()
    with pytest.raises(RuntimeError, match=r"ExpBackward0: the saved tensor unpack hook returned a float32 tensor of "
                                           r"shape \[1\].*saved was float32 of shape \[3\]"):
        y.backward()
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t.double()):
        y = (x * x).sum()
    with pytest.raises(RuntimeError, match="MulBackward0: the saved tensor unpack hook returned a float64"):
        y.backward()
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: 3):
        y = x.exp().sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
        y.backward()


def test_hooks_must_be_callable():
    with pytest.raises(TypeError, match="must be callable"):
        with saved_tensors_hooks(None, lambda t: t):
            pass
    assert not ember._C._saved_tensors_hooks_active()


def test_disable_saved_tensors_hooks():
    message = "saved tensors hooks are off here"
    with disable_saved_tensors_hooks(message):
        with pytest.raises(RuntimeError, match=message):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with pytest.raises(RuntimeError, match=message):
            with save_on_cpu():
                pass
        with disable_saved_tensors_hooks("inner"):
            with pytest.raises(RuntimeError, match="inner"):
                with save_on_cpu():
                    pass
        with pytest.raises(RuntimeError, match=message):  # the outer message is back
            with save_on_cpu():
                pass
        # Ops still record and backward works.
        x = ember.tensor([1.0], requires_grad=True)
        x.exp().sum().backward()
        assert x.grad is not None
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again after
        # Disabling while hooks are in force raises at once, as torch.
        with pytest.raises(RuntimeError, match="cannot disable"):
            with disable_saved_tensors_hooks("cannot disable"):
                pass
    assert ember._C._saved_tensors_hooks_get_disabled_error_message() is None


class _Cube(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * x * x
        ctx.save_for_backward(x)
        ctx.square = x * x  # a ctx attribute that is not an output: kept as it is
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * ctx.square


class _ExpOut(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        ctx.y = y  # an output kept as an attribute: saved by ember, not through hooks
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        assert ctx.y.shape == y.shape
        return grad * y


def test_function_save_for_backward_goes_through_hooks():
    rec = Recorder()
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    with saved_tensors_hooks(rec.pack, rec.unpack):
        y = _Cube.apply(x)
        z = _ExpOut.apply(y)
    # one per save_for_backward tensor: x (a leaf) and _ExpOut's output
    assert rec.packed == [((2,), True, None), ((2,), True, "_ExpOutBackward")]
    z.sum().backward()
    assert rec.unpacked == [(2,), (2,)]
    xs = np.array([0.5, 1.5])
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xs ** 3) * 3 * xs ** 2, rtol=1e-5)


def test_function_saved_tensors_support_double_backward_under_hooks():
    class Square(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = ember.tensor([1.0, -3.0], dtype=ember.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        (g,) = ember.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_checkpoint_inside_hooks():
    from ember.utils.checkpoint import checkpoint
    rec = Recorder()
    lin = ember.nn.Linear(3, 3)
    x = ember.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=ember.float32, requires_grad=True)

    def block(a):
        return lin(a).tanh().exp()

    with saved_tensors_hooks(rec.pack, rec.unpack):
        out = checkpoint(block, x, use_reentrant=False)
        loss = (out * out).sum()
    # The checkpoint saves its argument; the block's activations are dropped
    # and never packed. mul saves out twice.
    assert len(rec.packed) == 3
    loss.backward()
    assert len(rec.unpacked) == 3
    grads = (x.grad.numpy().copy(), lin.weight.grad.numpy().copy())
    x.grad = None
    lin.weight.grad = None
    (block(x) ** 2).sum().backward()
    np.testing.assert_allclose(grads[0], x.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(grads[1], lin.weight.grad.numpy(), rtol=1e-5)


def test_checkpoint_works_inside_disable():
    from ember.utils.checkpoint import checkpoint
    x = ember.tensor([0.2, 0.4], requires_grad=True)
    with disable_saved_tensors_hooks("no hooks"):
        checkpoint(lambda a: a.exp(), x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.2, 0.4]), rtol=1e-6)


def test_python_numbers_are_not_packed():
    rec = Recorder()
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(rec.pack, rec.unpack):
        y = x * 2.0
    # torch packs nothing here (its mul saves only the Python number, which it
    # does not show to hooks); ember's mul also saves x.
    assert rec.packed == [((2,), True, None)]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_where_ember_saves_more_than_torch():
    """mul with one operand requiring grad: ember's MulBackward0 saves both
    operands, torch's only the one the other's gradient needs. The gradients
    agree; only the number of pack calls differs."""
    counts = {}
    libs = [ember] + ([torch] if torch is not None else [])
    for lib in libs:
        n = [0]
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: n.__setitem__(0, n[0] + 1) or t.detach(),
                                                    lambda t: t):
            z = (x * y).sum()
        z.backward()
        counts[lib.__name__] = n[0]
        np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
    assert counts["ember"] == 2
    if torch is not None:
        assert counts["torch"] == 1


def test_hooks_are_per_thread():
    rec = Recorder()
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    seen = {}

    def other():
        seen["active"] = ember._C._saved_tensors_hooks_active()
        seen["y"] = x.exp()

    with saved_tensors_hooks(rec.pack, rec.unpack):
        t = threading.Thread(target=other)
        t.start()
        t.join(10)
    assert seen["active"] is False and rec.packed == []
    seen["y"].sum().backward()
    assert rec.unpacked == []


def test_no_grad_saves_nothing():
    rec = Recorder()
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(rec.pack, rec.unpack), ember.no_grad():
        x.exp()
    assert rec.packed == []


# ---- every differentiable op row of the main op tables, under hooks

def _table_rows():
    import importlib
    rows = []
    for name in ("test_unary", "test_unary_math", "test_binary", "test_reduce", "test_matmul", "test_softmax",
                 "test_shape", "test_index", "test_norm", "test_loss", "test_conv", "test_pool", "test_linalg",
                 "test_sort", "test_scan", "test_attention", "test_einsum"):
        module = importlib.import_module(name)
        rows += [c for c in module.CASES if c.grad and not getattr(c.ember_fn, "_random", False)]
    return rows


def _grads(case, arrays, hooks):
    from harness import make
    inputs = [make(a, requires_grad=True, device="cpu") for a in arrays]
    with hooks:
        out = case.ember_fn(*inputs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
                if isinstance(o, ember.Tensor) and o.requires_grad]
        if not outs:
            return None
        loss = sum((o * ember.tensor(np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape)))).sum() for o in outs)
    loss.backward()
    return [None if t.grad is None else t.grad.numpy() for t in inputs]


def test_op_tables_give_the_same_gradients_under_hooks():
    """Every saved tensor of every op goes through a pack hook that copies it
    to numpy and an unpack hook that rebuilds it: the gradients must be the
    plain run's, bit for bit. (A node backward does not reach, such as one
    computing a value the result does not depend on, never unpacks.)"""
    from harness import random_array
    counts = {"pack": 0, "unpack": 0}

    def pack(t):
        counts["pack"] += 1
        return (t.detach().numpy().copy(), t.dtype)

    def unpack(p):
        counts["unpack"] += 1
        return ember.tensor(p[0], dtype=p[1])

    rows = _table_rows()
    assert len(rows) > 100
    checked = 0
    for case in rows:
        arrays = [random_array(s, np.float64, case.domain) for s in case.shapes[0]]
        ember.manual_seed(0)
        plain = _grads(case, arrays, contextlib.nullcontext())
        ember.manual_seed(0)
        before = dict(counts)
        hooked = _grads(case, arrays, saved_tensors_hooks(pack, unpack))
        if plain is None:
            continue
        for i, (a, b) in enumerate(zip(plain, hooked)):
            assert (a is None) == (b is None), f"{case.name}: input {i}"
            if a is not None:
                np.testing.assert_array_equal(a, b, err_msg=f"{case.name}: gradient of input {i}")
        packs, unpacks = counts["pack"] - before["pack"], counts["unpack"] - before["unpack"]
        assert unpacks <= packs, f"{case.name}: {packs} tensors packed, {unpacks} unpacked"
        checked += 1
    assert checked > 100 and counts["unpack"] > 500
