"""Hooks around Optimizer.step, as torch's: optimizer.register_step_pre_hook / register_step_post_hook,
and register_optimizer_step_pre_hook / register_optimizer_step_post_hook for every optimizer.

A hook is hook(optimizer, args, kwargs), args being step's positional arguments with the optimizer
first. A pre-hook may return (new_args, new_kwargs) for the step to take instead. Global pre-hooks run
before the optimizer's own, global post-hooks after its own.

Optimizer.__init_subclass__ wraps the step of every class that defines one (user subclasses too). A
step that calls its base class's step (super().step()) runs the hooks once, around the outer call.
"""
import functools
from collections import OrderedDict
from itertools import chain

from ember.nn.modules.module import RemovableHandle

__all__ = ["register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_pre_hooks = OrderedDict()
_global_post_hooks = OrderedDict()


def add_hook(hooks, hook):
    """Stores `hook` in the dict `hooks`; the handle's remove() takes it out."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before every optimizer's step."""
    return add_hook(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs), after every optimizer's step."""
    return add_hook(_global_post_hooks, hook)


def with_step_hooks(step):
    """`step` running the global and the optimizer's own hooks around it."""
    if getattr(step, "_runs_step_hooks", False):
        return step

    @functools.wraps(step)
    def hooked_step(*args, **kwargs):
        optimizer = args[0]
        own = optimizer.__dict__
        if own.get("_in_step", False):  # a subclass's step calling super().step(): hooks already ran
            return step(*args, **kwargs)
        pre = chain(list(_global_pre_hooks.values()), list(own.get("_optimizer_step_pre_hooks", {}).values()))
        for hook in pre:
            result = hook(optimizer, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{type(optimizer).__name__}.step: a step pre-hook must return None or "
                                       f"a tuple of (new_args, new_kwargs), but got {result!r}.")
                args, kwargs = result
        own["_in_step"] = True
        try:
            out = step(*args, **kwargs)
        finally:
            own["_in_step"] = False
        post = chain(list(own.get("_optimizer_step_post_hooks", {}).values()), list(_global_post_hooks.values()))
        for hook in post:
            hook(optimizer, args, kwargs)
        return out

    hooked_step._runs_step_hooks = True
    return hooked_step
