"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum and a momentum
schedule. Written with ember's tensor ops (one tensor at a time), so it runs
wherever the parameters live."""
import ember

from ._checks import check_betas, check_non_negative
from .optimizer import Optimizer, _group_with_grads


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
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
            psi = float(group["momentum_decay"])
            for p, g, s in zip(params, grads, states):
                if "exp_avg" not in s:
                    s["mu_product"] = ember.ones((), dtype=ember.float32)
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
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
                s["mu_product"].mul_(mu)
                # torch keeps mu_product in float32 and reads it back as such.
                mu_product = float(s["mu_product"])
                s["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
                s["exp_avg_sq"].mul_(beta2).add_(g * g, alpha=1 - beta2)
                denom = (s["exp_avg_sq"] / (1 - beta2 ** t)).sqrt() + eps
                p.add_(g / denom, alpha=-lr * (1 - mu) / (1 - mu_product))
                p.add_(s["exp_avg"] / denom, alpha=-lr * mu_next / (1 - mu_product * mu_next))
        return loss
