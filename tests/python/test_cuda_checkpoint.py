"""Custom autograd Functions and activation checkpointing on CUDA tensors, and
the GPU generator's state: the checkpointed block's dropout mask on the GPU
must come out the same when backward runs it again.

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np

import ember
from ember import nn
from ember.autograd import Function
from ember.utils.checkpoint import checkpoint
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


def test_custom_function_on_cuda_matches_cpu():
    x_cpu = ember.randn(4, 5, dtype=ember.float64)
    x_gpu = x_cpu.cuda().requires_grad_()
    x_cpu.requires_grad_()
    for x in (x_cpu, x_gpu):
        Cube.apply(x).sum().backward()
    assert x_gpu.grad.device.type == "cuda"
    np.testing.assert_allclose(x_gpu.grad.cpu().numpy(), x_cpu.grad.numpy(), rtol=1e-12)
    assert ember.autograd.gradcheck(lambda t: Cube.apply(t), (ember.randn(3, dtype=ember.float64, device="cuda",
                                                                         requires_grad=True),))


def test_cuda_rng_state_round_trip():
    state = ember.cuda.get_rng_state()
    a = ember.randn(1000, device="cuda")
    ember.cuda.set_rng_state(state)
    b = ember.randn(1000, device="cuda")
    np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())


def test_checkpointed_dropout_block_on_cuda():
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Dropout(0.5), nn.Linear(64, 32)).cuda()
    x = ember.randn(16, 32, device="cuda", requires_grad=True)
    results = []
    for run in (lambda t: m(t), lambda t: checkpoint(m, t, use_reentrant=False)):
        m.zero_grad()
        x.grad = None
        ember.manual_seed(11)
        (run(x) ** 2).sum().backward()
        results.append([x.grad.cpu().numpy()] + [p.grad.cpu().numpy() for p in m.parameters()])
    for plain, ckpt in zip(*results):
        np.testing.assert_allclose(ckpt, plain, rtol=1e-5, atol=1e-6)
