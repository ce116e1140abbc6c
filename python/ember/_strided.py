"""as_strided_scatter: input with the elements an as_strided view of it would read replaced by src."""
import ember
from ember import _C

__all__ = ["as_strided_scatter"]


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    out = input.clone()  # contiguous, so storage positions are element positions
    view = _C.as_strided(out, size, stride, storage_offset)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"as_strided_scatter: expected src to have the view's size {list(view.shape)}, but got "
                           f"{list(src.shape)}")
    view.copy_(src)
    return out


ember.Tensor.as_strided_scatter = lambda self, src, size, stride, storage_offset=None: as_strided_scatter(
    self, src, size, stride, storage_offset)
