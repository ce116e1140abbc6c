"""Adadelta (torch.optim.Adadelta), written with tensor ops (see _tensor_op.py)."""
from ._checks import check_non_negative
from ._tensor_op import TensorOpOptimizer


class Adadelta(TensorOpOptimizer):
    state_buffers = ("square_avg", "acc_delta")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_non_negative(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach, capturable=capturable,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, g, s, group, step):
        rho, eps = float(group["rho"]), float(group["eps"])
        square_avg, acc_delta = s["square_avg"], s["acc_delta"]
        square_avg.mul_(rho).add_(g * g, alpha=1 - rho)
        delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g
        acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
        p.add_(delta, alpha=-float(group["lr"]))
