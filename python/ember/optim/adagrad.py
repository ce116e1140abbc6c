"""Adagrad (torch.optim.Adagrad): learning-rate decay, weight decay and an
initial accumulator value. As in torch, state is created in the constructor."""
import ember

from ._checks import check_non_negative
from .optimizer import Optimizer, _group_with_grads, _new_step


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_non_negative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        state = self.state[p]
        if "sum" not in state:
            state["step"] = _new_step()
            state["sum"] = ember.full_like(p, float(group["initial_accumulator_value"]))

    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group)
            if not params:
                continue
            for p in params:
                self._init_state(p, group)
            sums = ember._C._optim_adagrad(
                params, grads, [s["sum"] for s in states], [s["step"] for s in states],
                float(group["lr"]), float(group["lr_decay"]), float(group["weight_decay"]),
                float(group["initial_accumulator_value"]), float(group["eps"]), bool(group["maximize"]))
            for s, total in zip(states, sums):
                s["sum"] = total
        return loss
