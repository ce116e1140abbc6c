"""RMSprop (torch.optim.RMSprop): optional momentum and centering."""
import ember

from ._checks import check_non_negative
from .optimizer import Optimizer, _group_with_grads, _share_new_state


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group, with_step=True)
            if not params:
                continue
            centered, momentum = bool(group["centered"]), float(group["momentum"])
            _share_new_state(params, states, ("square_avg",) + (("grad_avg",) if centered else ())
                             + (("momentum_buffer",) if momentum > 0 else ()))
            sq, ga, buf = ember._C._optim_rmsprop(
                params, grads, [s.get("square_avg") for s in states], [s.get("grad_avg") for s in states],
                [s.get("momentum_buffer") for s in states], [s["step"] for s in states],
                float(group["lr"]), float(group["alpha"]), float(group["eps"]),
                float(group["weight_decay"]), momentum, centered, bool(group["maximize"]))
            for i, s in enumerate(states):
                s["square_avg"] = sq[i]
                if momentum > 0:
                    s["momentum_buffer"] = buf[i]
                if centered:
                    s["grad_avg"] = ga[i]
        return loss
