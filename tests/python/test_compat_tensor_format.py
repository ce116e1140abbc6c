"""f-strings on tensors as PyTorch formats them: a 0-d tensor is its Python number
(print(f"loss {loss:.4f}") raised TypeError, f"{loss}" printed "tensor(...)")."""
import pytest

import ember
import ember.nn as nn


def test_scalar_tensor_formats_as_its_number():
    assert f"{ember.tensor(0.693147):.4f}" == "0.6931"
    assert f"{ember.tensor(2.5):>8.2f}|" == "    2.50|"
    assert f"{ember.tensor(3):d}" == "3"
    assert f"{ember.tensor(3):03d}" == "003"
    assert f"{ember.tensor(1.5)}" == "1.5"
    assert f"{ember.tensor(True)}" == "True"
    assert "{:.1e}".format(ember.tensor(12345.0)) == "1.2e+04"


def test_scalar_with_grad_formats():
    loss = (ember.ones(3, requires_grad=True) * 2).sum()
    assert f"{loss:.3f}" == "6.000"


def test_non_scalars_keep_str_and_refuse_specs():
    t = ember.ones(2)
    assert f"{t}" == str(t)
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{t:.2f}"
    p = nn.Parameter(ember.tensor(1.5))  # torch formats only plain tensors as numbers
    with pytest.raises(TypeError):
        f"{p:.2f}"
