"""ember.nn.Module semantics: registration, iteration, state_dict, hooks, modes, conversion, repr."""
import copy
import sys
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
from harness import torch


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        self.scale = nn.Parameter(ember.ones(2))
        self.register_buffer("count", ember.zeros(1))
        self.register_buffer("scratch", ember.zeros(1), persistent=False)

    def forward(self, x):
        return self.features(x) * self.scale


def test_parameter_is_tensor_and_requires_grad():
    p = nn.Parameter(ember.randn(2, 3))
    assert isinstance(p, ember.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    assert not nn.Parameter(ember.randn(2), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")
    # ops accept the subclass and return plain tensors
    y = ember.matmul(p, ember.ones(3, 1))
    assert type(y) is ember.Tensor
    y.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), np.ones((2, 3)))


def test_parameter_shares_storage_with_data():
    t = ember.zeros(3)
    p = nn.Parameter(t)
    with ember.no_grad():
        p.add_(1)
    np.testing.assert_allclose(t.numpy(), np.ones(3))


def test_registration_and_named_members():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "features.0.weight", "features.0.bias", "features.2.weight", "features.2.bias"]
    assert [n for n, _ in net.named_buffers()] == ["count", "scratch"]
    assert [n for n, _ in net.named_children()] == ["features"]
    assert [n for n, _ in net.named_modules()] == ["", "features", "features.0", "features.1", "features.2"]
    assert len(list(net.parameters(recurse=False))) == 1
    assert [n for n, _ in net.named_parameters(prefix="model")][0] == "model.scale"
    assert net.features[0].weight.shape == (3, 4)
    assert "scale" in dir(net) and "features" in dir(net)


def test_shared_parameters_are_deduplicated():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert len(list(seq.modules())) == 2


def test_setattr_reassign_and_delete():
    m = nn.Module()
    m.w = nn.Parameter(ember.ones(2))
    assert "w" in m._parameters
    with pytest.raises(TypeError):
        m.w = ember.ones(2)  # plain tensor onto a parameter slot
    m.w = None
    assert m._parameters["w"] is None and m.w is None
    del m.w
    assert not hasattr(m, "w")
    m.sub = nn.Linear(1, 1)
    assert "sub" in m._modules
    m.sub = nn.ReLU()
    assert isinstance(m.sub, nn.ReLU)
    m.register_buffer("b", ember.ones(1))
    m.b = ember.zeros(1)
    assert m._buffers["b"].item() == 0.0
    with pytest.raises(KeyError):
        m.register_buffer("a.b", ember.ones(1))
    with pytest.raises(TypeError):
        m.register_buffer("c", 3)
    with pytest.raises(AttributeError):
        _ = m.missing


def test_assign_before_init_raises():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))

    with pytest.raises(AttributeError):
        Bad()


def test_state_dict_keys_and_values():
    net = Net()
    sd = net.state_dict()
    assert list(sd.keys()) == ["scale", "count", "features.0.weight", "features.0.bias",
                               "features.2.weight", "features.2.bias"]
    assert not sd["features.0.weight"].requires_grad  # detached unless keep_vars
    assert net.state_dict(keep_vars=True)["scale"] is net.scale


def test_load_state_dict_roundtrip():
    a, b = Net(), Net()
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    x = ember.randn(5, 4)
    np.testing.assert_allclose(a(x).detach().numpy(), b(x).detach().numpy())
    assert b.features[0].weight.requires_grad


def test_load_state_dict_assign():
    net = nn.Linear(2, 2)
    w = ember.ones(2, 2)
    net.load_state_dict({"weight": w, "bias": ember.zeros(2)}, assign=True)
    assert isinstance(net.weight, nn.Parameter) and net.weight.requires_grad
    with ember.no_grad():
        w.fill_(3.0)
    assert net.weight.detach().numpy()[0, 0] == 3.0  # shares the checkpoint's storage


def test_load_state_dict_strict_reports():
    net = nn.Sequential(nn.Linear(2, 3))
    sd = {"0.weight": ember.zeros(3, 2), "extra": ember.zeros(1), "0.foo": ember.zeros(1)}
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    assert str(err.value) == ('Error(s) in loading state_dict for Sequential:\n'
                              '\tMissing key(s) in state_dict: "0.bias". \n'
                              '\tUnexpected key(s) in state_dict: "extra", "0.foo". ')
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["0.bias"] and result.unexpected_keys == ["extra", "0.foo"]
    np.testing.assert_allclose(net[0].weight.detach().numpy(), np.zeros((3, 2)))


def test_load_state_dict_size_mismatch():
    net = nn.Linear(2, 3)
    sd = net.state_dict()
    sd["weight"] = ember.zeros(2, 2)
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape "
                                           r"ember.Size\(\[2, 2\]\) from checkpoint, the shape in current "
                                           r"model is ember.Size\(\[3, 2\]\)"):
        net.load_state_dict(sd)


def test_train_eval_propagates():
    net = Net()
    assert net.training and net.features[1].training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError):
        net.train("yes")


def test_requires_grad_and_zero_grad():
    net = Net()
    net(ember.randn(3, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0.0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_to_dtype_keeps_parameters_and_int_buffers():
    bn_like = nn.Module()
    bn_like.lin = nn.Linear(2, 2)
    bn_like.register_buffer("steps", ember.tensor(3))
    weight = bn_like.lin.weight
    bn_like.lin(ember.ones(1, 2)).sum().backward()
    out = bn_like.to(ember.float64)
    assert out is bn_like
    assert bn_like.lin.weight is weight and weight.is_leaf  # identity kept: optimizers stay valid
    assert weight.grad.dtype == ember.float64
    assert isinstance(bn_like.lin.weight, nn.Parameter) and bn_like.lin.weight.dtype == ember.float64
    assert bn_like.steps.dtype == ember.int64
    bn_like.float()
    assert bn_like.lin.bias.dtype == ember.float32
    bn_like.to(ember.zeros(1, dtype=ember.float64))
    assert bn_like.lin.weight.dtype == ember.float64
    bn_like.half()
    assert bn_like.lin.weight.dtype == ember.float16
    bn_like.to("cpu")
    with pytest.raises(TypeError):
        bn_like.to(ember.int64)
    assert bn_like.lin.weight.requires_grad


def test_apply_visits_children_first():
    seen = []
    net = Net()
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Sequential", "Net"]


def test_forward_hooks_and_handles():
    lin = nn.Linear(2, 2)
    calls = []

    def pre(module, args):
        calls.append("pre")
        return (args[0] * 0,)

    def post(module, args, output):
        calls.append("post")
        return output + 1

    h1 = lin.register_forward_pre_hook(pre)
    h2 = lin.register_forward_hook(post)
    y = lin(ember.randn(3, 2))
    expected = lin.bias.detach().numpy() + 1
    np.testing.assert_allclose(y.detach().numpy(), np.broadcast_to(expected, (3, 2)), rtol=1e-6)
    assert calls == ["pre", "post"]
    h1.remove()
    h2.remove()
    x = ember.randn(3, 2)
    np.testing.assert_allclose(lin(x).detach().numpy(), nn.functional.linear(x, lin.weight, lin.bias)
                               .detach().numpy())
    assert calls == ["pre", "post"]


def test_forward_hook_with_kwargs():
    lin = nn.Linear(2, 2)
    got = {}
    lin.register_forward_hook(lambda m, a, kw, out: got.update(kw=kw), with_kwargs=True)
    lin(input=ember.randn(1, 2))
    assert "input" in got["kw"]


def test_missing_forward_raises():
    with pytest.raises(NotImplementedError):
        nn.Module()(1)


def test_repr_matches_torch_format():
    net = Net()
    assert repr(net) == (
        "Net(\n"
        "  (features): Sequential(\n"
        "    (0): Linear(in_features=4, out_features=3, bias=True)\n"
        "    (1): ReLU()\n"
        "    (2): Linear(in_features=3, out_features=2, bias=True)\n"
        "  )\n"
        ")")
    assert repr(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)) == \
        "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)"
    assert repr(nn.BatchNorm2d(4)) == \
        "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"
    assert repr(nn.LayerNorm(5)) == "LayerNorm((5,), eps=1e-05, elementwise_affine=True)"
    assert repr(nn.Dropout(0.2)) == "Dropout(p=0.2, inplace=False)"
    assert repr(nn.GELU(approximate="tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.MaxPool2d(2)) == \
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.MultiheadAttention(4, 2)) == (
        "MultiheadAttention(\n"
        "  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)\n"
        ")")


def test_container_reprs():
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)])
    assert repr(ml) == (
        "ModuleList(\n"
        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (3): ReLU()\n"
        "  (4): Linear(in_features=2, out_features=2, bias=True)\n"
        ")")
    assert repr(nn.ModuleList()) == "ModuleList()"
    nested = nn.ModuleList([nn.Sequential(nn.ReLU())] * 2)
    assert repr(nested) == "ModuleList(\n  (0-1): 2 x Sequential(\n    (0): ReLU()\n  )\n)"
    pl = nn.ParameterList([ember.ones(2, 3), ember.ones(4)])
    assert repr(pl) == ("ParameterList(\n"
                        "    (0): Parameter containing: [ember.float32 of size 2x3]\n"
                        "    (1): Parameter containing: [ember.float32 of size 4]\n"
                        ")")
    pd = nn.ParameterDict({"a": ember.ones(1)})
    assert repr(pd) == "ParameterDict(  (a): Parameter containing: [ember.float32 of size 1])"


def test_sequential_indexing():
    a, b, c = nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c
    assert list(seq) == [a, b, c]
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    with pytest.raises(IndexError):
        seq[3]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and isinstance(seq[3], nn.Sigmoid)
    del seq[0]
    assert list(seq._modules) == ["0", "1", "2"] and seq[0] is b
    named = nn.Sequential(OrderedDict([("fc", a), ("act", b)]))
    assert list(named.state_dict()) == ["fc.weight", "fc.bias"]
    assert named(ember.ones(5, 1)).shape == (5, 2)


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    ml.append(nn.ReLU())
    assert isinstance(ml[-1], nn.ReLU)
    ml += [nn.Tanh()]
    assert len(ml) == 5
    assert list(ml.state_dict())[0] == "0.weight"
    md = nn.ModuleDict({"a": nn.Linear(1, 2), "b": nn.ReLU()})
    assert list(md.keys()) == ["a", "b"] and "a" in md
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias"]


def test_parameter_list_and_dict():
    pl = nn.ParameterList([nn.Parameter(ember.ones(2)), ember.zeros(3)])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = nn.ParameterDict({"x": nn.Parameter(ember.ones(1))})
    pd["y"] = ember.zeros(2)
    assert list(pd.keys()) == ["x", "y"] and isinstance(pd["y"], nn.Parameter)
    assert len(list(pd.parameters())) == 2


def test_sequential_pop_repeat_and_concatenate():
    a, b, c = nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1)
    seq = nn.Sequential(a, b, c)
    assert seq.pop(1) is b and list(seq._modules) == ["0", "1"] and list(seq) == [a, c]
    assert nn.Sequential(a, b, c).pop(-1) is c
    seq = nn.Sequential(a, b, c)
    front = seq.pop(slice(0, 2))
    assert isinstance(front, nn.Sequential) and list(front) == [a, b] and list(seq) == [c]
    with pytest.raises(IndexError):
        seq.pop(5)
    # * repeats the same module objects (torch's semantics: shared parameters), numbered 0..n-1.
    named = nn.Sequential(OrderedDict([("fc", a), ("act", b)]))
    for twice in (named * 2, 2 * named):
        assert type(twice) is nn.Sequential and list(twice._modules) == ["0", "1", "2", "3"]
        assert list(twice) == [a, b, a, b]
        assert len(list(twice.parameters())) == 2
    assert list(named._modules) == ["fc", "act"]  # the operands stay as they were
    seq = nn.Sequential(a, b)
    seq *= 3
    assert list(seq) == [a, b] * 3 and list(seq._modules) == [str(i) for i in range(6)]
    with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
        nn.Sequential(a) * 0
    with pytest.raises(TypeError, match="unsupported operand"):
        nn.Sequential(a) * 1.5
    both = nn.Sequential(a) + nn.Sequential(OrderedDict([("x", c)]))
    assert type(both) is nn.Sequential and list(both) == [a, c] and list(both._modules) == ["0", "1"]
    seq = nn.Sequential(a)
    seq += nn.Sequential(b, c)
    assert list(seq) == [a, b, c]
    with pytest.raises(ValueError, match="supports only objects of Sequential class"):
        nn.Sequential(a) + nn.ModuleList([b])
    x = ember.ones(4, 1)
    np.testing.assert_allclose((nn.Sequential(a, b) + nn.Sequential(c))(x).detach().numpy(),
                               c(b(a(x))).detach().numpy())


def test_sequential_insert_extend_negative_indices_and_subclass_slices():
    a, b, c, d = nn.Linear(1, 1), nn.ReLU(), nn.Tanh(), nn.Sigmoid()
    seq = nn.Sequential(a, b)
    seq.insert(-1, c)
    assert list(seq) == [a, c, b] and list(seq._modules) == ["0", "1", "2"]
    seq.insert(3, d)
    assert list(seq) == [a, c, b, d]
    with pytest.raises(IndexError):
        seq.insert(9, d)
    seq.extend([a])
    assert seq[-1] is a and seq[-5] is a and len(seq) == 5
    seq[-1] = b
    assert seq[4] is b
    del seq[-2]
    assert list(seq) == [a, c, b, b]

    class Mine(nn.Sequential):
        pass

    class MyList(nn.ModuleList):
        pass

    assert type(Mine(a, b, c)[1:]) is Mine and type(MyList([a, b])[:1]) is MyList
    assert list(Mine(a, b, c)[::-1]._modules) == ["2", "1", "0"]  # a slice keeps the names, as torch


def test_module_list_pop_and_add():
    mods = [nn.Linear(1, 1), nn.ReLU(), nn.Tanh()]
    ml = nn.ModuleList(mods)
    assert ml.pop(0) is mods[0] and list(ml) == mods[1:] and list(ml._modules) == ["0", "1"]
    assert ml.pop(-1) is mods[2] and list(ml) == [mods[1]]
    ml = nn.ModuleList(mods)
    front = ml.pop(slice(0, 2))
    assert isinstance(front, nn.ModuleList) and list(front) == mods[:2] and list(ml) == [mods[2]]
    joined = nn.ModuleList(mods[:1]) + nn.ModuleList(mods[1:])
    assert type(joined) is nn.ModuleList and list(joined) == mods and list(joined._modules) == ["0", "1", "2"]
    assert list(nn.ModuleList(mods[:1]) + mods[1:]) == mods  # any iterable of modules, as torch
    ml = nn.ModuleList(mods)
    ml.insert(-1, nn.Sigmoid())
    assert isinstance(ml[2], nn.Sigmoid) and ml[3] is mods[2]


def test_parameter_dict_orders_a_plain_dict_by_key():
    # torch sorts a plain dict's keys (parameters() order, so optimizer state indices, follow);
    # an OrderedDict, a ParameterDict or a sequence of pairs keeps its order.
    pd = nn.ParameterDict({"w2": ember.zeros(2), "w1": ember.zeros(1), "b": ember.zeros(3)})
    assert list(pd.keys()) == ["b", "w1", "w2"]
    assert [tuple(p.shape) for p in pd.parameters()] == [(3,), (1,), (2,)]
    kept = nn.ParameterDict(OrderedDict([("w2", ember.zeros(2)), ("w1", ember.zeros(1))]))
    assert list(kept) == ["w2", "w1"]
    assert list(nn.ParameterDict(kept)) == ["w2", "w1"]
    pd.update({"z": ember.zeros(1), "c": ember.zeros(1)})
    pd.update([("y", ember.zeros(1)), ("x", ember.zeros(1))])
    assert list(pd) == ["b", "w1", "w2", "c", "z", "y", "x"]
    model = nn.Module()
    model.p = nn.ParameterDict({"w2": ember.zeros(2), "w1": ember.zeros(1)})
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for p in model.parameters():
        p.grad = ember.ones_like(p)
    opt.step()
    assert {k: tuple(v["momentum_buffer"].shape) for k, v in opt.state_dict()["state"].items()} == {0: (1,), 1: (2,)}
    if torch is not None:
        ref = torch.nn.ParameterDict({"w2": torch.zeros(2), "w1": torch.zeros(1), "b": torch.zeros(3)})
        ref.update({"z": torch.zeros(1), "c": torch.zeros(1)})
        ref.update([("y", torch.zeros(1)), ("x", torch.zeros(1))])
        assert list(ref) == list(pd)


def test_parameter_dict_dict_api():
    pd = nn.ParameterDict(OrderedDict([("a", ember.ones(1)), ("b", ember.ones(2))]))
    assert "a" in pd and "q" not in pd and len(pd) == 2 and list(iter(pd)) == ["a", "b"]
    assert list(reversed(pd)) == ["b", "a"]
    assert pd.get("a") is pd["a"] and pd.get("q") is None and pd.get("q", 5) == 5
    assert [k for k, _ in pd.items()] == ["a", "b"] and [tuple(v.shape) for v in pd.values()] == [(1,), (2,)]
    b = pd.pop("b")
    assert isinstance(b, nn.Parameter) and list(pd) == ["a"] and len(list(pd.parameters())) == 1
    w = pd.setdefault("w", ember.zeros(3))
    assert isinstance(w, nn.Parameter) and pd["w"] is w and pd.setdefault("w", ember.ones(1)) is w
    assert pd.popitem()[0] == "w" and list(pd) == ["a"]
    pd["c"] = None  # values other than tensors are kept as they are
    assert pd["c"] is None and "c" in pd and len(list(pd.parameters())) == 1
    assert "Object of type: NoneType" in repr(pd)
    copied = pd.copy()
    assert type(copied) is nn.ParameterDict and list(copied) == ["a", "c"] and copied["a"] is pd["a"]
    fresh = pd.fromkeys(["y", "x"], ember.ones(1))
    assert list(fresh) == ["y", "x"] and fresh["y"] is not fresh["x"]
    merged = pd | {"e": ember.ones(1), "d": ember.ones(1)}
    assert type(merged) is nn.ParameterDict and list(merged) == ["a", "c", "d", "e"] and list(pd) == ["a", "c"]
    left = {"z": ember.ones(1)} | pd
    assert type(left) is dict and list(left) == ["z", "a", "c"]
    pd |= nn.ParameterDict(OrderedDict([("k", ember.ones(1))]))
    assert list(pd) == ["a", "c", "k"]
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []
    with pytest.raises(KeyError):
        pd.popitem()
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = ember.ones(1)
    with pytest.raises(TypeError, match="iterable of key/value pairs"):
        pd.update(5)
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        pd.update([("a", 1, 2)])
    with pytest.raises(RuntimeError, match="should not be called"):
        pd(ember.ones(1))


def test_consume_prefix_in_state_dict_if_present():
    from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present

    class Wrapper(nn.Module):  # what a DDP / DataParallel checkpoint's keys look like
        def __init__(self, module):
            super().__init__()
            self.module = module

    saved = Wrapper(nn.Sequential(nn.Linear(2, 3))).state_dict()
    assert list(saved) == ["module.0.weight", "module.0.bias"]
    saved["other"] = ember.zeros(1)
    consume_prefix_in_state_dict_if_present(saved, "module.")
    assert list(saved) == ["other", "0.weight", "0.bias"]  # renamed entries move to the end, as in torch
    bare = nn.Sequential(nn.Linear(2, 3))
    del saved["other"]
    bare.load_state_dict(saved)
    consume_prefix_in_state_dict_if_present(saved, "module.")  # nothing left to strip
    assert list(saved) == ["0.weight", "0.bias"]
    # A torch checkpoint's _metadata (per-module versions) is renamed too; "module" becomes the root "".
    sd = OrderedDict([("module.0.weight", 1), ("module.0.bias", 2)])
    sd._metadata = OrderedDict([("", {"version": 1}), ("module", {"version": 2}), ("module.0", {"version": 3})])
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert list(sd) == ["0.weight", "0.bias"]
    assert sd._metadata == OrderedDict([("", {"version": 2}), ("0", {"version": 3})])
    from ember.nn.modules.utils import _pair, _triple
    assert _pair(3) == (3, 3) and _triple((1, 2, 3)) == (1, 2, 3)
    assert nn.utils is sys.modules["ember.nn.utils"]  # ember.nn.utils, not the modules package's utils
    if torch is not None:
        from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present as ref_consume
        ref = OrderedDict([("module.0.weight", 1), ("x", 0), ("module.0.bias", 2)])
        ref._metadata = OrderedDict([("", {"version": 1}), ("module", {"version": 2}), ("module.0", {"version": 3})])
        ours = OrderedDict(ref)
        ours._metadata = OrderedDict(ref._metadata)
        ref_consume(ref, "module.")
        consume_prefix_in_state_dict_if_present(ours, "module.")
        assert list(ours.items()) == list(ref.items()) and ours._metadata == ref._metadata


def test_deepcopy_makes_independent_module():
    a = nn.Linear(2, 2)
    b = copy.deepcopy(a)
    assert isinstance(b.weight, nn.Parameter)
    with ember.no_grad():
        b.weight.fill_(0)
    assert float(a.weight.abs().sum()) > 0


def test_deepcopy_clones_buffers_and_keeps_sharing():
    bn = nn.BatchNorm1d(3)
    twin = copy.deepcopy(bn)
    with ember.no_grad():
        twin.running_var.fill_(5.0)
    np.testing.assert_allclose(bn.running_var.numpy(), np.ones(3))
    seq = nn.Sequential(nn.Linear(2, 2))
    seq.add_module("again", seq[0])
    dup = copy.deepcopy(seq)
    assert dup[0] is dup.again and dup[0] is not seq[0]


def test_identity_flatten_unflatten():
    x = ember.randn(2, 3, 4)
    assert nn.Identity(54, unused="x")(x) is x
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0)(x).shape == (24,)
    assert nn.Unflatten(1, (3, 2, 2))(nn.Flatten()(x)).shape == (2, 3, 2, 2)


def test_mlp_trains_with_sgd():
    ember.manual_seed(0)
    rng = np.random.default_rng(0)
    xs = rng.uniform(-1, 1, size=(64, 2)).astype(np.float32)
    ys = (np.sin(2 * xs[:, :1]) + xs[:, 1:] ** 2).astype(np.float32)
    x, y = ember.tensor(xs), ember.tensor(ys)
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1))
    first = None
    for _ in range(400):
        loss = ((model(x) - y) ** 2).mean()
        first = first if first is not None else loss.item()
        model.zero_grad()
        loss.backward()
        with ember.no_grad():
            for p in model.parameters():
                p.sub_(p.grad * 0.1)
    assert loss.item() < 0.02 < first


def test_state_dict_metadata_versions_and_load_hooks():
    # torch's convention: state_dict()._metadata maps each module's prefix to {"version": _version}, and
    # _load_from_state_dict receives that entry, so a layer can convert an older layout.
    model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3))
    sd = model.state_dict()
    assert sd._metadata == {"": {"version": 1}, "0": {"version": 1}, "1": {"version": 2}}
    seen = []

    class Versioned(ember.nn.Linear):
        _version = 3

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args):
            seen.append(local_metadata.get("version"))
            super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    layer = Versioned(2, 3)
    layer.load_state_dict(layer.state_dict())
    layer.load_state_dict(dict(layer.state_dict()))  # a plain dict has no versions
    assert seen == [3, None]
    # A version-1 BatchNorm checkpoint (before num_batches_tracked) loads strictly; the caller's dict is kept.
    old = model.state_dict()
    del old["1.num_batches_tracked"]
    old._metadata["1"] = {"version": 1}
    model[1].num_batches_tracked.fill_(4)
    model.load_state_dict(old)
    assert "1.num_batches_tracked" not in old and model[1].num_batches_tracked.item() == 4  # kept, as torch
    model.load_state_dict(old, assign=True)
    assert model[1].num_batches_tracked.item() == 4
    # Pre-hooks may rewrite the dict before a module reads it; post hooks of state_dict see it whole.
    renamed = {"w": model[0].weight.detach() * 0, "bias": model[0].bias.detach()}
    handle = model[0].register_load_state_dict_pre_hook(
        lambda module, state_dict, prefix, *rest: state_dict.__setitem__(prefix + "weight",
                                                                       state_dict.pop(prefix + "w")))
    model[0].load_state_dict(renamed)
    assert not model[0].weight.detach().numpy().any()
    handle.remove()
    def drop_bias(module, state_dict, prefix, local_metadata):
        del state_dict[prefix + "bias"]
    model[0].register_state_dict_post_hook(drop_bias)
    assert list(model[0].state_dict()) == ["weight"]


def test_forward_hook_with_always_call_runs_when_forward_raises():
    class Failing(ember.nn.Module):
        def forward(self, x):
            raise ValueError("bad input")

    module, seen = Failing(), []
    module.register_forward_hook(lambda m, args, out: seen.append(("always", out)), always_call=True)
    module.register_forward_hook(lambda m, args, out: seen.append(("plain", out)))
    with pytest.raises(ValueError, match="bad input"):
        module(ember.ones(1))
    assert seen == [("always", None)]
