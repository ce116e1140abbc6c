"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum and a momentum
schedule, written with tensor ops (see _tensor_op.py)."""
import ember

from ._checks import check_betas, check_non_negative
from ._tensor_op import TensorOpOptimizer


class NAdam(TensorOpOptimizer):
    state_buffers = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, foreach=foreach, maximize=maximize,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, s, p):
        s["mu_product"] = ember.ones((), dtype=ember.float32)

    def _update(self, p, g, s, group, t):
        lr, eps, psi = float(group["lr"]), float(group["eps"]), float(group["momentum_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        s["mu_product"].mul_(mu)
        mu_product = float(s["mu_product"])  # torch keeps it in float32 and reads it back as such
        s["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
        s["exp_avg_sq"].mul_(beta2).add_(g * g, alpha=1 - beta2)
        denom = (s["exp_avg_sq"] / (1 - beta2 ** t)).sqrt() + eps
        p.add_(g / denom, alpha=-lr * (1 - mu) / (1 - mu_product))
        p.add_(s["exp_avg"] / denom, alpha=-lr * mu_next / (1 - mu_product * mu_next))
