"""ASGD (torch.optim.ASGD): SGD with a decaying step (eta) and a running average
of the iterates (ax) that starts averaging after t0 steps."""
import ember

from ._checks import check_non_negative
from .optimizer import Optimizer, _group_with_grads


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_non_negative(lr=lr, lambd=lambd, alpha=alpha, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @ember.no_grad()
    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            lr, lambd, alpha = float(group["lr"]), float(group["lambd"]), float(group["alpha"])
            t0, wd = float(group["t0"]), float(group["weight_decay"])
            params, grads, states = _group_with_grads(self, group, with_step=True)
            for p, g, s in zip(params, grads, states):
                if "eta" not in s:
                    # eta and mu are float32 scalars as in torch: eta starts as lr rounded to float32.
                    s["eta"] = ember.tensor(lr, dtype=ember.float32, device=p.device)
                    s["mu"] = ember.tensor(1.0, dtype=ember.float32, device=p.device)
                    s["ax"] = ember.zeros_like(p)
                s["step"].add_(1)
                g = -g if group["maximize"] else g
                if wd:
                    g = g + p * wd
                eta = s["eta"].item()
                p.mul_(1 - lambd * eta)
                p.add_(g, alpha=-eta)
                mu = s["mu"].item()
                if mu != 1:
                    s["ax"].add_((p - s["ax"]) * mu)
                else:
                    s["ax"].copy_(p)
                step = s["step"].item()
                # Through a float32 scalar, as torch.as_tensor(float) rounds them (even into a float64 eta).
                s["eta"].copy_(ember.tensor(lr / (1 + lambd * lr * step) ** alpha, dtype=ember.float32))
                s["mu"].copy_(ember.tensor(1 / max(1.0, step - t0), dtype=ember.float32))
        return loss
