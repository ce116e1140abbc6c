"""ember.amp: automatic mixed precision (torch.amp): autocast and GradScaler."""
from ember.amp.autocast_mode import autocast, is_autocast_available  # noqa: F401
from ember.amp.grad_scaler import GradScaler, OptState  # noqa: F401
from ember.amp.custom_ops import custom_bwd, custom_fwd  # noqa: F401

__all__ = ["autocast", "is_autocast_available", "GradScaler", "custom_fwd", "custom_bwd"]
