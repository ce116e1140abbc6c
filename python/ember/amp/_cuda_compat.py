"""ember.cuda.amp: torch.cuda.amp's deprecated spellings of autocast and GradScaler."""
import warnings

from ember.amp import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler"]


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
