"""PyTorch's legacy constructors in older scripts: ember.Tensor(2, 3) raised "No constructor defined!",
ember.FloatTensor / LongTensor did not exist, x.type("torch.DoubleTensor") raised."""
import copy
import pickle

import numpy as np
import pytest

import ember
import ember.nn as nn


def test_sizes_give_uninitialized_float32():
    t = ember.Tensor(2, 3)
    assert t.shape == (2, 3) and t.dtype == ember.float32
    assert ember.Tensor(ember.Size([4])).shape == (4,)
    assert ember.Tensor().shape == (0,)
    noise = ember.Tensor(4, 8, 1, 1).normal_(0, 1)  # the old DCGAN idiom
    assert noise.shape == (4, 8, 1, 1) and bool(ember.isfinite(noise).all())


def test_data_gives_a_converted_copy():
    t = ember.Tensor([1, 2])
    assert t.dtype == ember.float32 and t.tolist() == [1.0, 2.0]
    assert ember.Tensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, only a Size is a shape
    assert ember.Tensor(np.arange(3)).dtype == ember.float32
    labels = ember.LongTensor([1.5, 2.7, -1.5])
    assert labels.dtype == ember.int64 and labels.tolist() == [1, 2, -1]  # truncated, as torch
    assert ember.ByteTensor([1, 255]).dtype == ember.uint8
    assert ember.BoolTensor([1, 0]).tolist() == [True, False]
    assert ember.DoubleTensor(3).dtype == ember.float64


def test_a_tensor_argument_is_an_alias():
    x = ember.ones(2)
    alias = ember.Tensor(x)
    alias[0] = 5.0
    assert x.tolist() == [5.0, 1.0]
    with pytest.raises(TypeError, match="float32"):
        ember.Tensor(ember.ones(2, dtype=ember.int64))
    with pytest.raises(TypeError):
        ember.Tensor(2, "a")


def test_isinstance_checks_the_dtype():
    assert isinstance(ember.ones(2), ember.FloatTensor)
    assert not isinstance(ember.ones(2), ember.LongTensor)
    assert isinstance(ember.arange(3), ember.LongTensor)
    assert not isinstance([1.0], ember.FloatTensor)
    assert type(ember.FloatTensor([1])) is ember.Tensor


def test_type_takes_legacy_names():
    x = ember.ones(2)
    assert x.type("torch.DoubleTensor").dtype == ember.float64
    assert x.type("ember.LongTensor").dtype == ember.int64
    assert x.type(ember.LongTensor).dtype == ember.int64
    assert x.type(ember.float16).dtype == ember.float16
    assert x.type() == "ember.float32"
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NotATensor")


def test_subclasses_and_copies_still_work():
    p = nn.Parameter(ember.ones(2))
    assert type(p) is nn.Parameter and p.requires_grad
    assert type(copy.deepcopy(p)) is nn.Parameter
    assert pickle.loads(pickle.dumps(ember.ones(2))).tolist() == [1.0, 1.0]
    assert nn.Linear(2, 3)(ember.Tensor(1, 2).uniform_()).shape == (1, 3)
