"""ember.backends.cuda: how CUDA matmuls may trade precision for speed, and which
scaled_dot_product_attention paths may run (enable_flash_sdp, enable_math_sdp).

`ember.backends.cuda.matmul.allow_tf32` is a view of the one C++ setting that
`ember.set_float32_matmul_precision` also sets: True is precision "high"
(TF32 tensor cores for float32 products), False is "highest", and reading it
says whether the precision is anything but "highest". Default False, as in
PyTorch.
"""
from ember import _C


class _MatmulSettings:
    __slots__ = ()

    @property
    def allow_tf32(self):
        return _C.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        _C.set_float32_matmul_precision("high" if value else "highest")

    def __setattr__(self, name, value):
        if name != "allow_tf32":
            raise AttributeError(f"ember.backends.cuda.matmul: unknown attribute '{name}'")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"<ember.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulSettings()


def is_built():
    """Whether ember was built with CUDA support."""
    return _C._build_info().get("cuda") == "ON"


# ---- scaled_dot_product_attention backends (the settings live in C++) -------------------------

def enable_flash_sdp(enabled):
    """Allow (True, the default) or forbid the fused flash attention kernel."""
    _C._set_flash_sdp_enabled(bool(enabled))


def flash_sdp_enabled():
    """Whether scaled_dot_product_attention may use the fused flash kernel."""
    return _C._flash_sdp_enabled()


def enable_math_sdp(enabled):
    """Allow (True, the default) or forbid the math path (attention as ember ops). Without it,
    inputs the fused kernel cannot take raise a RuntimeError."""
    _C._set_math_sdp_enabled(bool(enabled))


def math_sdp_enabled():
    """Whether scaled_dot_product_attention may fall back to the math path."""
    return _C._math_sdp_enabled()


# ember has no memory-efficient or cuDNN attention kernel: these keep torch code running; the
# settings are remembered and have no effect.
_other_sdp = {"mem_efficient": False, "cudnn": False}


def enable_mem_efficient_sdp(enabled):
    _other_sdp["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _other_sdp["mem_efficient"]


def enable_cudnn_sdp(enabled):
    _other_sdp["cudnn"] = bool(enabled)


def cudnn_sdp_enabled():
    return _other_sdp["cudnn"]


# ---- the deprecated context manager older scripts still use (torch.backends.cuda.sdp_kernel) -----

def _sdp_settings():
    return (flash_sdp_enabled(), math_sdp_enabled(), mem_efficient_sdp_enabled(), cudnn_sdp_enabled())


def _set_sdp_settings(flash, math, mem_efficient, cudnn):
    enable_flash_sdp(flash)
    enable_math_sdp(math)
    enable_mem_efficient_sdp(mem_efficient)
    enable_cudnn_sdp(cudnn)


class sdp_kernel:
    """Within the block only the enabled attention paths may run; the previous settings come back on
    exit. Deprecated in torch in favour of ember.nn.attention.sdpa_kernel, and warns as torch does."""

    def __init__(self, enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
        import warnings
        warnings.warn("`ember.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
                      "will be removed. Please see `ember.nn.attention.sdpa_kernel()` for the new context "
                      "manager, with updated signature.", FutureWarning, stacklevel=2)
        self._wanted = (bool(enable_flash), bool(enable_math), bool(enable_mem_efficient), bool(enable_cudnn))
        self._previous = []  # a stack, so one object may be entered again while active

    def __enter__(self):
        self._previous.append(_sdp_settings())
        _set_sdp_settings(*self._wanted)
        return self

    def __exit__(self, *exc):
        _set_sdp_settings(*self._previous.pop())
        return False
