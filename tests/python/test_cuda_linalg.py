"""ember.linalg on CUDA (cuSOLVER) against the CPU (LAPACK), forward and
backward, batched, float32 and float64, plus the errors cuSOLVER's info
codes must turn into (singular, not positive-definite) and the workspace
memory coming back to the caching allocator.

Every test needs a CUDA GPU and skips, saying why, without one. The table
rows of test_linalg.py also run on CUDA through test_cuda_ops.py; these add
the raw outputs, the batch loop, wide SVDs and the error paths.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy
LA = ember.linalg
TOL = {ember.float32: (2e-4, 2e-4), ember.float64: (1e-10, 1e-10)}
RNG = np.random.default_rng(7)


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy()


def both(array, dtype, requires_grad=False):
    cpu = ember.tensor(np.array(array, copy=True)).to(dtype)
    gpu = cpu.detach().to("cuda")
    if requires_grad:
        cpu.requires_grad_(True)
        gpu.requires_grad_(True)
    return cpu, gpu


def close(gpu, cpu, dtype, msg=""):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(as_np(gpu), as_np(cpu), rtol=rtol, atol=atol, err_msg=msg)


def well_conditioned(shape):
    return RNG.uniform(-1, 1, shape) + shape[-1] * np.eye(shape[-1])


def spd(shape):
    a = RNG.uniform(-1, 1, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_lu_based_functions_match_the_cpu(dtype):
    a = well_conditioned((3, 5, 5))
    b = RNG.uniform(-1, 1, (3, 5, 2))
    ca, ga = both(a, dtype)
    cb, gb = both(b, dtype)
    close(LA.inv(ga), LA.inv(ca), dtype, "inv")
    close(LA.solve(ga, gb), LA.solve(ca, cb), dtype, "solve")
    close(LA.solve(ga, gb[..., 0]), LA.solve(ca, cb[..., 0]), dtype, "solve vector")
    close(LA.solve(ga[0], gb), LA.solve(ca[0], cb), dtype, "solve broadcast")
    for upper in (True, False):
        for left in (True, False):
            rhs_c, rhs_g = (cb, gb) if left else (cb.transpose(-2, -1), gb.transpose(-2, -1))
            close(LA.solve_triangular(ga, rhs_g, upper=upper, left=left, unitriangular=not upper),
                  LA.solve_triangular(ca, rhs_c, upper=upper, left=left, unitriangular=not upper), dtype,
                  f"solve_triangular upper={upper} left={left}")
    close(LA.det(ga), LA.det(ca), dtype, "det")
    for g, c in zip(LA.slogdet(ga), LA.slogdet(ca)):
        close(g, c, dtype, "slogdet")
    perm = np.eye(4)[[3, 1, 0, 2]] * 2.0   # pivoting: det sign from the row swaps
    cp, gp = both(perm, dtype)
    close(LA.det(gp), LA.det(cp), dtype, "det of a permutation")
    assert LA.inv(ga).device.type == "cuda"


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_lu_family_matches_the_cpu(dtype):
    for shape in [(3, 4, 4), (5, 3), (3, 5)]:
        cx, gx = both(RNG.uniform(-1, 1, shape), dtype)
        LU, piv = LA.lu_factor(gx)
        LUc, pivc = LA.lu_factor(cx)
        close(LU, LUc, dtype, f"lu_factor {shape}")
        np.testing.assert_array_equal(piv.cpu().numpy(), pivc.numpy())
        for g, c in zip(LA.lu(gx), LA.lu(cx)):
            close(g, c, dtype, f"lu {shape}")
    ca, ga = both(well_conditioned((2, 4, 4)), dtype)
    cb, gb = both(RNG.uniform(-1, 1, (2, 4, 3)), dtype)
    LU, piv = LA.lu_factor(ga)
    LUc, pivc = LA.lu_factor(ca)
    for adjoint in (False, True):
        close(LA.lu_solve(LU, piv, gb, adjoint=adjoint), LA.lu_solve(LUc, pivc, cb, adjoint=adjoint), dtype,
              f"lu_solve adjoint={adjoint}")
    assert LA.inv_ex(ga).info.cpu().tolist() == [0, 0]
    close(ember.cholesky_inverse(LA.cholesky(ga @ ga.transpose(-2, -1))),
          ember.cholesky_inverse(LA.cholesky(ca @ ca.transpose(-2, -1))), dtype, "cholesky_inverse")


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_factorizations_match_the_cpu(dtype):
    ca, ga = both(spd((2, 4, 4)), dtype)
    close(LA.cholesky(ga), LA.cholesky(ca), dtype, "cholesky")
    close(LA.cholesky(ga, upper=True), LA.cholesky(ca, upper=True), dtype, "cholesky upper")
    close(LA.eigvalsh(ga), LA.eigvalsh(ca), dtype, "eigvalsh")
    w, V = LA.eigh(ga)
    close(w, LA.eigh(ca)[0], dtype, "eigh values")
    close((V * w.unsqueeze(-2)) @ V.transpose(-2, -1), ca, dtype, "eigh reconstruction")
    close(LA.eigvalsh(ga, UPLO="U"), LA.eigvalsh(ca, UPLO="U"), dtype, "eigvalsh upper")
    for shape in [(5, 3), (3, 5), (2, 4, 4)]:
        cx, gx = both(RNG.uniform(-1, 1, shape), dtype)
        for mode in ("reduced", "complete", "r"):
            Q, R = LA.qr(gx, mode=mode)
            Qc, Rc = LA.qr(cx, mode=mode)
            assert Q.shape == Qc.shape and R.shape == Rc.shape
            close(R.abs(), Rc.abs(), dtype, f"qr R {shape} {mode}")
            if mode != "r":
                close(Q @ R, cx, dtype, f"qr QR {shape} {mode}")
        for full in (True, False):
            U, S, Vh = LA.svd(gx, full_matrices=full)
            Uc, Sc, Vhc = LA.svd(cx, full_matrices=full)
            assert U.shape == Uc.shape and S.shape == Sc.shape and Vh.shape == Vhc.shape
            close(S, Sc, dtype, f"svd S {shape}")
            k = S.shape[-1]
            close((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], cx, dtype, f"svd USVh {shape}")
            eye_u = ember.eye(U.shape[-1], dtype=dtype)
            close(U.transpose(-2, -1) @ U, eye_u.expand(*U.shape[:-2], *eye_u.shape), dtype, "U orthonormal")
        close(LA.svdvals(gx), LA.svdvals(cx), dtype, f"svdvals {shape}")
        close(LA.pinv(gx), LA.pinv(cx), dtype, f"pinv {shape}")
        close(LA.matrix_norm(gx, "nuc"), LA.matrix_norm(cx, "nuc"), dtype, "nuclear norm")
        close(LA.matrix_norm(gx, 1), LA.matrix_norm(cx, 1), dtype, "1-norm")


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_compositions_match_the_cpu(dtype):
    ca, ga = both(RNG.uniform(-1, 1, (2, 4, 4)) * 3, dtype)
    cb, gb = both(RNG.uniform(-1, 1, (2, 4, 2)), dtype)
    close(LA.matrix_exp(ga), LA.matrix_exp(ca), dtype, "matrix_exp")
    close(LA.lstsq(ga[:, :, :3], gb).solution, LA.lstsq(ca[:, :, :3], cb).solution, dtype, "lstsq")
    close(LA.solve_ex(ga, gb).result, LA.solve_ex(ca, cb).result, dtype, "solve_ex")
    close(LA.matrix_rank(ga), LA.matrix_rank(ca), dtype, "matrix_rank")
    close(LA.cond(ga), LA.cond(ca), dtype, "cond")
    close(LA.multi_dot([ga[0], ga[1], gb[0]]), LA.multi_dot([ca[0], ca[1], cb[0]]), dtype, "multi_dot")


def test_gradients_match_the_cpu():
    dtype = ember.float64
    a = well_conditioned((2, 4, 4))
    b = RNG.uniform(-1, 1, (2, 4, 3))
    w = RNG.uniform(-1, 1, (4, 4))

    def grads(device_pick):
        ca, ga = both(a, dtype, True)
        cb, gb = both(b, dtype, True)
        A, B = (ga, gb) if device_pick == "cuda" else (ca, cb)
        W = ember.tensor(w).to(A.device)
        loss = (LA.inv(A) * W).sum() + LA.det(A).sum() + LA.slogdet(A).logabsdet.sum()
        loss = loss + (LA.solve(A, B)).sum()
        S = A @ A.transpose(-2, -1) + 4 * ember.eye(4, dtype=dtype, device=A.device)
        loss = loss + (LA.cholesky(S) * W).sum() + (LA.eigvalsh(S) * ember.arange(4, dtype=dtype, device=A.device)).sum()
        # R * R: the same whatever signs each backend's Householder vectors take
        R = LA.qr(B).R
        loss = loss + LA.svdvals(B).sum() + (R * R * W[:3, :3]).sum()
        loss.backward()
        return A.grad, B.grad

    (ga_cpu, gb_cpu), (ga_gpu, gb_gpu) = grads("cpu"), grads("cuda")
    close(ga_gpu, ga_cpu, dtype, "grad A")
    close(gb_gpu, gb_cpu, dtype, "grad B")


def test_info_codes_become_errors():
    singular = ember.tensor([[1.0, 2.0], [2.0, 4.0]]).cuda()
    with pytest.raises(RuntimeError, match=r"linalg.inv: The diagonal element 2 is zero"):
        LA.inv(singular)
    with pytest.raises(RuntimeError, match=r"linalg.solve: The solver failed because the input matrix is singular"):
        LA.solve(singular, ember.ones(2, 1).cuda())
    assert LA.det(singular).item() == 0.0
    batch = ember.stack([ember.eye(3), -ember.eye(3)]).cuda()
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: \(Batch element 1\).*leading minor of order 1"):
        LA.cholesky(batch)
    # the device still works after the errors
    np.testing.assert_allclose(as_np(LA.inv(ember.eye(3).cuda() * 2)), np.eye(3) / 2)


def test_many_small_matrices_and_workspace_memory():
    a = well_conditioned((64, 3, 3))
    ca, ga = both(a, ember.float32)
    close(LA.inv(ga), LA.inv(ca), ember.float32, "64 inverses")
    def work():
        LA.svd(ga)
        LA.eigh(ga)
        LA.qr(ga)
        LA.solve_triangular(ga, ga, upper=True)

    work()  # first use: handles and anything a library keeps for the process
    ember.cuda.synchronize()
    before = ember.cuda.memory_allocated()
    for _ in range(3):
        work()
    ember.cuda.synchronize()
    assert ember.cuda.memory_allocated() == before  # workspaces went back to the cache
