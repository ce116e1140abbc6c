"""Wrong-typed arguments raise TypeError naming the op and the argument, never
pybind's 'Unable to cast Python instance ... to C++ type ?'."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

x = ember.randn(3, 4)
multi = ember.tensor([1, 2])


class _Fn(ember.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g


WRONG_TYPES = [
    # dims given as something other than an int
    (lambda: x.argmax("a"), "argmax: dim must be an int or None, got str"),
    (lambda: x.argmin(multi), "argmin: dim must be an int or None, got Tensor"),
    (lambda: x.prod(1.5), "prod: dim must be an int or None, got float"),
    (lambda: ember.aminmax(x, dim="a"), "aminmax: dim must be an int or None, got str"),
    (lambda: x.repeat_interleave(2, dim="a"), "repeat_interleave: dim must be an int or None, got str"),
    (lambda: x.repeat_interleave(ember.tensor([1, 1, 1]), output_size="a"),
     "repeat_interleave: output_size must be an int or None, got str"),
    (lambda: x.size("a"), "size: dim must be an int or None, got str"),
    (lambda: x.stride(multi), "stride: dim must be an int or None, got Tensor"),
    (lambda: F.adaptive_avg_pool2d(ember.randn(1, 1, 4, 4), (2, "a")),
     "adaptive_avg_pool2d: output_size must hold ints or None, but element 1 is str"),
    (lambda: F.adaptive_max_pool2d(ember.randn(1, 1, 4, 4), [multi]),
     "adaptive_max_pool2d: output_size must hold ints or None, but element 0 is Tensor"),
    (lambda: ember.einsum(multi, x), "einsum: subscripts must be ints or Ellipsis, but got Tensor"),
    # bool flags
    (lambda: x.var(0, unbiased="a"), "var: unbiased must be a bool, got str"),
    (lambda: ember.std(x, 0, unbiased=multi), "std: unbiased must be a bool, got Tensor"),
    (lambda: ember.var_mean(x, 0, unbiased=[1]), "var_mean: unbiased must be a bool, got list"),
    (lambda: x.to(ember.float64, copy="a"), "to: copy must be a bool, got str"),
    (lambda: x.to(ember.float64, non_blocking=[]), "to: non_blocking must be a bool, got list"),
    (lambda: F.mse_loss(x, x, size_average="a"), "mse_loss: size_average must be a bool or None, got str"),
    (lambda: F.l1_loss(x, x, reduce=multi), "l1_loss: reduce must be a bool or None, got Tensor"),
    # numbers
    (lambda: x.var(0, correction="a"), "var: expected a number, got str"),
    (lambda: ember.full((2,), multi), r"full: expected a number, got a tensor of shape \[2\]"),
    (lambda: x.add(x, alpha=multi), r"add: expected a number, got a tensor of shape \[2\]"),
    # optional tensors
    (lambda: F.cross_entropy(x, ember.tensor([0, 1, 2]), weight="a"),
     "cross_entropy: weight must be a Tensor or None, got str"),
    (lambda: F.binary_cross_entropy_with_logits(x, x.sigmoid(), pos_weight=[1.0]),
     "binary_cross_entropy_with_logits: pos_weight must be a Tensor or None, got list"),
    (lambda: F.layer_norm(x, (4,), weight=1.5), "layer_norm: weight must be a Tensor or None, got float"),
    (lambda: F.batch_norm(x, "a", None, training=True), "batch_norm: running_mean must be a Tensor or None, got str"),
    (lambda: F.group_norm(ember.randn(2, 4, 3), 2, bias=[0.0]), "group_norm: bias must be a Tensor or None, got list"),
    # autograd
    (lambda: ember.autograd.grad(ember.ones(2, requires_grad=True).sum(), [1]),
     "autograd.grad: inputs must hold Tensors \\(or None\\), but element 0 is int"),
    (lambda: ember.autograd.grad(ember.ones(2, requires_grad=True).sum(), "a"),
     "autograd.grad: inputs must hold Tensors \\(or None\\), but element 0 is str"),
    (lambda: ember.autograd.backward([ember.ones(2, requires_grad=True).sum()], ["a"]),
     "backward: grad_tensors must hold Tensors \\(or None\\), but element 0 is str"),
    (lambda: setattr(ember.ones(2, requires_grad=True), "grad", "a"),
     "assigning grad: expected a Tensor or None, got str"),
    # strings and the rest
    (lambda: ember.meshgrid(x[0], x[0], indexing=1.5), "meshgrid: indexing must be 'ij' or 'xy', got float"),
    (lambda: ember.device(1.5), "device: expected a string such as 'cpu' or 'cuda:0', an index, or an ember.device, "
     "got float"),
    (lambda: ember.device(0, 1), r"device: give the index once: ember.device\(0\) or ember.device\('cuda', 0\)"),
    # Python-level functions
    (lambda: F.linear(x, "bad"), "linear: weight must be a Tensor, got str"),
    (lambda: F.linear([1.0], x), "linear: input must be a Tensor, got list"),
    (lambda: F.linear(x, x, 1.0), "linear: bias must be a Tensor or None, got float"),
    (lambda: ember.histc(x, bins=multi), "histc: bins must be an int, got Tensor"),
    (lambda: ember.histc(x, bins=2.5), "histc: bins must be an int, got float"),
    (lambda: ember.optim.Adam([ember.zeros(2, requires_grad=True)], betas={}),
     "Invalid betas: expected a pair \\(beta1, beta2\\), got dict of length 0"),
    (lambda: ember.optim.AdamW([ember.zeros(2, requires_grad=True)], betas=0.9),
     "Invalid betas: expected a pair \\(beta1, beta2\\), got float"),
    (lambda: ember.optim.NAdam([ember.zeros(2, requires_grad=True)], betas=(0.9, "a")),
     "Invalid beta parameter at index 1: expected a number, got str"),
    (lambda: ember.optim.SGD([ember.zeros(2, requires_grad=True)], lr="x"),
     "Invalid learning rate: expected a number, got str"),
    (lambda: ember.optim.RMSprop([ember.zeros(2, requires_grad=True)], momentum=[0.9]),
     "Invalid momentum value: expected a number, got list"),
    (lambda: ember.device(None), "device: expected a string .* got NoneType"),
    (lambda: ember.manual_seed(multi), "manual_seed: expected an int seed, got Tensor"),
    (lambda: x["a":], "slice indices must be integers or None or have an __index__ method, got str"),
    (lambda: x[multi:], r"slice indices must be integers, None or one-element tensors, got a tensor of shape \[2\]"),
]


@pytest.mark.parametrize("i", range(len(WRONG_TYPES)))
def test_wrong_type_raises_type_error_naming_op(i):
    fn, match = WRONG_TYPES[i]
    with pytest.raises(TypeError, match=match) as info:
        fn()
    assert "Unable to cast" not in str(info.value)


@pytest.mark.parametrize("option, value, kind", [
    ("precision", "a", "an int"), ("threshold", multi, "a number"), ("edgeitems", 1.5, "an int"),
    ("linewidth", [80], "an int"), ("sci_mode", "a", "a bool or None"), ("profile", 1, "a str"),
])
def test_set_printoptions_wrong_type(option, value, kind):
    try:
        with pytest.raises(TypeError, match=f"set_printoptions: {option} must be {kind}, got"):
            ember.set_printoptions(**{option: value})
    finally:
        ember.set_printoptions(profile="default", sci_mode=None)


def test_function_backward_returning_non_tensors():
    class Bad(_Fn):
        @staticmethod
        def backward(ctx, g):
            return "bad"

    with pytest.raises(TypeError, match="returned str as the gradient"):
        Bad.apply(ember.ones(2, requires_grad=True)).sum().backward()


def test_accepted_values_still_accepted():
    # What the checked conversions let through is what the casts took before.
    assert x.size(ember.tensor(1)) == 4
    assert x.argmax(ember.tensor(0)).shape == (4,)
    assert x.var(0, unbiased=0).shape == (4,)
    assert x.to(ember.float64, copy=True).dtype == ember.float64
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert F.mse_loss(x, x, size_average=False, reduce=True).shape == ()
    assert ember.einsum(x, ember.tensor([0, 1])).shape == (3, 4)
    assert x[ember.tensor(1):].shape == (2, 4)
    assert ember.histc(x, bins=ember.tensor(3)).shape == (3,)
    p = [ember.zeros(2, requires_grad=True)]
    assert ember.optim.Adam(p, lr=ember.tensor(0.01), betas=[0.8, 0.9]).defaults["betas"] == [0.8, 0.9]
    assert ember.optim.SGD(p, lr=0.1, momentum=0.9).defaults["momentum"] == 0.9


@pytest.mark.parametrize("make, match", [
    (lambda p: ember.optim.Adam(p, lr=-1.0), "Invalid learning rate: -1.0"),
    (lambda p: ember.optim.Adam(p, betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    (lambda p: ember.optim.Adam(p, weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    (lambda p: ember.optim.SGD(p, lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda p: ember.optim.Adagrad(p, initial_accumulator_value=-1),
     "Invalid initial_accumulator_value value: -1"),
    (lambda p: ember.optim.ASGD(p, lambd=-1), "Invalid lambd value: -1"),
    (lambda p: ember.optim.RMSprop(p, eps=-1), "Invalid epsilon value: -1"),
    (lambda p: ember.optim.LBFGS(p, lr=-2), "Invalid learning rate: -2"),
])
def test_optimizer_out_of_range_values_keep_torch_messages(make, match):
    with pytest.raises(ValueError, match=match):
        make([ember.zeros(2, requires_grad=True)])


def test_device_from_an_index_is_cuda():
    # torch.device(1) is cuda:1; a negative index is refused.
    assert ember.device(1) == ember.device("cuda:1")
    assert str(ember.device(0)) == "cuda:0"
    assert ember.device(np.int64(2)) == ember.device("cuda:2")
    with pytest.raises(ValueError, match="device: the index must be a non-negative int32, got -1"):
        ember.device(-1)


@pytest.mark.parametrize("make", [lambda d: ember.zeros(2, device=d), lambda d: ember.zeros(2).to(d),
                                  lambda d: ember.tensor([1.0], device=d)])
def test_device_arguments_refuse_negative_indices(make):
    # device=-1 names the index, rather than saying that there is no GPU.
    with pytest.raises(ValueError, match="device: the index must be a non-negative int32, got -1"):
        make(-1)


@pytest.mark.parametrize("make", [lambda d: ember.zeros(2, device=d), lambda d: ember.tensor([1.0], device=d)])
def test_device_arguments_refuse_bools(make):
    with pytest.raises(TypeError, match="expected a device such as 'cpu' or 'cuda:0', got True"):
        make(True)  # not the index 1


def test_int64_overflow_is_named():
    assert x[:2 ** 70].shape == (3, 4)  # slice bounds clamp, as Python's
    assert x[-2 ** 70:].shape == (3, 4)
    with pytest.raises(IndexError, match="out of range for int64"):
        x[2 ** 70]
    with pytest.raises(RuntimeError, match="zeros: value 1180591620717411303424 is out of range for int64"):
        ember.zeros(2 ** 70)
    with pytest.raises(RuntimeError, match="sum: value .* is out of range for int64"):
        x.sum(2 ** 70)
