"""Adadelta (torch.optim.Adadelta). Written with ember's tensor ops (one
tensor at a time), so it runs wherever the parameters live."""
import ember

from ._checks import check_non_negative
from .optimizer import Optimizer, _group_with_grads


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach, capturable=capturable,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    @ember.no_grad()
    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group, with_step=True)
            lr, rho, eps, wd = (float(group[k]) for k in ("lr", "rho", "eps", "weight_decay"))
            for p, g, s in zip(params, grads, states):
                if "square_avg" not in s:
                    s["square_avg"] = ember.zeros_like(p)
                    s["acc_delta"] = ember.zeros_like(p)
                s["step"].add_(1)
                g = -g if group["maximize"] else g
                if wd:
                    g = g + p * wd
                square_avg, acc_delta = s["square_avg"], s["acc_delta"]
                square_avg.mul_(rho).add_(g * g, alpha=1 - rho)
                delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g
                acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
