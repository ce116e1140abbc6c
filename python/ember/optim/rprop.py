"""Rprop (torch.optim.Rprop): resilient backpropagation. Each element keeps its
own step size, grown while the gradient keeps its sign and shrunk when it
flips; only the gradient's sign moves the parameter."""
import ember

from ._checks import check_non_negative
from .optimizer import Optimizer, _group_with_grads


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_non_negative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @ember.no_grad()
    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            eta_minus, eta_plus = (float(e) for e in group["etas"])
            size_min, size_max = (float(s) for s in group["step_sizes"])
            params, grads, states = _group_with_grads(self, group, with_step=True)
            for p, g, s in zip(params, grads, states):
                if "prev" not in s:
                    s["prev"] = ember.zeros_like(p)
                    s["step_size"] = ember.full_like(g, float(group["lr"]))
                s["step"].add_(1)
                g = -g if group["maximize"] else g
                agreement = (g * s["prev"]).sign()
                ones = ember.ones_like(g)  # the factors in the parameter's dtype, as torch's sign tensor
                factor = ember.where(agreement > 0, ones * eta_plus, ember.where(agreement < 0, ones * eta_minus, ones))
                s["step_size"].mul_(factor).clamp_(size_min, size_max)
                # After a sign flip the element rests for a step (its gradient counts as 0).
                g = ember.where(factor == eta_minus, ember.zeros_like(g), g)
                p.addcmul_(g.sign(), s["step_size"], value=-1)
                s["prev"].copy_(g)
        return loss
