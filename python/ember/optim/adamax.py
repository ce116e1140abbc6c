"""Adamax (torch.optim.Adamax): Adam with the infinity norm. Written with
ember's tensor ops (one tensor at a time), so it runs wherever the parameters live."""
import ember

from ._checks import check_betas, check_non_negative
from .optimizer import Optimizer, _group_with_grads


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @ember.no_grad()
    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group, with_step=True)
            lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
            beta1, beta2 = (float(b) for b in group["betas"])
            for p, g, s in zip(params, grads, states):
                if "exp_avg" not in s:
                    s["exp_avg"] = ember.zeros_like(p)
                    s["exp_inf"] = ember.zeros_like(p)
                s["step"].add_(1)
                t = float(s["step"])
                g = -g if group["maximize"] else g
                if wd:
                    g = g + p * wd
                s["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
                s["exp_inf"].copy_(ember.maximum(s["exp_inf"] * beta2, g.abs() + eps))
                p.add_(s["exp_avg"] / s["exp_inf"], alpha=-lr / (1 - beta1 ** t))
        return loss
