"""The floating input of a math function: integers and bools become the default
dtype, as PyTorch promotes them. Complex tensors pass where the function takes
them and are refused where it does not: casting them to a real dtype would
drop the imaginary part without a word."""
import ember


def floating(x, op, complex_ok=False):
    if x.is_complex():
        if complex_ok:
            return x
        raise NotImplementedError(f"{op}: not supported for complex tensors (got {x.dtype})")
    return x if x.is_floating_point() else x.to(ember.get_default_dtype())
