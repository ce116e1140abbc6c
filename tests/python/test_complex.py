"""Complex tensors: dtypes, conversions, views, arithmetic and autograd,
against numpy always and PyTorch when it is importable."""
import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # the comparisons with torch are skipped
    torch = None

RNG = np.random.default_rng(7)


def crandn(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def close(t, expected, tol=1e-6):
    got = t.detach().numpy()
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


# ---- dtypes and conversions

def test_dtypes():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert ember.complex64.is_complex and not ember.float32.is_complex
    assert ember.complex64.itemsize == 8 and ember.complex128.itemsize == 16
    assert ember.complex64.to_real() == ember.float32 and ember.float64.to_complex() == ember.complex128
    assert ember.promote_types(ember.complex64, ember.float64) == ember.complex128
    assert ember.promote_types(ember.int64, ember.complex64) == ember.complex64
    assert ember.can_cast(ember.float32, ember.complex64) and not ember.can_cast(ember.complex64, ember.float64)


def test_tensor_from_python_and_numpy():
    z = ember.tensor([1 + 2j, 3 - 4j])
    assert z.dtype == ember.complex64 and z.is_complex() and not z.is_floating_point()
    assert z.tolist() == [1 + 2j, 3 - 4j]
    assert ember.tensor([1, 2.5, 3j]).tolist() == [1 + 0j, 2.5 + 0j, 3j]
    assert ember.tensor(2 - 1j).item() == 2 - 1j
    assert complex(ember.tensor(2 - 1j)) == 2 - 1j
    a = crandn(3, 4)
    t = ember.from_numpy(a)
    assert t.dtype == ember.complex128
    np.testing.assert_array_equal(t.numpy(), a)
    a[0, 0] = 5j  # from_numpy shares memory
    assert t[0, 0].item() == 5j
    assert ember.tensor(a.astype(np.complex64)).dtype == ember.complex64
    assert ember.tensor([1.0, 2.0], dtype=ember.complex128).tolist() == [1 + 0j, 2 + 0j]


def test_casts():
    x = ember.tensor([1.5, -2.0])
    z = x.to(ember.complex64)
    assert z.tolist() == [1.5 + 0j, -2 + 0j]
    w = ember.tensor([1 + 2j, 3 - 4j])
    assert w.to(ember.float64).tolist() == [1.0, 3.0]  # the real part, as torch
    assert w.to(ember.complex128).dtype == ember.complex128
    np.testing.assert_array_equal(w.to(ember.complex128).numpy(), [1 + 2j, 3 - 4j])
    assert ember.zeros(2, dtype=ember.cfloat).tolist() == [0j, 0j]
    assert ember.ones(2, dtype=ember.cfloat).tolist() == [1 + 0j, 1 + 0j]
    f = ember.empty(3, dtype=ember.complex128).fill_(2.5)
    assert f.tolist() == [2.5 + 0j] * 3
    # Non-contiguous complex copies keep element pairs together.
    m = ember.from_numpy(crandn(3, 4))
    np.testing.assert_array_equal(m.t().contiguous().numpy(), m.numpy().T)
    np.testing.assert_array_equal(m[:, ::2].clone().numpy(), m.numpy()[:, ::2])


def test_repr():
    assert repr(ember.tensor([1 + 2j, 3 - 4j])) == "tensor([1.+2.j, 3.-4.j])"
    assert repr(ember.tensor([0.5 + 1j], dtype=ember.complex128)) == "tensor([0.5000+1.j], dtype=ember.complex128)"
    if torch is not None:
        for data in ([1 + 2j, 3 - 4j], [0.25 - 1e-5j, 100 + 3j], [[1j, -2.5 + 0.5j], [3, 4e9j]]):
            expect = repr(torch.tensor(data)).replace("torch.", "ember.")
            assert repr(ember.tensor(data)) == expect


# ---- views

def test_view_as_real_and_complex_share_memory():
    z = ember.tensor([1 + 2j, 3 - 4j])
    r = ember.view_as_real(z)
    assert r.shape == (2, 2) and r.dtype == ember.float32
    assert r.tolist() == [[1, 2], [3, -4]]
    r[1, 1] = 7.0
    assert z[1].item() == 3 + 7j
    x = ember.arange(6.0, dtype=ember.float64).reshape(3, 2)
    c = ember.view_as_complex(x)
    assert c.dtype == ember.complex128 and c.shape == (3,)
    assert c.tolist() == [1j, 2 + 3j, 4 + 5j]
    assert ember.view_as_complex(x[1:]).tolist() == [2 + 3j, 4 + 5j]
    big = ember.from_numpy(crandn(4, 5))
    np.testing.assert_array_equal(ember.view_as_real(big.t()).numpy(),
                                  np.stack([big.numpy().T.real, big.numpy().T.imag], -1))


def test_view_as_complex_layout_errors():
    with pytest.raises(RuntimeError, match="view_as_complex: tensor must have a last dimension of size 2"):
        ember.view_as_complex(ember.zeros(3, 3))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        ember.view_as_complex(ember.zeros(2, 4)[:, ::2])
    with pytest.raises(RuntimeError, match="storage offset divisible by 2"):
        ember.view_as_complex(ember.zeros(5)[1:].reshape(2, 2))
    with pytest.raises(TypeError, match="view_as_complex: expected a float32 or float64"):
        ember.view_as_complex(ember.zeros(3, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="view_as_real: expected a complex tensor"):
        ember.view_as_real(ember.zeros(3))


def test_real_imag():
    a = crandn(2, 3)
    z = ember.from_numpy(a.copy())
    close(z.real, a.real)
    close(ember.imag(z), a.imag)
    x = ember.ones(2)
    assert ember.real(x) is x and x.real is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag
    z.real = 0.0
    z.imag = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    np.testing.assert_array_equal(z.numpy(), np.broadcast_to([1j, 2j, 3j], (2, 3)))


# ---- elementwise math against numpy

def test_construction():
    re, im = RNG.standard_normal(3), RNG.standard_normal((2, 3))
    close(ember.complex(ember.tensor(re), ember.tensor(im)), re + 1j * im)
    r, th = np.abs(RNG.standard_normal(4)), RNG.standard_normal(4)
    close(ember.polar(ember.tensor(r), ember.tensor(th)), r * np.exp(1j * th))
    with pytest.raises(TypeError, match="complex: expected real and imag to have the same dtype"):
        ember.complex(ember.ones(2), ember.ones(2, dtype=ember.float64))


BINARY = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
]


@pytest.mark.parametrize("name,fn", BINARY)
def test_binary(name, fn):
    a, b = crandn(2, 3), crandn(3)
    r = RNG.standard_normal((2, 1))
    za, zb, zr = ember.from_numpy(a), ember.from_numpy(b), ember.from_numpy(r)
    close(fn(za, zb), fn(a, b), 1e-12)
    close(fn(za, zr), fn(a, r), 1e-12)   # complex with real
    close(fn(zr, zb), fn(r, b), 1e-12)   # real with complex
    close(fn(za, 2 - 1j), fn(a, 2 - 1j), 1e-12)  # Python complex number
    close(fn(za, 1.5), fn(a, 1.5), 1e-12)
    close(getattr(ember, name)(za, zb), fn(a, b), 1e-12)
    c64 = ember.from_numpy(a.astype(np.complex64))
    assert fn(c64, c64).dtype == ember.complex64
    close(fn(c64, c64), fn(a.astype(np.complex64), a.astype(np.complex64)), 1e-5)


def test_promotion():
    f32, f64, i64 = ember.ones(2), ember.ones(2, dtype=ember.float64), ember.ones(2, dtype=ember.int64)
    assert (f32 * 1j).dtype == ember.complex64
    assert (f64 * 1j).dtype == ember.complex128
    assert (i64 * 1j).dtype == ember.complex64
    c64 = ember.ones(2, dtype=ember.complex64)
    assert (c64 + f64).dtype == ember.complex128
    assert (c64 * 2.0).dtype == ember.complex64
    # a 0-d complex tensor takes the width of the dimensioned operands, as in PyTorch
    assert (c64 * ember.tensor(1j, dtype=ember.complex128)).dtype == ember.complex64
    assert (f32 * ember.tensor(1j, dtype=ember.complex128)).dtype == ember.complex64
    assert (f64 * ember.tensor(1j, dtype=ember.complex64)).dtype == ember.complex128
    assert ember.result_type(f32, 1j) == ember.complex64


def test_inplace():
    a = crandn(3)
    z = ember.from_numpy(a.copy())
    z += 1j
    z *= ember.from_numpy(a)
    close(z, (a + 1j) * a, 1e-12)
    w = ember.from_numpy(a.astype(np.complex64))
    w += ember.from_numpy(a)  # complex128 and float64 results cast down into complex64, as in torch
    w *= ember.ones(3, dtype=ember.float64)
    close(w, (2 * a).astype(np.complex64), 1e-5)
    x = ember.ones(3)
    with pytest.raises(RuntimeError, match="result type complex64 can't be cast to the desired output type float32"):
        x.mul_(1j)


UNARY = [
    ("neg", lambda z: -z, lambda a: -a),
    ("abs", ember.abs, np.abs),
    ("angle", ember.angle, np.angle),
    ("exp", ember.exp, np.exp),
    ("log", ember.log, np.log),
    ("sqrt", ember.sqrt, np.sqrt),
    ("reciprocal", ember.reciprocal, lambda a: 1 / a),
    ("square", ember.square, np.square),
    ("conj", ember.conj, np.conj),
    ("sgn", ember.sgn, lambda a: a / np.abs(a)),
    ("pow3", lambda z: z ** 3, lambda a: a ** 3),
    ("pow_half", lambda z: ember.pow(z, 0.5), np.sqrt),
    ("pow_complex", lambda z: z ** ember.tensor(0.5 + 1j, dtype=ember.complex128), lambda a: a ** (0.5 + 1j)),
    ("sin", ember.sin, np.sin),
    ("cos", ember.cos, np.cos),
    ("tan", ember.tan, np.tan),
    ("sinh", ember.sinh, np.sinh),
    ("cosh", ember.cosh, np.cosh),
    ("tanh", ember.tanh, np.tanh),
    ("sigmoid", ember.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
]


@pytest.mark.parametrize("name,fn,ref", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, fn, ref):
    a = crandn(2, 5)
    close(fn(ember.from_numpy(a)), ref(a), 1e-10)


def test_unary_edge_values():
    big = np.array([30 + 1j, -50 - 2j, 0.5 + 400j])
    close(ember.tanh(ember.from_numpy(big)), np.tanh(big), 1e-12)
    close(ember.tan(ember.from_numpy(big * 1j)), np.tan(big * 1j), 1e-12)
    z = ember.tensor([0j, -4 + 0j, 3 + 4j], dtype=ember.complex128)
    assert ember.abs(z).tolist() == [0.0, 4.0, 5.0]
    assert ember.sgn(z).tolist()[0] == 0j
    close(ember.sqrt(z), np.sqrt(z.numpy()), 1e-12)
    assert ember.angle(ember.tensor([-1.0, 2.0])).tolist() == pytest.approx([np.pi, 0.0])


def test_reductions_matmul_cat():
    a, b = crandn(3, 4), crandn(4, 2)
    za, zb = ember.from_numpy(a), ember.from_numpy(b)
    close(za.sum(), a.sum(), 1e-12)
    close(za.sum(0), a.sum(0), 1e-12)
    close(za.sum(-1, keepdim=True), a.sum(-1, keepdims=True), 1e-12)
    close(za.mean(1), a.mean(1), 1e-12)
    close(za @ zb, a @ b, 1e-12)
    close(ember.mm(za, zb), a @ b, 1e-12)
    close(ember.bmm(za[None], zb[None]), (a @ b)[None], 1e-12)
    close(ember.mv(za, zb[:, 0]), a @ b[:, 0], 1e-12)
    close(ember.dot(za[0], zb[:, 0]), np.dot(a[0], b[:, 0]), 1e-12)
    close(ember.vdot(za[0], zb[:, 0]), np.vdot(a[0], b[:, 0]), 1e-12)
    r = RNG.standard_normal((4, 2))
    close(za @ ember.from_numpy(r).to(ember.complex128), a @ r, 1e-12)
    with pytest.raises(RuntimeError, match="same dtype"):  # as torch: no mixed matmul
        za @ ember.from_numpy(r)
    close(ember.cat([za, za[:1]]), np.concatenate([a, a[:1]]), 0)
    close(ember.cat([za, ember.from_numpy(r.T.copy())], dim=0), np.concatenate([a, r.T]), 0)
    close(ember.stack([za, za], dim=-1), np.stack([a, a], -1), 0)
    assert (za == za).all().item() and not (za != za).any().item()
    assert ember.tensor([1 + 0j]).eq(1.0).item()


def test_isreal_adjoint():
    z = ember.tensor([1 + 0j, 2 + 1j])
    assert ember.isreal(z).tolist() == [True, False]
    m = ember.from_numpy(crandn(2, 3))
    close(m.mH, m.numpy().conj().T)
    close(m.adjoint(), m.numpy().conj().T)


def test_unsupported_ops_raise():
    z = ember.tensor([1 + 1j])
    with pytest.raises(NotImplementedError, match="complex"):
        ember.relu(z)
    with pytest.raises(RuntimeError, match="complex"):
        z.max()


# ---- autograd: d L / d Re + i d L / d Im, as PyTorch

def numeric_grad(loss, a, eps=1e-6):
    """Finite-difference gradient of a real loss of a complex128 array."""
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        for unit in (1, 1j):
            up, down = a.copy(), a.copy()
            up[idx] += eps * unit
            down[idx] -= eps * unit
            d = (loss(up) - loss(down)) / (2 * eps)
            g[idx] += d * unit
    return g


def ember_loss(fn, w):
    def loss(arr):
        out = fn(ember.from_numpy(arr))
        wt = ember.from_numpy(w[: out.numel()].reshape(out.shape)) if out.numel() else None
        if out.is_complex():
            return (ember.view_as_real(out) * ember.view_as_real(wt)).sum() if wt is not None else out.real.sum()
        return (out * wt.real).sum()
    return loss


GRAD_CASES = [
    ("mul", lambda z: z * ember.from_numpy(np.array([1 - 2j, 0.5j, 3.0]))),
    ("div", lambda z: ember.from_numpy(np.array([1 - 2j, 0.5j, 3.0])) / z),
    ("abs", ember.abs),
    ("angle", ember.angle),
    ("exp", ember.exp),
    ("log", ember.log),
    ("tanh", ember.tanh),
    ("sin", ember.sin),
    ("sqrt", ember.sqrt),
    ("pow", lambda z: z ** 2.5),
    ("real_imag", lambda z: z.real * z.imag),
    ("conj", ember.conj),
    ("sum_matmul", lambda z: (z.reshape(3, 1) @ z.reshape(1, 3)).sum(0)),
    ("view_as_real", lambda z: ember.view_as_real(z).sin()),
    ("polar_complex", lambda z: ember.polar(z.abs(), z.angle()) * ember.complex(z.real, z.imag.exp())),
    ("to_real", lambda z: z.to(ember.float64) ** 2),
]


@pytest.mark.parametrize("name,fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_finite_differences(name, fn):
    a = crandn(3)
    w = crandn(9)
    loss = ember_loss(fn, w)
    z = ember.from_numpy(a.copy()).requires_grad_()
    loss_value = loss(a)
    # the same loss, differentiated by ember
    out = fn(z)
    wt = ember.from_numpy(w[: out.numel()].reshape(out.shape))
    total = (ember.view_as_real(out) * ember.view_as_real(wt)).sum() if out.is_complex() else (out * wt.real).sum()
    assert abs(total.item() - loss_value.item()) < 1e-12
    total.backward()
    assert z.grad.dtype == ember.complex128
    expected = numeric_grad(lambda arr: loss(arr).item(), a)
    np.testing.assert_allclose(z.grad.numpy(), expected, rtol=1e-6, atol=1e-6)
    if torch is not None:
        tz = torch.tensor(a, requires_grad=True)
        tfn = {"mul": lambda t: t * torch.tensor([1 - 2j, 0.5j, 3.0], dtype=torch.complex128),
               "abs": torch.abs, "exp": torch.exp, "log": torch.log, "conj": lambda t: t.conj().resolve_conj()}.get(name)
        if tfn is not None:
            tout = tfn(tz)
            twt = torch.tensor(w[: tout.numel()].reshape(tout.shape))
            tt = (torch.view_as_real(tout) * torch.view_as_real(twt)).sum() if tout.is_complex() \
                else (tout * twt.real).sum()
            tt.backward()
            np.testing.assert_allclose(z.grad.numpy(), tz.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)


def test_real_input_gets_real_gradient():
    x = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    (x * (2 + 3j)).abs().sum().backward()
    assert x.grad.dtype == ember.float64
    np.testing.assert_allclose(x.grad.numpy(), np.sign([0.5, -1.0]) * abs(2 + 3j))


def test_rotary_embedding_llama_style():
    """The complex-number formulation of rotary embeddings (as in LLaMA's reference code)
    equals the real-valued rotation, values and gradients."""
    b, t, h, d = 2, 5, 3, 8
    freqs = 1.0 / (10000 ** (ember.arange(0, d, 2)[: d // 2].float() / d))
    angles = ember.outer(ember.arange(t).float(), freqs)
    freqs_cis = ember.polar(ember.ones_like(angles), angles)
    x = ember.randn(b, t, h, d, requires_grad=True)
    xc = ember.view_as_complex(x.float().reshape(b, t, h, -1, 2))
    rotated = ember.view_as_real(xc * freqs_cis.view(1, t, 1, d // 2)).flatten(3).type_as(x)
    # the real-valued formulation
    cos, sin = angles.cos().view(1, t, 1, d // 2), angles.sin().view(1, t, 1, d // 2)
    x2 = x.detach().clone().requires_grad_()
    pairs = x2.reshape(b, t, h, d // 2, 2)
    even, odd = pairs[..., 0], pairs[..., 1]
    expected = ember.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(3)
    np.testing.assert_allclose(rotated.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    w = ember.randn(b, t, h, d)
    (rotated * w).sum().backward()
    (expected * w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_inplace_through_retyped_views_under_autograd_raises():
    z = ember.tensor([1 + 1j, 2 - 1j], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="in-place writes through view_as_real"):
        z.real.mul_(2)
    out = ember.zeros(2, dtype=ember.complex64)
    src = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place writes through view_as_real"):
        out.real.copy_(src)
    with ember.no_grad():
        out.real.copy_(src)
    assert out.tolist() == [1 + 0j, 1 + 0j]


def test_leaf_requires_grad():
    z = ember.zeros(2, dtype=ember.complex64, requires_grad=True)
    assert z.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype"):
        ember.zeros(2, dtype=ember.int64).requires_grad_()


def test_data_movement_and_selection():
    a = crandn(3, 4)
    z = ember.from_numpy(a.copy())
    idx = ember.tensor([2, 0])
    np.testing.assert_array_equal(z[idx].numpy(), a[[2, 0]])
    np.testing.assert_array_equal(z[z.real > 0].numpy(), a[a.real > 0])
    np.testing.assert_array_equal(z.index_select(1, idx).numpy(), a[:, [2, 0]])
    np.testing.assert_array_equal(z.flip(0).roll(1, 1).numpy(), np.roll(a[::-1], 1, 1))
    np.testing.assert_array_equal(z.tril().numpy(), np.tril(a))
    np.testing.assert_array_equal(ember.where(z.real > 0, z, 1j).numpy(), np.where(a.real > 0, a, 1j))
    np.testing.assert_array_equal(z.masked_fill(z.imag > 0, 2.0).numpy(), np.where(a.imag > 0, 2.0, a))
    w = z.clone()
    w.masked_fill_(w.imag > 0, 0.0)
    np.testing.assert_array_equal(w.numpy(), np.where(a.imag > 0, 0, a))
    w[0] = 5j
    w[1, 1:] = ember.tensor([1 + 1j, 2, 3])
    assert w[0].tolist() == [5j] * 4 and w[1, 1:].tolist() == [1 + 1j, 2, 3]
    close(z.cumsum(1), np.cumsum(a, 1), 1e-12)
    assert ember.tensor([0j, 1j, 1 + 0j]).bool().tolist() == [False, True, True]
    assert ember.tensor([0j, 1j]).any().item() and not ember.tensor([0j, 1j]).all().item()


def test_silent_real_paths_refuse_complex():
    z = ember.tensor([1 + 1j, 2j])
    for op in (lambda: z.prod(), lambda: z.cumprod(0), lambda: ember.asin(z), lambda: ember.relu(z)):
        with pytest.raises(NotImplementedError, match="complex"):
            op()


def test_random_complex():
    ember.manual_seed(0)
    z = ember.randn(20000, dtype=ember.complex64)
    assert z.dtype == ember.complex64
    parts = ember.view_as_real(z)
    assert abs(parts.var(0) - 0.5).max().item() < 0.03  # each part has variance 1/2, as torch
    u = ember.rand(100, dtype=ember.complex128)
    assert u.dtype == ember.complex128 and 0 <= u.real.min().item() and u.imag.max().item() < 1


def test_save_and_load(tmp_path):
    z = ember.from_numpy(crandn(3, 2))
    path = tmp_path / "z.pt"
    ember.save({"z": z, "w": z.to(ember.complex64)}, path, format="torch")
    back = ember.load(path)
    np.testing.assert_array_equal(back["z"].numpy(), z.numpy())
    assert back["w"].dtype == ember.complex64
    if torch is not None:
        t = torch.load(path)
        np.testing.assert_array_equal(t["z"].numpy(), z.numpy())
        torch.save({"q": torch.tensor([1 + 2j])}, tmp_path / "q.pt")
        assert ember.load(tmp_path / "q.pt")["q"].tolist() == [1 + 2j]
    # safetensors has no complex dtypes: the default format falls back to PyTorch's, as for modules
    ember.save({"z": z, "n": 3}, tmp_path / "z.bin")
    assert ember.load(tmp_path / "z.bin")["z"].tolist() == z.tolist()
    with pytest.raises(TypeError, match="format=\"torch\""):
        ember.serialization.save_file({"z": z}, str(tmp_path / "z.safetensors"))


def test_norms_and_gradient_clipping():
    a = crandn(3, 4)
    z = ember.from_numpy(a)
    close(ember.norm(z), np.linalg.norm(a), 1e-12)
    close(ember.linalg.vector_norm(z, ord=1, dim=1), np.abs(a).sum(1), 1e-12)
    p = ember.nn.Parameter(ember.from_numpy(a.copy()))
    (p.abs() ** 2).sum().backward()  # grad = 2 p
    total = ember.nn.utils.clip_grad_norm_([p], 1.0)
    close(total, 2 * np.linalg.norm(a), 1e-12)
    close(p.grad, 2 * a / (2 * np.linalg.norm(a) + 1e-6), 1e-9)


def test_adam_on_a_complex_parameter_matches_torch():
    a, g = crandn(4), crandn(4)
    p = ember.nn.Parameter(ember.from_numpy(a.copy()))
    opt = ember.optim.Adam([p], lr=0.1)
    for _ in range(3):
        p.grad = ember.from_numpy(g.copy())
        opt.step()
    # Adam on the (real, imaginary) pairs, written out
    m = v = np.zeros(8)
    x, gr = np.stack([a.real, a.imag], -1).ravel(), np.stack([g.real, g.imag], -1).ravel()
    for t in range(1, 4):
        m, v = 0.9 * m + 0.1 * gr, 0.999 * v + 0.001 * gr * gr
        x = x - 0.1 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    close(p, x.reshape(4, 2) @ np.array([1, 1j]), 1e-12)
    if torch is not None:
        tp = torch.nn.Parameter(torch.tensor(a.copy()))
        topt = torch.optim.Adam([tp], lr=0.1)
        for _ in range(3):
            tp.grad = torch.tensor(g.copy())
            topt.step()
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_complex_fill_values():
    assert ember.full((2,), 1 - 2j).tolist() == [1 - 2j, 1 - 2j]
    assert ember.full((2,), 1j).dtype == ember.complex64
    assert ember.full((1,), 1j, dtype=ember.complex128).dtype == ember.complex128
    z = ember.zeros(3, dtype=ember.complex64).fill_(2 + 1j)
    assert z.tolist() == [2 + 1j] * 3
    z.fill_(ember.tensor(3j))
    assert z.tolist() == [3j] * 3
    assert ember.full_like(z, 0.5 - 1j).tolist() == [0.5 - 1j] * 3
    with pytest.raises(TypeError, match="fill_: a complex value cannot fill a float32 tensor"):
        ember.zeros(2).fill_(1j)
    with pytest.raises(TypeError, match="full: a complex value cannot fill a float32 tensor"):
        ember.full((2,), 1j, dtype=ember.float32)


# ---- math functions given complex input: computed in complex where torch does, refused elsewhere
# (they used to cast to a real dtype, dropping the imaginary part without a word)

_Z = np.array([1 + 1j, 0.5 - 0.25j, -2 + 0.5j, 0j], dtype=np.complex64)


def test_complex_float_power_sinc_and_integrals_against_numpy():
    z = ember.tensor(_Z)
    out = ember.float_power(z, 2)
    assert out.dtype == ember.complex128
    np.testing.assert_allclose(out.numpy(), _Z.astype(np.complex128) ** 2, rtol=1e-12)
    out = ember.float_power(2, z)
    assert out.dtype == ember.complex128
    np.testing.assert_allclose(out.numpy(), 2.0 ** _Z.astype(np.complex128), rtol=1e-12)
    assert ember.float_power(ember.tensor([2.0]), 1j).dtype == ember.complex128
    for sinc in (ember.sinc, ember.special.sinc):
        np.testing.assert_allclose(sinc(z).numpy(), np.sinc(_Z), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ember.trapezoid(z).numpy(), np.trapezoid(_Z), rtol=1e-6)
    running = np.cumsum((_Z[1:] + _Z[:-1]) / 2)
    np.testing.assert_allclose(ember.cumulative_trapezoid(z).numpy(), running, rtol=1e-6)
    np.testing.assert_allclose(ember.special.expit(z).numpy(), 1 / (1 + np.exp(-_Z)), rtol=1e-5)


def test_complex_cov_and_corrcoef_against_numpy():
    rows = np.array([[1 + 1j, 2, 3 - 1j, 0.5j], [1, 2, 4, -1], [0.5, -1j, 2 + 2j, 1]], dtype=np.complex128)
    np.testing.assert_allclose(ember.cov(ember.tensor(rows)).numpy(), np.cov(rows), rtol=1e-12)
    np.testing.assert_allclose(ember.corrcoef(ember.tensor(rows)).numpy(), np.corrcoef(rows), rtol=1e-12)
    # One variable: a 0-d variance, as torch (real input too).
    assert ember.cov(ember.tensor(rows[:1])).shape == ()
    np.testing.assert_allclose(ember.cov(ember.tensor(rows[:1])).item(), np.cov(rows[:1]), rtol=1e-12)
    assert ember.cov(ember.tensor([[1.0, 2.0, 4.0]])).shape == ()


@pytest.mark.parametrize("fn", [ember.deg2rad, ember.rad2deg, ember.i0, ember.special.erf, ember.special.i0,
                                ember.special.gammaln, ember.special.ndtr, ember.special.bessel_j0],
                         ids=lambda f: f.__name__)
def test_real_only_math_refuses_complex(fn):
    with pytest.raises(NotImplementedError, match="not supported for complex tensors"):
        fn(ember.tensor(_Z))
