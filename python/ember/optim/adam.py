"""Adam and AdamW (torch.optim.Adam / AdamW): L2 or decoupled weight decay,
amsgrad, maximize, bias correction with each parameter's own step count.

As in torch, each param group says which decay it takes ("decoupled_weight_decay"):
Adam(decoupled_weight_decay=True) steps exactly as AdamW, and AdamW's groups are
always decoupled, whatever a loaded state_dict says."""
import ember

from ._checks import check_betas, check_non_negative
from .optimizer import Optimizer, _group_with_grads, _share_new_state


def _check_adam_args(lr, betas, eps, weight_decay):
    check_non_negative(lr=lr, eps=eps)
    check_betas(betas)
    check_non_negative(weight_decay=weight_decay)


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        # Keys a checkpoint from an older torch may lack, with torch's fallbacks (not this optimizer's
        # defaults: a state_dict without "decoupled_weight_decay" means the L2 decay of Adam).
        for group in self.param_groups:
            for key, value in (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                               ("differentiable", False), ("decoupled_weight_decay", False), ("fused", None)):
                group.setdefault(key, value)

    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group, with_step=True)
            if not params:
                continue
            amsgrad = bool(group["amsgrad"])
            beta1, beta2 = group["betas"]
            _share_new_state(params, states, ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ()))
            m1, m2, mx = ember._C._optim_adam(
                params, grads, [s.get("exp_avg") for s in states], [s.get("exp_avg_sq") for s in states],
                [s.get("max_exp_avg_sq") for s in states], [s["step"] for s in states],
                float(group["lr"]), float(beta1), float(beta2), float(group["weight_decay"]),
                float(group["eps"]), amsgrad, bool(group["maximize"]), bool(group["decoupled_weight_decay"]))
            for i, s in enumerate(states):
                s["exp_avg"] = m1[i]
                s["exp_avg_sq"] = m2[i]
                if amsgrad:
                    s["max_exp_avg_sq"] = mx[i]
        return loss


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
