"""RAdam (torch.optim.RAdam): Adam whose adaptive step is switched on once the
variance of its estimate is tractable; written with tensor ops (see _tensor_op.py)."""
import math

from ._checks import check_betas, check_non_negative
from ._tensor_op import TensorOpOptimizer


class RAdam(TensorOpOptimizer):
    state_buffers = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, foreach=foreach, maximize=maximize,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, g, s, group, t):
        lr = float(group["lr"])
        beta1, beta2 = (float(b) for b in group["betas"])
        s["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
        s["exp_avg_sq"].mul_(beta2).add_(g * g, alpha=1 - beta2)
        bias1, bias2 = 1 - beta1 ** t, 1 - beta2 ** t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / bias2
        if rho_t > 5.0:
            # The variance of the adaptive learning rate is tractable: rectify it.
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = math.sqrt(bias2) / (s["exp_avg_sq"].sqrt() + float(group["eps"]))
            p.add_(s["exp_avg"] * adaptive, alpha=-lr * rect / bias1)
        else:
            p.add_(s["exp_avg"], alpha=-lr / bias1)
