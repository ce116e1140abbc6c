"""The base of the optimizers written with ember's tensor ops (Adadelta,
Adamax, NAdam, RAdam): step() walks the parameters that have a gradient, one
at a time, and hands each to the subclass's _update."""
import ember

from .optimizer import Optimizer, _group_with_grads


class TensorOpOptimizer(Optimizer):
    # State buffers created as zeros like the parameter on its first step.
    state_buffers = ()

    def _init_state(self, state, param):
        """Extra state beyond state_buffers (override)."""

    def _update(self, param, grad, state, group, step):
        raise NotImplementedError

    @ember.no_grad()
    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group, with_step=True)
            for p, g, s in zip(params, grads, states):
                if self.state_buffers[0] not in s:
                    for name in self.state_buffers:
                        s[name] = ember.zeros_like(p)
                    self._init_state(s, p)
                s["step"].add_(1)
                g = -g if group["maximize"] else g
                wd = float(group["weight_decay"])
                if wd:
                    if group.get("decoupled_weight_decay", False):
                        p.mul_(1 - float(group["lr"]) * wd)
                    else:
                        g = g + p * wd
                self._update(p, g, s, group, float(s["step"]))
        return loss
