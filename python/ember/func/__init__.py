"""ember.func: functional_call (as torch.func.functional_call). ember has no
function transforms (vmap, grad, jacrev): use ember.autograd for gradients."""
from ember.func._functional_call import functional_call  # noqa: F401

__all__ = ["functional_call"]
