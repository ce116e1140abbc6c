"""functional_call: run a module with some of its parameters and buffers replaced
by given tensors (for the call only), so gradients flow to those tensors."""
from contextlib import contextmanager

import ember


def _owner(module, key):
    """(submodule, attribute name) that the dotted `key` names."""
    *path, name = key.split(".")
    owner = module
    for part in path:
        try:
            owner = owner.get_submodule(part) if part else owner
        except AttributeError:
            raise AttributeError(f"functional_call: {type(module).__name__} has no submodule "
                                 f"'{'.'.join(path)}' (for key '{key}')") from None
    return owner, name


def _tied_names(module):
    """Every name of each parameter/buffer that has more than one (tied weights)."""
    names = {}
    for get in (module.named_parameters, module.named_buffers):
        for name, t in get(remove_duplicate=False):
            names.setdefault(id(t), []).append(name)
    return {name: group for group in names.values() if len(group) > 1 for name in group}


def _merge(dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    merged = {}
    for d in dicts:
        for key, value in d.items():
            if key in merged:
                raise ValueError(f"{key} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            merged[key] = value
    return merged


def _with_tied(module, tensors):
    """`tensors` extended to the other names of tied weights, refusing different values for them."""
    tied = _tied_names(module)
    out = dict(tensors)
    for key, value in tensors.items():
        for other in tied.get(key, ()):
            if other in tensors and tensors[other] is not value:
                group = sorted(k for k in tied[key] if k in tensors)
                raise ValueError(f"functional_call got multiple values for keys {group}, which are tied. Consider "
                                 "using tie_weights=False")
            out[other] = value
    return out


def _check_strict(module, tensors):
    expected = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    expected |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
    missing = sorted(expected - set(tensors))
    unexpected = sorted(set(tensors) - expected)
    if missing or unexpected:
        parts = []
        if unexpected:
            parts.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
        if missing:
            parts.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(parts))


@contextmanager
def _swapped(module, tensors):
    """Puts each tensor in place of the parameter/buffer its key names; restores them after."""
    undo = []
    try:
        for key, value in tensors.items():
            owner, name = _owner(module, key)
            for registry in (owner._parameters, owner._buffers):
                if name in registry:
                    undo.append((registry, name, registry[name]))
                    registry[name] = value  # straight into the registry: a plain tensor may replace a Parameter
                    break
            else:  # not strict: a new attribute for the call
                had = name in owner.__dict__
                undo.append((owner.__dict__, name, owner.__dict__.get(name)) if had else (owner, name, None))
                object.__setattr__(owner, name, value)
        yield
    finally:
        for where, name, old in reversed(undo):
            if isinstance(where, dict):
                where[name] = old
            else:
                object.__delattr__(where, name)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the parameters and buffers named in parameter_and_buffer_dicts
    (a dict, or a sequence of dicts with distinct keys) replaced by those tensors for this call."""
    tensors = _merge(parameter_and_buffer_dicts)
    for key, value in tensors.items():
        if not isinstance(value, ember.Tensor) and value is not None:
            raise TypeError(f"functional_call: the value for '{key}' must be a Tensor, got {type(value).__name__}")
    if tie_weights:
        tensors = _with_tied(module, tensors)
    if strict:
        _check_strict(module, tensors)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors):
        return module(*args, **(kwargs or {}))
