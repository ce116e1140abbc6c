"""SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD)."""
import ember

from ._checks import check_non_negative
from .optimizer import Optimizer, _group_with_grads, required


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr is not required:
            check_non_negative(lr=lr)
        check_non_negative(momentum=momentum, weight_decay=weight_decay)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group, with_state=group["momentum"] != 0)
            if not params:
                continue
            buffers = [s.get("momentum_buffer") for s in states]
            buffers = ember._C._optim_sgd(params, grads, buffers, float(group["lr"]), float(group["momentum"]),
                                          float(group["dampening"]), bool(group["nesterov"]),
                                          float(group["weight_decay"]), bool(group["maximize"]))
            if group["momentum"] != 0:
                for state, buf in zip(states, buffers):
                    state["momentum_buffer"] = buf
        return loss
