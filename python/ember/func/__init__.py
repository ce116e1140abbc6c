"""ember.func: functional_call and function transforms (as torch.func): grad,
grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian, vmap,
stack_module_state, replace_all_batch_norm_modules_ and functionalize. They
run on ember's tape autograd (no forward mode): jvp is a double vjp, jacfwd
builds the Jacobian's columns that way, jacrev its rows by reverse passes, and
vmap calls the function once per batch element and stacks the results (no
batching rules); see _autodiff.py and _vmap.py."""
from ember.func._functional_call import functional_call  # noqa: F401
from ember.func._autodiff import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp  # noqa: F401
from ember.func._vmap import vmap  # noqa: F401
from ember.func._module_utils import (functionalize, linearize, replace_all_batch_norm_modules_,  # noqa: F401
                                     stack_module_state)

__all__ = ["functional_call", "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "replace_all_batch_norm_modules_", "stack_module_state", "vjp", "vmap"]
