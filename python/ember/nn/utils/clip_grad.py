"""Gradient clipping by total norm or by value."""
import ember


def _grads(parameters):
    if isinstance(parameters, ember.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales all gradients in place so their joint norm is at most max_norm; returns that norm (before clipping).

    As PyTorch's: the scale min(1, max_norm / (norm + 1e-6)) stays a tensor on
    the gradients' device, so nothing waits for the GPU unless
    error_if_nonfinite asks to check the norm on the host.
    """
    grads = _grads(parameters)
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if not grads:
        return ember.tensor(0.0)
    with ember.no_grad():
        device = grads[0].device
        norms = [ember.norm(g.detach(), norm_type).to(device) for g in grads]
        total = ember.norm(ember.stack(norms), norm_type) if len(norms) > 1 else norms[0]
        if error_if_nonfinite and not bool(total.isfinite().item()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        scale = ember.clamp(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(scale.to(g.device, g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with ember.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
