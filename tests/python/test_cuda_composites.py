"""The composite ops on CUDA against the CPU path, forward and backward:
einsum (contractions through cuBLAS, diagonals, broadcasting), tensordot,
baddbmm/addbmm, cdist (both paths), cross, repeat_interleave with a tensor,
diff, kron, var_mean, aminmax, addcmul_.

Every test needs a CUDA GPU and skips, saying why, without one. Inputs are
made on the CPU in float64 and copied to the GPU; results and gradients come
back and are compared with the CPU's.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

RNG = np.random.default_rng(7)


def arr(*shape):
    return RNG.uniform(-2.0, 2.0, size=shape)


def run(fn, arrays, device, dtype=ember.float64):
    """fn on tensors made from `arrays` on `device`: the output and the input gradients, on the host."""
    inputs = [ember.tensor(a, dtype=dtype, device=device).requires_grad_(dtype.is_floating_point) for a in arrays]
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    loss = None
    for o in outs:
        if o.requires_grad:
            weight = ember.tensor(np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape)), dtype=o.dtype, device=device)
            term = (o * weight).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    values = [o.detach().cpu().to(ember.float64).numpy() for o in outs]
    grads = [None if t.grad is None else t.grad.cpu().numpy() for t in inputs]
    return values, grads


def same_on_cuda(fn, *arrays, rtol=1e-10, atol=1e-10, dtype=ember.float64):
    cpu_vals, cpu_grads = run(fn, arrays, "cpu", dtype)
    gpu_vals, gpu_grads = run(fn, arrays, "cuda", dtype)
    for c, g in zip(cpu_vals, gpu_vals):
        np.testing.assert_allclose(g, c, rtol=rtol, atol=atol)
    for c, g in zip(cpu_grads, gpu_grads):
        assert (c is None) == (g is None)
        if c is not None:
            np.testing.assert_allclose(g, c, rtol=rtol, atol=atol)


EINSUMS = [
    ("ij,jk->ik", (3, 4), (4, 5)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("...ij,...jk", (2, 1, 3, 4), (3, 4, 2)),
    ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    ("ii->i", (4, 4)),
    ("iij->j", (3, 3, 2)),
    ("ij,ij->ij", (1, 3), (2, 3)),
    ("i,j", (3,), (4,)),
    ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    ("ij->", (3, 4)),
]


@pytest.mark.parametrize("eq,shapes", [(e[0], e[1:]) for e in EINSUMS], ids=[e[0] for e in EINSUMS])
def test_einsum(eq, shapes):
    same_on_cuda(lambda *ops: ember.einsum(eq, *ops), *[arr(*s) for s in shapes])


def test_einsum_float32_and_half():
    a, b = arr(8, 16), arr(16, 4)
    same_on_cuda(lambda x, y: ember.einsum("ij,jk->ik", x, y), a, b, rtol=1e-5, atol=1e-5, dtype=ember.float32)
    cpu = ember.einsum("ij,jk->ik", ember.tensor(a, dtype=ember.float32), ember.tensor(b, dtype=ember.float32))
    gpu = ember.einsum("ij,jk->ik", ember.tensor(a, dtype=ember.float16, device="cuda"),
                       ember.tensor(b, dtype=ember.float16, device="cuda"))
    assert gpu.dtype == ember.float16
    np.testing.assert_allclose(gpu.float().cpu().numpy(), cpu.numpy(), rtol=2e-2, atol=2e-2)


def test_products():
    same_on_cuda(lambda a, b: ember.tensordot(a, b, dims=([2, 0], [0, 1])), arr(3, 4, 5), arr(5, 3, 2))
    same_on_cuda(lambda x, a, b: ember.baddbmm(x, a, b, beta=0.5, alpha=2), arr(4), arr(2, 3, 5), arr(2, 5, 4))
    same_on_cuda(lambda x, a, b: ember.addbmm(x, a, b, alpha=-1), arr(3, 4), arr(2, 3, 5), arr(2, 5, 4))
    same_on_cuda(lambda a, b: ember.kron(a, b), arr(2, 3), arr(3, 1))
    same_on_cuda(lambda x, m, v: ember.addmv(x, m, v, beta=2), arr(3), arr(3, 4), arr(4))
    same_on_cuda(lambda x, a, b: ember.addr(x, a, b, alpha=3), arr(2, 3), arr(2), arr(3))
    same_on_cuda(lambda a, b: ember.inner(a, b), arr(2, 3), arr(4, 3))
    same_on_cuda(lambda a, b: ember.block_diag(a, b), arr(2, 2), arr(3))
    same_on_cuda(lambda a: ember.rot90(a, 3, (1, 2)), arr(2, 3, 4))


@pytest.mark.parametrize("mode,p", [("use_mm_for_euclid_dist", 2.0), ("donot_use_mm_for_euclid_dist", 2.0),
                                    ("use_mm_for_euclid_dist_if_necessary", 1.0)])
def test_cdist(mode, p):
    same_on_cuda(lambda a, b: ember.cdist(a, b, p=p, compute_mode=mode), arr(2, 30, 3), arr(1, 5, 3),
                 rtol=1e-9, atol=1e-9)


def test_shape_and_pointwise_composites():
    repeats = ember.tensor([2, 0, 3])  # on the CPU, as PyTorch allows for a GPU input
    same_on_cuda(lambda x: ember.repeat_interleave(x, repeats, dim=0), arr(3, 2))
    same_on_cuda(lambda x: ember.diff(x, n=2, dim=1), arr(3, 5))
    same_on_cuda(lambda a, b: ember.linalg.cross(a, b), arr(4, 3), arr(4, 3))
    same_on_cuda(lambda x, a, b: (x * 1).addcmul_(a, b, value=0.5), arr(2, 3), arr(3), arr(2, 1))
    same_on_cuda(lambda x: ember.var_mean(x, 1), arr(3, 4))
    same_on_cuda(lambda x: ember.aminmax(x, dim=0), arr(3, 4))
    same_on_cuda(lambda x: ember.logit(x, eps=0.1), RNG.uniform(0.01, 0.99, size=(3, 4)))
    same_on_cuda(lambda x: ember.movedim(x, 0, -1) * 2, arr(2, 3, 4))
    same_on_cuda(lambda a, b: ember.stack(ember.meshgrid(a, b, indexing="xy")), arr(3), arr(2))


def test_device_of_results():
    x = ember.ones(3, 4, device="cuda")
    assert ember.count_nonzero(x).device.type == "cuda"
    assert ember.logspace(0, 2, 3, device="cuda").device.type == "cuda"
    assert ember.repeat_interleave(ember.tensor([1, 2], device="cuda")).device.type == "cuda"
    assert all(p.device.type == "cuda" for p in ember.tensor_split(x, 3, dim=1))
