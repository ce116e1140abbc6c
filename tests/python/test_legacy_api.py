"""The older PyTorch spellings: typed tensor classes (constructors, isinstance), Tensor.type with classes and
names, Tensor.new, Tensor.layout, and torch.<name> aliases of nn.functional ops; against torch when
importable."""
import numpy as np
import pytest

import ember
from harness import torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
CASES = []  # no OpCase rows: spellings, not ops


def test_typed_classes_construct_and_check():
    a = ember.FloatTensor(2, 3)
    assert a.shape == (2, 3) and a.dtype == ember.float32 and a.device.type == "cpu"
    b = ember.LongTensor([1, 2])
    assert b.dtype == ember.int64 and b.tolist() == [1, 2]
    assert ember.FloatTensor(ember.Size([4])).shape == (4,) and ember.FloatTensor().shape == (0,)
    assert ember.DoubleTensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, a Size is a shape, as torch
    assert ember.BoolTensor([True, False]).dtype == ember.bool
    assert isinstance(b, ember.LongTensor) and not isinstance(b, ember.FloatTensor)
    assert not isinstance(a, ember.cuda.FloatTensor) and not isinstance("x", ember.FloatTensor)
    with pytest.raises(TypeError, match="FloatTensor"):
        ember.FloatTensor("abc")


def test_type_and_new():
    x = ember.ones(2)
    assert x.type() == "ember.FloatTensor" and ember.ones(2, dtype=ember.int64).type() == "ember.LongTensor"
    assert x.type(ember.LongTensor).dtype == ember.int64
    assert x.type("torch.DoubleTensor").dtype == ember.float64 and x.type("ember.IntTensor").dtype == ember.int32
    assert x.type(ember.float16).dtype == ember.float16  # dtypes still work
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NoSuchTensor")
    assert x.new(3, 2).shape == (3, 2) and x.new(3, 2).dtype == ember.float32
    assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new().shape == (0,)
    assert ember.ones(1, dtype=ember.int64).new([1.7]).dtype == ember.int64


def test_layout_and_aliases():
    assert ember.ones(2).layout == ember.strided and repr(ember.strided) == "ember.strided"
    x, w = ember.randn(1, 1, 3, 3, 3), ember.randn(1, 1, 2, 2, 2)
    np.testing.assert_array_equal(ember.conv3d(x, w).numpy(), ember.nn.functional.conv3d(x, w).numpy())
    assert ember.constant_pad_nd(ember.ones(2), (1, 2), 5.0).tolist() == [5.0, 1.0, 1.0, 5.0, 5.0]
    logits, target = ember.randn(3), ember.tensor([1.0, 0.0, 1.0])
    assert float(ember.binary_cross_entropy_with_logits(logits, target)) == pytest.approx(
        float(ember.nn.functional.binary_cross_entropy_with_logits(logits, target)))
    emb = ember.embedding(ember.tensor([2, 0]), ember.arange(6.0).reshape(3, 2))
    assert emb.tolist() == [[4.0, 5.0], [0.0, 1.0]]


@needs_torch
def test_match_torch():
    for name in ("FloatTensor", "LongTensor", "ByteTensor"):
        assert getattr(ember, name)([1, 2]).tolist() == getattr(torch, name)([1, 2]).tolist()
    assert ember.ones(2).type().split(".")[1] == torch.ones(2).type().split(".")[1]
    assert ember.ones(2).new(4).shape == tuple(torch.ones(2).new(4).shape)


def test_typename_default_tensor_type_and_interop_threads():
    assert ember.typename(ember.ones(2)) == "ember.FloatTensor"
    assert ember.typename(ember.ones(2, dtype=ember.int64)) == "ember.LongTensor"
    assert ember.typename(3) == "int" and ember.typename(ember.nn.Linear(1, 1)) == "ember.nn.modules.linear.Linear"
    assert not ember.is_storage(ember.ones(1))
    try:
        ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.ones(1).dtype == ember.float64
        ember.set_default_tensor_type("torch.FloatTensor")
        assert ember.ones(1).dtype == ember.float32
        with pytest.raises(TypeError, match="only floating-point types"):
            ember.set_default_tensor_type(ember.LongTensor)
    finally:
        ember.set_default_dtype(ember.float32)
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3
    ember.set_num_interop_threads(1)


def test_int_and_float_of_several_elements_raise_value_error():
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
        int(ember.zeros(2))
    with pytest.raises(ValueError, match="only one element tensors"):
        float(ember.zeros(2, 2))
    assert int(ember.tensor([3])) == 3 and float(ember.tensor(2.5)) == 2.5
