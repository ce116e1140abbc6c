"""ember.compile hands back what it is given, so torch.compile scripts run."""
import pytest

import ember
from ember import nn

CASES = []


def test_compile_returns_the_module_or_function():
    model = nn.Linear(3, 2)
    assert ember.compile(model) is model
    assert ember.compile(model, mode="max-autotune", fullgraph=True) is model

    @ember.compile
    def double(x):
        return x * 2

    @ember.compile(mode="reduce-overhead")
    def triple(x):
        return x * 3

    x = ember.ones(2)
    assert double(x).tolist() == [2.0, 2.0] and triple(x).tolist() == [3.0, 3.0]
    assert not ember.compiler.is_compiling()


def test_compile_refuses_what_cannot_be_called():
    with pytest.raises(TypeError, match="compile: expected a module or a function, got int"):
        ember.compile(3)
