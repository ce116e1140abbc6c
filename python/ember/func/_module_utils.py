"""Helpers torch.func offers around the transforms: stack_module_state (for
vmapping over an ensemble of same-shaped models), linearize, and
replace_all_batch_norm_modules_."""
import ember

from ._autodiff import jvp


def stack_module_state(models):
    """(params, buffers): for models of one architecture, each parameter/buffer name mapped to the stack of
    that tensor across the models (a new leading dim); parameters stay trainable leaves."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {name: ember.stack([dict(m.named_parameters())[name].detach() for m in models]).requires_grad_()
              for name, _ in models[0].named_parameters()}
    buffers = {name: ember.stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at primals (each call runs
    the double-vjp jvp again: ember has no forward mode to trace once)."""
    output = func(*primals)

    def jvp_fn(*tangents):
        if len(tangents) != len(primals):
            raise RuntimeError(f"linearize: expected {len(primals)} tangents, got {len(tangents)}")
        return jvp(func, tuple(primals), tuple(tangents))[1]
    return output, jvp_fn


def replace_all_batch_norm_modules_(root):
    """In place: every batch norm in root stops tracking running statistics (so it uses batch statistics
    under vmap, where one-element batches would otherwise update them per element); returns root."""
    from ember.nn.modules.normalization import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def functionalize(func, *, remove="mutations"):
    """func itself: ember has no graph capture that in-place mutations would break, so a function with
    mutations already composes with every transform here (accepted for torch.func compatibility)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are: remove='mutations' and remove='mutations_and_views'.")
    return func
