"""ember.broadcast_shapes: the shape tensors of the given shapes would
broadcast to, computed without making tensors (as torch.broadcast_shapes)."""
import operator


def _as_shape(shape, index):
    if isinstance(shape, int) or hasattr(shape, "__index__") and not hasattr(shape, "__len__"):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"broadcast_shapes: shape at index {index} must be an int or a sequence of ints, "
                        f"got {shape!r}") from None


def broadcast_shapes(*shapes):
    """broadcast_shapes((2, 1), (3,)) == ember.Size([2, 3]); a RuntimeError names the shapes that do not fit."""
    from ember._tensor import Size

    result = []
    for index, shape in enumerate(shapes):
        dims = _as_shape(shape, index)
        if any(d < 0 for d in dims):
            raise ValueError(f"broadcast_shapes: shape {list(dims)} at index {index} has a negative dimension")
        if len(dims) > len(result):
            result = [1] * (len(dims) - len(result)) + result
        for k in range(1, len(dims) + 1):
            have, new = result[-k], dims[-k]
            if new == have or new == 1:
                continue
            if have != 1:
                raise RuntimeError(f"broadcast_shapes: shape {list(dims)} at index {index} does not broadcast with "
                                   f"{result} (dimension {-k}: {new} vs {have})")
            result[-k] = new
    return Size(result)
