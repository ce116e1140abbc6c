"""ember.cuda.amp: torch.cuda.amp's deprecated spellings of autocast and GradScaler."""
import warnings

from ember.amp import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(autocast_mode.autocast):
    """ember.cuda.amp.autocast(args...) is ember.amp.autocast("cuda", args...)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`ember.cuda.amp.autocast(args...)` is deprecated. "
                      "Please use `ember.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        import ember
        super().__init__("cuda", enabled=enabled, dtype=ember.float16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """ember.cuda.amp.GradScaler(args...) is ember.amp.GradScaler("cuda", args...)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated. "
                      "Please use `ember.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """ember.cuda.amp.custom_fwd(args...) is ember.amp.custom_fwd(args..., device_type="cuda")."""
    from ember.amp.custom_ops import custom_fwd as _custom_fwd
    warnings.warn("`ember.cuda.amp.custom_fwd(args...)` is deprecated. "
                  "Please use `ember.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """ember.cuda.amp.custom_bwd(bwd) is ember.amp.custom_bwd(bwd, device_type="cuda")."""
    from ember.amp.custom_ops import custom_bwd as _custom_bwd
    warnings.warn("`ember.cuda.amp.custom_bwd(args...)` is deprecated. "
                  "Please use `ember.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return _custom_bwd(bwd, device_type="cuda")
