"""Adafactor (torch.optim.Adafactor, torch 2.5+): Adam-like steps with the second
moment of a matrix kept as a row and a column factor (O(rows + cols) memory),
a relative step size and update clipping; no first moment."""
import ember

from .optimizer import Optimizer, _group_with_grads


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(s, g):
        if g.dim() > 1:
            s["row_var"] = ember.zeros(*g.shape[:-1], 1, dtype=g.dtype, device=g.device)
            s["col_var"] = ember.zeros(*g.shape[:-2], 1, g.shape[-1], dtype=g.dtype, device=g.device)
        else:
            s["variance"] = ember.zeros_like(g)

    @ember.no_grad()
    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            lr, wd, d = float(group["lr"]), float(group["weight_decay"]), float(group["d"])
            beta2_decay = float(group["beta2_decay"])
            eps1, eps2 = group["eps"]
            params, grads, states = _group_with_grads(self, group, with_step=True)
            for p, g, s in zip(params, grads, states):
                if "row_var" not in s and "variance" not in s:
                    self._init_state(s, g)
                if eps1 is None:  # as torch: the first parameter's dtype decides for the group
                    eps1 = ember.finfo(p.dtype).eps
                g = -g if group["maximize"] else g
                s["step"].add_(1)
                step = s["step"].item()
                beta2_weight = step ** beta2_decay  # 1 - beta2 at this step
                rho = min(lr, 1 / step ** 0.5)
                alpha = max(float(eps2), p.norm(2).item() / p.numel() ** 0.5) * rho
                if wd:
                    p.mul_(1 - lr * wd)
                if g.dim() > 1:
                    s["row_var"].lerp_((g * g).mean(dim=-1, keepdim=True), beta2_weight)
                    s["col_var"].lerp_((g * g).mean(dim=-2, keepdim=True), beta2_weight)
                    # The rank-1 estimate of the second moment, normalised by the rows' mean.
                    var = s["row_var"] @ s["col_var"]
                    var = var / s["row_var"].mean(dim=-2, keepdim=True).clamp(min=eps1)
                else:
                    s["variance"].lerp_(g * g, beta2_weight)
                    var = s["variance"].clone()
                update = var.clamp(min=eps1 * eps1).rsqrt() * g
                denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
                p.add_(update, alpha=-alpha / denom)
        return loss
