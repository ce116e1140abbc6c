"""RAdam (torch.optim.RAdam): Adam whose adaptive step is switched on once the
variance of its estimate is tractable. Written with ember's tensor ops (one
tensor at a time), so it runs wherever the parameters live."""
import math

import ember

from ._checks import check_betas, check_non_negative
from .optimizer import Optimizer, _group_with_grads


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, foreach=foreach, maximize=maximize,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    @ember.no_grad()
    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group, with_step=True)
            lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
            beta1, beta2 = (float(b) for b in group["betas"])
            rho_inf = 2 / (1 - beta2) - 1
            for p, g, s in zip(params, grads, states):
                if "exp_avg" not in s:
                    s["exp_avg"] = ember.zeros_like(p)
                    s["exp_avg_sq"] = ember.zeros_like(p)
                s["step"].add_(1)
                t = float(s["step"])
                g = -g if group["maximize"] else g
                if wd:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        g = g + p * wd
                s["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
                s["exp_avg_sq"].mul_(beta2).add_(g * g, alpha=1 - beta2)
                bias1, bias2 = 1 - beta1 ** t, 1 - beta2 ** t
                rho_t = rho_inf - 2 * t * beta2 ** t / bias2
                if rho_t > 5.0:
                    # The variance of the adaptive learning rate is tractable: rectify it.
                    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                    adaptive = math.sqrt(bias2) / (s["exp_avg_sq"].sqrt() + eps)
                    p.add_(s["exp_avg"] * adaptive, alpha=-lr * rect / bias1)
                else:
                    p.add_(s["exp_avg"], alpha=-lr / bias1)
        return loss
