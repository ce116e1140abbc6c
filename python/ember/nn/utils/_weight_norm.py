"""The old-style ember.nn.utils.weight_norm / remove_weight_norm (as torch.nn.utils.weight_norm): parameters
<name>_g and <name>_v, and a forward pre-hook that recomputes <name> = g * v / ||v|| before each call."""
from ember.nn.parameter import Parameter
from ember.nn.utils.parametrizations import _norm_except_dim, _weight_norm

__all__ = ["weight_norm", "remove_weight_norm"]


class WeightNorm:
    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        v = getattr(module, self.name + "_v")
        g = getattr(module, self.name + "_g")
        dim = self.dim + v.dim() if self.dim < -1 else self.dim
        return _weight_norm(v, g, dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if not isinstance(weight, Parameter):
            raise ValueError(f"weight_norm: module.{name} must be a Parameter")
        dim_v = fn.dim + weight.dim() if fn.dim < -1 else fn.dim
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim_v).detach().clone()))
        module.register_parameter(name + "_v", Parameter(weight.detach().clone()))
        setattr(module, name, fn.compute_weight(module))
        fn.handle = module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach().clone()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
