"""clip_grad_norm_ in two halves, as torch 2.6+ splits it: get_total_norm (the joint
norm of some tensors) and clip_grads_with_norm_ (scale the gradients by a given
norm), so that the norm can be combined across ranks or pipeline stages first."""
import warnings

import ember


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of all `tensors` seen as one vector (a tensor; 0 for an empty list)."""
    if isinstance(tensors, ember.Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return ember.tensor(0.0)
    with ember.no_grad():
        device = tensors[0].device
        norms = [ember.linalg.vector_norm(t.detach(), norm_type).to(device) for t in tensors]
        total = ember.linalg.vector_norm(ember.stack(norms), norm_type)
        if error_if_nonfinite and not bool(total.isfinite().item()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients of `parameters` in place by min(1, max_norm / (total_norm + 1e-6))."""
    if isinstance(parameters, ember.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    if not isinstance(total_norm, ember.Tensor):
        total_norm = ember.tensor(float(total_norm))
    with ember.no_grad():
        scale = ember.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(scale.to(g.device, g.dtype))


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated name of clip_grad_norm_ (as in torch)."""
    from ember.nn.utils.clip_grad import clip_grad_norm_

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
