"""Memory formats: accepted where PyTorch takes them; is_contiguous reports
the actual strides."""
import pytest

import ember
from ember import nn

CASES = []


def test_memory_format_objects_and_arguments():
    assert repr(ember.channels_last) == "ember.channels_last"
    x = ember.randn(2, 3, 4, 5)
    for fmt in (ember.contiguous_format, ember.channels_last, ember.preserve_format):
        assert ember.equal(x.contiguous(memory_format=fmt), x)
        assert ember.equal(x.to(memory_format=fmt), x)
        assert ember.equal(x.clone(memory_format=fmt), x)
    model = nn.Conv2d(3, 4, 3).to(memory_format=ember.channels_last)
    assert model(x).shape == (2, 4, 2, 3)


def test_is_contiguous_reports_the_strides():
    x = ember.randn(2, 3, 4, 5)
    assert x.is_contiguous() and x.is_contiguous(memory_format=ember.contiguous_format)
    assert not x.is_contiguous(memory_format=ember.channels_last)
    nhwc = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # NHWC strides, NCHW shape
    assert nhwc.is_contiguous(memory_format=ember.channels_last) and not nhwc.is_contiguous()
    one_channel = ember.randn(2, 1, 4, 5)  # one channel: both layouts at once, as in PyTorch
    assert one_channel.is_contiguous(memory_format=ember.channels_last) and one_channel.is_contiguous()
    assert ember.randn(2, 3, 1, 1).is_contiguous(memory_format=ember.channels_last)
    v = ember.randn(1, 3, 2, 2, 2).permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3)
    assert v.is_contiguous(memory_format=ember.channels_last_3d)
    assert not ember.randn(3, 4).is_contiguous(memory_format=ember.channels_last)  # False, as in torch
    with pytest.raises(TypeError, match="memory_format must be an ember.memory_format"):
        x.is_contiguous(memory_format="channels_last")
