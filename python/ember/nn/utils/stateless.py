"""torch.nn.utils.stateless: the older home of functional_call (ember.func.functional_call)."""
import warnings

from ember.func import functional_call as _functional_call


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated alias of ember.func.functional_call (as in torch 2.x)."""
    warnings.warn("This API is deprecated as of PyTorch 2.0 and will be removed in a future version of PyTorch. "
                  "Please use torch.func.functional_call instead which is a drop-in replacement for "
                  "torch.nn.utils.stateless.functional_call.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
