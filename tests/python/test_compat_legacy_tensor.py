"""ember.Tensor(...) as PyTorch's legacy constructor in older scripts (it raised "No constructor
defined!"); the typed classes (ember.FloatTensor, ...) are ember._legacy's and tested in test_legacy_api."""
import copy
import pickle

import numpy as np
import pytest

import ember
import ember.nn as nn


def test_sizes_give_uninitialized_float32():
    t = ember.Tensor(2, 3)
    assert t.shape == (2, 3) and t.dtype == ember.float32 and type(t) is ember.Tensor
    assert ember.Tensor(ember.Size([4])).shape == (4,)
    assert ember.Tensor().shape == (0,)
    noise = ember.Tensor(4, 8, 1, 1).normal_(0, 1)  # the old DCGAN idiom
    assert noise.shape == (4, 8, 1, 1) and bool(ember.isfinite(noise).all())


def test_data_gives_a_float32_copy():
    t = ember.Tensor([1, 2])
    assert t.dtype == ember.float32 and t.tolist() == [1.0, 2.0]
    assert ember.Tensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, only a Size is a shape
    assert ember.Tensor(np.arange(3)).dtype == ember.float32
    assert ember.Tensor(ember.arange(3)).dtype == ember.float32
    with pytest.raises(TypeError, match="Tensor"):
        ember.Tensor(2, "a")


def test_float32_tensor_argument_is_an_alias():
    x = ember.ones(2)
    alias = ember.Tensor(x)
    alias[0] = 5.0
    assert x.tolist() == [5.0, 1.0]


def test_isinstance_and_subclasses_still_work():
    assert isinstance(ember.Tensor(2), ember.Tensor)
    p = nn.Parameter(ember.ones(2))
    assert type(p) is nn.Parameter and p.requires_grad
    assert type(copy.deepcopy(p)) is nn.Parameter
    assert pickle.loads(pickle.dumps(ember.ones(2))).tolist() == [1.0, 1.0]
    assert nn.Linear(2, 3)(ember.Tensor(1, 2).uniform_()).shape == (1, 3)
