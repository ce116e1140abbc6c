"""Flatten parameters into one vector and back."""
import ember


def parameters_to_vector(parameters):
    params = list(parameters)
    return ember.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, ember.Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {type(vec).__name__}")
    offset = 0
    with ember.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(tuple(p.shape)))
            offset += n
