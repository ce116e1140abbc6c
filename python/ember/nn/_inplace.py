"""The inplace=True path of activations composed in Python (leaky_relu, elu, selu, ...)."""
import ember


def maybe_inplace(input, fn, inplace):
    """fn(input), or fn(input) written into input when inplace.

    The write is recorded by autograd, so gradients flow through fn; fn's
    backward may save its argument, so under autograd it gets a copy that the
    write cannot invalidate (a no_grad write would silently turn the
    activation into the identity for backward).
    """
    if not inplace:
        return fn(input)
    if ember.is_grad_enabled() and input.requires_grad:
        return input.copy_(fn(input.clone()))
    with ember.no_grad():
        return input.copy_(fn(input))
