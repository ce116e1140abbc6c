"""einsum against numpy.einsum (and torch.einsum when importable): implicit
and explicit outputs, '...' with broadcasting, diagonals, sums, several
operands, the sublist form, non-contiguous operands, gradcheck, and errors."""
import numpy as np
import pytest

import ember
from harness import INT_MATMUL_CPU_ONLY, OpCase, assert_close, make, random_array, table_tests, torch


def ein(eq):
    return lambda *ops: ember.einsum(eq, *ops)


def np_ein(eq):
    return lambda *ops: np.einsum(eq, *ops)


def torch_ein(eq):
    return lambda *ops: torch.einsum(eq, *ops)


FLOATS = (np.float32, np.float64)


def row(name, eq, shapes, dtypes=FLOATS, **kw):
    return OpCase(name, ein(eq), np_ein(eq), shapes, dtypes=dtypes, rtol=1e-4, atol=1e-5, torch_fn=torch_ein(eq), **kw)


CASES = [
    row("einsum_matmul_implicit", "ij,jk", [[(2, 3), (3, 4)], [(1, 5), (5, 1)], [(0, 3), (3, 2)], [(2, 0), (0, 3)]],
        dtypes=FLOATS + (np.int64,), extra=INT_MATMUL_CPU_ONLY),
    row("einsum_matmul_explicit", "ij,jk->ik", [[(3, 2), (2, 4)]]),
    row("einsum_matmul_transposed_out", "ij,jk->ki", [[(3, 2), (2, 4)]]),
    row("einsum_batched", "bij,bjk->bik", [[(2, 3, 4), (2, 4, 5)], [(1, 2, 2), (1, 2, 3)]]),
    row("einsum_batch_broadcast", "bij,bjk->bik", [[(1, 3, 4), (2, 4, 5)]]),
    row("einsum_ellipsis_broadcast", "...ij,...jk", [[(2, 3, 4), (4, 5)], [(2, 1, 2, 3), (4, 3, 2)], [(2, 3), (3, 4)]]),
    row("einsum_ellipsis_middle", "i...j,j...->i...", [[(2, 3, 4), (4, 3)], [(2, 4), (4,)]]),
    # numpy refuses an output that drops '...'; PyTorch sums those dims.
    OpCase("einsum_ellipsis_summed", ein("...ij->ij"), lambda a: a.reshape((-1,) + a.shape[-2:]).sum(0),
           [[(4, 2, 3)], [(2, 3)], [(2, 2, 2, 3)]], dtypes=FLOATS, rtol=1e-4, atol=1e-5, torch_fn=torch_ein("...ij->ij")),
    row("einsum_diag", "ii->i", [[(3, 3)], [(1, 1)], [(0, 0)]]),
    row("einsum_trace", "ii", [[(4, 4)]]),
    row("einsum_diag_3", "iji->j", [[(3, 2, 3)]]),
    row("einsum_diag_kept", "iij->ji", [[(3, 3, 2)]]),
    row("einsum_sum_all", "ij->", [[(2, 3)], [(0, 4)]]),
    row("einsum_sum_axis", "ijk->ik", [[(2, 3, 4)]]),
    row("einsum_permute", "ijk->kij", [[(2, 3, 4)]], dtypes=FLOATS + (np.int32, np.bool_)),
    row("einsum_scalar", "", [[()]]),
    row("einsum_scalar_times", ",ij->ij", [[(), (2, 3)]]),
    row("einsum_outer", "i,j", [[(3,), (4,)], [(0,), (2,)]]),
    row("einsum_hadamard", "ij,ij->ij", [[(2, 3), (2, 3)]]),
    row("einsum_dot", "i,i", [[(5,), (5,)], [(0,), (0,)]]),
    row("einsum_matvec", "ij,j->i", [[(3, 4), (4,)]]),
    row("einsum_bilinear", "bn,anm,bm->ba", [[(2, 3), (4, 3, 5), (2, 5)]]),
    row("einsum_chain", "ij,jk,kl->il", [[(2, 3), (3, 4), (4, 2)]]),
    row("einsum_shared_free", "ijk,jl,lk->i", [[(2, 3, 4), (3, 5), (5, 4)]]),
    row("einsum_attention", "bhqd,bhkd->bhqk", [[(2, 2, 3, 4), (2, 2, 5, 4)]]),
    row("einsum_upper_lower", "Ba,aB", [[(2, 3), (3, 2)]]),
    row("einsum_implicit_order", "bA,aB", [[(2, 3), (3, 2)]]),
    row("einsum_spaces", "i j , j k -> i k", [[(2, 3), (3, 2)]]),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_implicit_output_sorts_upper_case_first():
    a, b = random_array((2, 3)), random_array((3, 2))
    out = ember.einsum("bA,aB", make(a), make(b))
    assert tuple(out.shape) == (3, 2, 3, 2)  # labels A, B, a, b
    assert_close(out, np.einsum("bA,aB->ABab", a, b), 1e-5, 1e-6)


def test_size_one_labels_broadcast_like_torch():
    # PyTorch broadcasts a label of size 1 against the other operands' size.
    a, b = random_array((2, 1)), random_array((3,))
    assert_close(ember.einsum("ij,j", make(a), make(b)), a[:, 0] * b.sum(), 1e-5, 1e-6)
    a, b = random_array((1, 3)), random_array((2, 3))
    assert_close(ember.einsum("ij,ij->ij", make(a), make(b)), a * b, 1e-5, 1e-6)
    a, b = random_array((1,)), random_array((4,))
    assert_close(ember.einsum("i,i->", make(a), make(b)), a[0] * b.sum(), 1e-5, 1e-6)


def test_operands_as_one_list_and_sublist_form():
    a, b = random_array((2, 3)), random_array((3, 4))
    expected = a @ b
    assert_close(ember.einsum("ij,jk", [make(a), make(b)]), expected, 1e-5, 1e-6)
    assert_close(ember.einsum(make(a), [0, 1], make(b), [1, 2], [0, 2]), expected, 1e-5, 1e-6)
    assert_close(ember.einsum(make(a), [0, 1], make(b), [1, 2]), expected, 1e-5, 1e-6)
    x = random_array((2, 3, 4))
    assert_close(ember.einsum(make(x), [Ellipsis, 0], [0, Ellipsis]), np.einsum("...i->i...", x), 1e-5, 1e-6)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded"])
def test_non_contiguous_operands(layout):
    a = random_array((3, 4))
    b = random_array((4, 5))
    if layout == "transposed":
        ta = make(np.ascontiguousarray(a.T)).t()
        tb = make(np.ascontiguousarray(b.T)).t()
    elif layout == "sliced":
        ta = make(np.repeat(a, 2, axis=1))[:, ::2]
        tb = make(np.repeat(b, 2, axis=0))[::2]
    else:
        a = np.broadcast_to(a[:1], a.shape).copy()
        ta = make(a[:1]).expand(3, 4)
        tb = make(b)
    assert not ta.is_contiguous()
    assert_close(ember.einsum("ij,jk->ik", ta, tb), a @ b, 1e-5, 1e-6)
    assert_close(ember.einsum("ij,ij->j", ta, ta), (a * a).sum(0), 1e-5, 1e-6)


def test_diagonal_of_non_contiguous():
    x = random_array((4, 4, 2))
    t = make(np.ascontiguousarray(x.transpose(2, 0, 1))).permute(1, 2, 0)
    assert_close(ember.einsum("iij->ij", t), np.einsum("iij->ij", x), 1e-5, 1e-6)


def test_gradients_flow_through_diagonal_and_broadcast():
    a = make(random_array((3, 3), np.float64), requires_grad=True)
    b = make(random_array((2, 1, 3), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: ember.einsum("ii,...i->...", a, b), [a, b])
    c = make(random_array((1, 4), np.float64), requires_grad=True)
    d = make(random_array((3, 4), np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda c, d: ember.einsum("ij,ij->ij", c, d), [c, d])
    assert ember.autograd.gradcheck(lambda c, d: ember.einsum("ij,kj->", c, d), [c, d])


def test_integer_dtypes_keep_their_dtype():
    a = ember.arange(6, dtype=ember.int32).reshape(2, 3)
    b = ember.arange(6, dtype=ember.int32).reshape(3, 2)
    out = ember.einsum("ij,jk", a, b)
    assert out.dtype == ember.int32
    assert_close(out, np.arange(6).reshape(2, 3) @ np.arange(6).reshape(3, 2))
    assert ember.einsum("ij->", a).dtype == ember.int64  # a lone sum promotes, as torch.einsum


def test_large_contraction_uses_matmul_memory():
    # A product-then-sum would build a 200x200x200 tensor (64 MB in float64); the
    # matmul path does not, and matches numpy.
    a, b = random_array((200, 200), np.float64), random_array((200, 200), np.float64)
    assert_close(ember.einsum("ik,kj->ij", make(a), make(b)), a @ b, 1e-10, 1e-10)


def test_torch_agrees_on_broadcast_cases():
    if torch is None:
        pytest.skip("torch is not importable")
    cases = [("ij,j", (2, 1), (3,)), ("i,i->", (1,), (4,)), ("...ij->ij", (5, 2, 3)), ("ij->...", (2, 3))]
    for eq, *shapes in cases:
        arrays = [random_array(s, np.float64) for s in shapes]
        ref = torch.einsum(eq, *[torch.from_numpy(a) for a in arrays]).numpy()
        assert_close(ember.einsum(eq, *[make(a) for a in arrays]), ref, 1e-10, 1e-10, msg=eq)


ERRORS = [
    ("ij,jk->ik", [(2, 3)], RuntimeError, "fewer operands"),
    ("ij", [(2, 3), (3, 4)], RuntimeError, "more operands"),
    ("ijk", [(2, 3)], RuntimeError, r"number of subscripts in the equation \(3\) does not match"),
    ("ijk...", [(2, 3)], RuntimeError, r"is more than the number of dimensions \(2\)"),
    ("ij,jk", [(2, 3), (4, 4)], RuntimeError, r"subscript j has size 4 for operand 1.*\[2, 3\], \[4, 4\]"),
    ("ii", [(2, 3)], RuntimeError, "subscript i is repeated for operand 0 but the sizes don't match"),
    ("ij->ii", [(2, 3)], RuntimeError, "output subscript i appears more than once"),
    ("ij->k", [(2, 3)], RuntimeError, "output subscript k does not appear"),
    ("i1", [(2, 3)], RuntimeError, "invalid subscript given at index 1"),
    ("i.j", [(2, 3)], RuntimeError, "not part of any ellipsis"),
    ("i...j...", [(2, 3)], RuntimeError, "ellipsis was already found"),
    ("...i,...i", [(2, 3), (4, 3)], RuntimeError, r"covered by '...'.*\[2, 3\], \[4, 3\]"),
]


@pytest.mark.parametrize("eq,shapes,exc,match", ERRORS, ids=[e[0] + "-" + e[3][:20] for e in ERRORS])
def test_errors(eq, shapes, exc, match):
    with pytest.raises(exc, match=match) as info:
        ember.einsum(eq, *[ember.zeros(*s) for s in shapes])
    message = str(info.value)
    assert message.startswith("einsum: ") and f"equation '{eq}'" in message, message


def test_type_errors():
    with pytest.raises(RuntimeError, match="einsum: expected all operands to have the same dtype"):
        ember.einsum("ij,jk", ember.zeros(2, 3), ember.zeros(3, 4, dtype=ember.float64))
    with pytest.raises(TypeError, match="einsum: expected a Tensor as operand 1"):
        ember.einsum("ij,jk", ember.zeros(2, 3), 3)
    with pytest.raises(TypeError, match="einsum"):
        ember.einsum()
    with pytest.raises(RuntimeError, match="einsum: must specify"):
        ember.einsum("ij", [])
    with pytest.raises(ValueError, match="einsum: subscript 60"):
        ember.einsum(ember.zeros(2), [60])


def random_equation(rng, with_ellipsis):
    """A random equation (1-3 operands, repeated labels, sizes of 1 that broadcast,
    '...' covering 0-3 dims, an implicit or explicit output) and its operand shapes."""
    sizes = {c: int(rng.integers(1, 4)) for c in "abcd"}
    ell = [int(rng.integers(1, 4)) for _ in range(3)]
    terms, shapes = [], []
    for _ in range(int(rng.integers(1, 4))):
        labels = [str(c) for c in rng.choice(list("abcd"), size=int(rng.integers(0, 4)))]
        shape = [sizes[c] for c in labels]
        if with_ellipsis and rng.random() < 0.6:
            covered = int(rng.integers(0, 4))
            at = int(rng.integers(0, len(labels) + 1))
            labels.insert(at, "...")
            shape[at:at] = [ell[3 - covered + i] if rng.random() < 0.7 else 1 for i in range(covered)]
        terms.append("".join(labels))
        shapes.append(tuple(shape))
    equation = ",".join(terms)
    if rng.random() < 0.5:
        used = sorted(set(equation) - set(".,"))
        out = [c for c in used if rng.random() < 0.5]
        rng.shuffle(out)
        if with_ellipsis and rng.random() < 0.5:
            out.insert(int(rng.integers(0, len(out) + 1)), "...")
        equation += "->" + "".join(out)
    return equation, shapes


def test_random_equations_match_numpy():
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(300):
        equation, shapes = random_equation(rng, with_ellipsis=False)
        arrays = [rng.standard_normal(s) for s in shapes]
        try:
            expected = np.einsum(equation, *arrays)
        except ValueError:
            continue
        compared += 1
        assert_close(ember.einsum(equation, *[make(a) for a in arrays]), expected, 1e-9, 1e-9,
                     msg=f"{equation} {shapes}")
    assert compared > 200


def test_random_equations_with_ellipsis_match_torch():
    if torch is None:
        pytest.skip("torch is not importable")
    rng = np.random.default_rng(12)
    for _ in range(300):
        equation, shapes = random_equation(rng, with_ellipsis=True)
        arrays = [rng.standard_normal(s) for s in shapes]
        try:
            expected = torch.einsum(equation, *[torch.from_numpy(a) for a in arrays]).numpy()
        except RuntimeError:
            with pytest.raises(RuntimeError, match="einsum"):
                ember.einsum(equation, *[make(a) for a in arrays])
            continue
        assert_close(ember.einsum(equation, *[make(a) for a in arrays]), expected, 1e-9, 1e-9,
                     msg=f"{equation} {shapes}")
