"""Adamax (torch.optim.Adamax): Adam with the infinity norm, written with
tensor ops (see _tensor_op.py)."""
import ember

from ._checks import check_betas, check_non_negative
from ._tensor_op import TensorOpOptimizer


class Adamax(TensorOpOptimizer):
    state_buffers = ("exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, g, s, group, step):
        beta1, beta2 = (float(b) for b in group["betas"])
        s["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
        s["exp_inf"].copy_(ember.maximum(s["exp_inf"] * beta2, g.abs() + float(group["eps"])))
        p.add_(s["exp_avg"] / s["exp_inf"], alpha=-float(group["lr"]) / (1 - beta1 ** step))
