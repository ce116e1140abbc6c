"""Gradient clipping by total norm or by value."""
import ember


def _grads(parameters):
    if isinstance(parameters, ember.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales all gradients in place so their joint norm is at most max_norm; returns that norm (before clipping)."""
    grads = _grads(parameters)
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if not grads:
        return ember.tensor(0.0)
    with ember.no_grad():
        norms = [ember.norm(g.detach(), norm_type) for g in grads]
        total = ember.stack(norms).to(grads[0].dtype) if len(norms) > 1 else norms[0]
        total = ember.norm(total, norm_type) if len(norms) > 1 else total
        value = total.item()
        if error_if_nonfinite and (value != value or value in (float("inf"), float("-inf"))):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = max_norm / (value + 1e-6)
        if coef < 1.0:
            for g in grads:
                g.mul_(coef)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with ember.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
