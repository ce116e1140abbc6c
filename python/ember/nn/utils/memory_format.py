"""convert_conv2d_weight_memory_format / convert_conv3d_weight_memory_format: torch restrides the conv
weights of a module tree to channels_last for faster kernels. ember keeps every tensor in its default
layout (memory formats are accepted and ignored, see ember._memory_format), so these check their
arguments and return the module unchanged."""
import ember

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, name):
    if not isinstance(module, ember.nn.Module):
        raise TypeError(f"{name}: expected an nn.Module, got {type(module).__name__}")
    if not isinstance(memory_format, ember.memory_format):
        raise TypeError(f"{name}: expected an ember.memory_format, got {memory_format!r}")
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, "convert_conv2d_weight_memory_format")


def convert_conv3d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, "convert_conv3d_weight_memory_format")
