"""Tensor.share_memory_ / Module.share_memory as Hogwild and A3C scripts use them: the data moves
into shared memory in place, forked and spawned children (Process arguments, queues) see it and
write into it. Each child has a timeout so a bug fails instead of hanging."""
import multiprocessing

import pytest

import ember
import ember.nn as nn

CASES = []  # no OpCase rows: process behaviour, not ops


def _add_rank(rank, t, view, param):
    t.add_(rank + 1)
    view.fill_(7.0)  # a view of another shared tensor: lands in the parent's memory
    with ember.no_grad():
        param.mul_(2)


def _run_children(ctx, target, args, n=2):
    procs = [ctx.Process(target=target, args=(r, *args)) for r in range(n)]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join(30)
        assert [p.exitcode for p in procs] == [0] * n
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_children_write_into_shared_tensors(method):
    ctx = multiprocessing.get_context(method)
    t = ember.zeros(3).share_memory_()
    base = ember.zeros(2, 4).share_memory_()
    param = nn.Parameter(ember.ones(2))
    pid = id(param)
    param.share_memory_()
    assert id(param) == pid and isinstance(param, nn.Parameter) and param.requires_grad and param.is_shared()
    _run_children(ctx, _add_rank, (t, base[1, 1:3], param))
    assert t.tolist() == [3.0, 3.0, 3.0]
    assert base.tolist() == [[0, 0, 0, 0], [0, 7, 7, 0]]
    assert param.tolist() == [4.0, 4.0]


def _hogwild_worker(rank, model):
    ember.manual_seed(rank)
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(30):
        x = ember.randn(8, 4)
        loss = ((model(x) - x.sum(1, keepdim=True)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_hogwild_training_updates_the_parents_model():
    model = nn.Linear(4, 1)
    with ember.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    model.share_memory()
    _run_children(multiprocessing.get_context("fork"), _hogwild_worker, (model,))
    assert model.weight.min().item() > 0.5  # learned toward all-ones by the workers, not here


def _echo(q_in, q_out):
    t = q_in.get(timeout=20)
    t += 1
    q_out.put(t.is_shared())


def test_queue_sends_shared_tensor_as_memory():
    ctx = multiprocessing.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    t = ember.full((2,), 5.0).share_memory_()
    p = ctx.Process(target=_echo, args=(q_in, q_out))
    p.start()
    try:
        q_in.put(t)
        assert q_out.get(timeout=30) is True
        p.join(30)
        assert t.tolist() == [6.0, 6.0]
    finally:
        if p.is_alive():
            p.kill()


def test_unshared_tensors_still_travel_by_value():
    ctx = multiprocessing.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    t = ember.full((2,), 5.0)
    p = ctx.Process(target=_echo, args=(q_in, q_out))
    p.start()
    try:
        q_in.put(t)
        assert q_out.get(timeout=30) is False
        p.join(30)
        assert t.tolist() == [5.0, 5.0]
    finally:
        if p.is_alive():
            p.kill()


def test_share_memory_keeps_autograd_and_leaves_bfloat16_alone():
    w = nn.Parameter(ember.tensor([1.0, 2.0]))
    w.share_memory_()
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]
    b = ember.ones(2, dtype=ember.bfloat16)
    assert b.share_memory_() is b and b.is_shared() is False


def test_underscore_grad_is_grad():
    # A3C: shared_param._grad = local_param.grad, then the shared optimizer steps
    shared, local = nn.Parameter(ember.ones(2)), nn.Parameter(ember.ones(2))
    (local * ember.tensor([1.0, 2.0])).sum().backward()
    shared._grad = local.grad
    assert shared.grad is not None and shared.grad.tolist() == [1.0, 2.0]
    ember.optim.SGD([shared], lr=0.5).step()
    assert shared.tolist() == [0.5, 0.0]
    shared._grad = None
    assert shared.grad is None and shared._grad is None
