"""torch.save(model, path) pickles the whole module (the "save the entire model" recipe of PyTorch's
tutorials); ember.save used to refuse it, its default safetensors format holding only tensors."""
import pickle

import numpy as np
import pytest

import ember
import ember.nn as nn


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.bn = nn.BatchNorm2d(2)
        self.register_buffer("scale", ember.tensor(2.0))

    def forward(self, x):
        return self.bn(self.conv(x)) * self.scale


def test_whole_module_round_trip(tmp_path):
    net = _Net().eval()
    path = tmp_path / "model.pt"
    ember.save(net, path)
    loaded = ember.load(path, weights_only=False)
    assert type(loaded) is _Net and loaded is not net
    assert not loaded.training
    x = ember.randn(1, 1, 5, 5)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), net(x).detach().numpy())
    assert isinstance(loaded.conv.weight, nn.Parameter)


def test_module_inside_a_checkpoint_dict(tmp_path):
    net = _Net()
    path = tmp_path / "ckpt.pt"
    ember.save({"epoch": 3, "model": net, "best": [0.5, ember.ones(2)]}, path)
    ckpt = ember.load(path, weights_only=False)
    assert ckpt["epoch"] == 3 and type(ckpt["model"]) is _Net
    np.testing.assert_array_equal(ckpt["model"].conv.weight.detach().numpy(), net.conv.weight.detach().numpy())


def test_whole_module_needs_weights_only_false(tmp_path):
    path = tmp_path / "model.pt"
    ember.save(_Net(), path)
    with pytest.raises(pickle.UnpicklingError, match="weights_only"):
        ember.load(path)


def test_other_python_objects_are_pickled_too(tmp_path):
    # as torch.save: anything pickle can hold (here a bare object()) is written, and only
    # weights_only=False reads it back; what pickle cannot hold (a lambda) still fails
    ember.save({"f": object()}, tmp_path / "x")
    assert type(ember.load(tmp_path / "x", weights_only=False)["f"]) is object
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ember.save({"f": lambda: 0}, tmp_path / "y")
