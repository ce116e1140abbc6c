"""Memory formats, as torch.contiguous_format / channels_last / ...: accepted
wherever PyTorch takes a memory_format. ember keeps a tensor's layout as its
ops produce it (row-major for new tensors); .to(memory_format=...),
.contiguous(memory_format=...) and Module.to(memory_format=...) do not
re-stride to NHWC. is_contiguous(memory_format=...) reports the actual
strides."""

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


class memory_format:
    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"ember.{self._name}"

    __str__ = __repr__

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def _dense_in_order(tensor, order):
    """True when the strides are those of a dense tensor whose dims, from
    outermost to innermost, are `order` (size-1 dims may have any stride)."""
    expected = 1
    for d in reversed(order):
        size = tensor.shape[d]
        if size != 1 and tensor.stride(d) != expected:
            return False
        expected *= size
    return True


def is_contiguous_as(tensor, fmt, plain_is_contiguous):
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return plain_is_contiguous(tensor)
    if fmt is channels_last:  # only a 4-D tensor can be (torch answers False for others)
        return tensor.dim() == 4 and _dense_in_order(tensor, (0, 2, 3, 1))
    if fmt is channels_last_3d:
        return tensor.dim() == 5 and _dense_in_order(tensor, (0, 2, 3, 4, 1))
    raise TypeError(f"is_contiguous: memory_format must be an ember.memory_format, got {type(fmt).__name__}")
