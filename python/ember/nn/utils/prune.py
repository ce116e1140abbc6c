"""ember.nn.utils.prune (as torch.nn.utils.prune): pruning a module's tensor
`name` replaces the parameter by `name + "_orig"` (the parameter, still
trained) and a buffer `name + "_mask"`, and a forward pre-hook recomputes
`name = name_orig * name_mask` before each call. Pruning the same tensor again
combines the masks (a PruningContainer prunes only what is still unpruned);
remove() makes the pruning permanent."""
import numbers
from abc import ABC, abstractmethod

import ember

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured", "PruningContainer",
           "RandomStructured", "RandomUnstructured", "custom_from_mask", "global_unstructured", "identity",
           "is_pruned", "l1_unstructured", "ln_structured", "random_structured", "random_unstructured", "remove"]


class BasePruningMethod(ABC):
    """A pruning method: compute_mask(t, default_mask) says which entries survive; apply() attaches it to a
    module as its forward pre-hook."""
    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask (t's shape): default_mask with more entries zeroed."""

    def apply_mask(self, module):
        if self._tensor_name is None:
            raise AttributeError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return orig * mask.to(dtype=orig.dtype)

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        old_method = None
        old_keys = []
        for key, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                old_keys.append(key)
        if len(old_keys) > 1:
            raise RuntimeError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                               "Use a PruningContainer.")
        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise ValueError(f"importance_scores should have the same shape as parameter {name} of {module}")
        else:
            importance_scores = orig

        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is None:
            # the parameter moves to name_orig; name becomes a plain attribute recomputed by the hook
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ember.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
            if isinstance(old_method, PruningContainer):
                container = old_method
            else:
                container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
            for key in old_keys:
                del module._forward_pre_hooks[key]

        try:
            with ember.no_grad():
                mask = method.compute_mask(importance_scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if old_method is None:
                orig = module._parameters.pop(name + "_orig")
                module.register_parameter(name, orig)
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t with this method's mask applied (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        if tuple(scores.shape) != tuple(t.shape):
            raise ValueError("importance_scores should have the same shape as tensor t")
        default_mask = default_mask if default_mask is not None else ember.ones_like(t)
        with ember.no_grad():
            mask = self.compute_mask(scores, default_mask=default_mask)
        return t * mask

    def remove(self, module):
        """Makes the pruning permanent: name becomes a parameter again, holding name_orig * name_mask."""
        if self._tensor_name is None:
            raise AttributeError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        if name in module.__dict__:
            object.__delattr__(module, name)
        orig = module._parameters[name + "_orig"]
        with ember.no_grad():
            orig.copy_(weight.detach())
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        module.register_parameter(name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods applied to one tensor: each new method prunes within what survived."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod) and hasattr(args[0], "__iter__"):
            args = tuple(args[0])
        if len(args) == 1 and isinstance(args[0], BasePruningMethod):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        mask = default_mask
        kind = method.PRUNING_TYPE
        new_mask = mask.clone()
        if kind in ("unstructured", "global"):
            keep = mask == 1
            if kind == "global":
                # global methods see the whole tensor (their masks are given whole)
                partial = method.compute_mask(t, default_mask=mask)
                return partial.to(dtype=new_mask.dtype)
            partial = method.compute_mask(t[keep], default_mask=mask[keep])
            new_mask[keep] = partial.to(dtype=new_mask.dtype)
            return new_mask
        if kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            dim = method.dim if method.dim >= 0 else method.dim + t.dim()
            others = [d for d in range(t.dim()) if d != dim]
            keep_channel = (mask.sum(others) != 0) if others else mask != 0
            index = ember.nonzero(keep_channel).reshape(-1)
            partial = method.compute_mask(t.index_select(dim, index), default_mask=mask.index_select(dim, index))
            new_mask.index_copy_(dim, index, partial.to(dtype=new_mask.dtype))
            return new_mask
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


def _validate_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_amount(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")


def _count_to_prune(amount, size):
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * size)


def _validate_structured_input(t, dim):
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{tuple(t.shape)} with {t.dim()} dims")


def _channel_mask(t, dim, channels):
    """A mask of t's shape that is 1 on the given channels (indices along dim) and 0 elsewhere."""
    mask = ember.zeros_like(t)
    shape = [1] * t.dim()
    shape[dim] = t.shape[dim]
    on = ember.zeros(t.shape[dim], dtype=t.dtype, device=t.device)
    on[channels] = 1
    return mask + on.reshape(shape)


class Identity(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` (a count, or a fraction of the entries) chosen uniformly at random."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.numel()
        _validate_amount(self.amount, size)
        n = _count_to_prune(self.amount, size)
        mask = default_mask.clone()
        if n:
            scores = ember.rand(size, device=t.device)
            mask.view(-1)[scores.topk(n).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of smallest absolute value (of importance_scores when given)."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.numel()
        _validate_amount(self.amount, size)
        n = _count_to_prune(self.amount, size)
        mask = default_mask.clone()
        if n:
            mask.view(-1)[t.abs().reshape(-1).topk(n, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along dim, chosen at random."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        _validate_structured_input(t, self.dim)
        dim = self.dim % t.dim()
        channels = t.shape[dim]
        _validate_amount(self.amount, channels)
        n = _count_to_prune(self.amount, channels)
        if n == 0:
            return default_mask
        keep = ember.rand(channels, device=t.device).topk(channels - n).indices
        return _channel_mask(t, dim, keep) * default_mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along dim of smallest L`n` norm (n: int, float, inf, -inf, 'fro', 'nuc')."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        _validate_structured_input(t, self.dim)
        dim = self.dim % t.dim()
        channels = t.shape[dim]
        _validate_amount(self.amount, channels)
        n = _count_to_prune(self.amount, channels)
        if n == 0:
            return default_mask
        others = [d for d in range(t.dim()) if d != dim]
        order = 2 if self.n in ("fro", "nuc") else self.n  # torch's norm of a flattened channel
        norms = ember.linalg.vector_norm(t, ord=order, dim=others)
        keep = norms.topk(channels - n, largest=True).indices
        return _channel_mask(t, dim, keep) * default_mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise ValueError(f"mask of shape {tuple(self.mask.shape)} does not match the tensor's shape "
                             f"{tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype, device=default_mask.device)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the (module, name) pairs together, as one flattened tensor: e.g. L1Unstructured with amount=20
    removes the 20 smallest entries among all of them."""
    if not hasattr(parameters, "__iter__"):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = ember.cat([importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1) for m, n in parameters])
    default = ember.cat([getattr(m, n + "_mask", ember.ones_like(getattr(m, n))).detach().reshape(-1)
                         for m, n in parameters])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    method._tensor_name = "temp"
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    with ember.no_grad():
        final = container.compute_mask(scores, default)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        size = param.numel()
        custom_from_mask(module, name, final[start:start + size].reshape(param.shape))
        start += size


def remove(module, name):
    """Makes the pruning of module.<name> permanent (name becomes a parameter holding the pruned values)."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether any submodule of module has a pruning hook."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
