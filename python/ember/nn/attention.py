"""ember.nn.attention: which scaled_dot_product_attention backends may run, as torch.nn.attention.

ember has two: FLASH_ATTENTION (the fused CUDA kernel) and MATH (ember ops, any device). The
other members of SDPBackend exist so that code written for torch runs; ember has no such kernel.

    with ember.nn.attention.sdpa_kernel(SDPBackend.MATH):
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # never the fused kernel
"""
import contextlib
import enum

from ember import _C

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, only the given backend(s) may run; the previous settings come back on exit.
    Without FLASH_ATTENTION or MATH among them, scaled_dot_product_attention cannot run (as in torch,
    an error says no kernel is available)."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(backends)
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel: expected SDPBackend values, got {b!r}")
    previous = (_C._flash_sdp_enabled(), _C._math_sdp_enabled())
    _C._set_flash_sdp_enabled(SDPBackend.FLASH_ATTENTION in backends)
    _C._set_math_sdp_enabled(SDPBackend.MATH in backends)
    try:
        yield
    finally:
        _C._set_flash_sdp_enabled(previous[0])
        _C._set_math_sdp_enabled(previous[1])
