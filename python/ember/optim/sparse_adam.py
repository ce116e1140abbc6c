"""SparseAdam (torch.optim.SparseAdam): lazy Adam, for embeddings built with sparse=True.

ember has no sparse tensors, so Embedding(sparse=True) gives a dense gradient; SparseAdam takes it
and, as torch does with the sparse one, updates the moments and the parameter only in the rows
(slices along dim 0) the gradient touches, leaving the others and their moments as they were. A row
counts as touched when its gradient is not all zeros (torch also counts a looked-up row whose
gradient summed to exactly zero)."""
import math

import ember

from ._checks import check_betas, check_non_negative
from .optimizer import Optimizer, _group_with_grads


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_non_negative(lr=lr, eps=eps)
        check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    @ember.no_grad()
    def step(self, closure=None):
        loss = self._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _group_with_grads(self, group, with_step=True)
            beta1, beta2 = (float(b) for b in group["betas"])
            lr, eps = float(group["lr"]), float(group["eps"])
            for p, g, s in zip(params, grads, states):
                if "exp_avg" not in s:
                    s["exp_avg"] = ember.zeros_like(p)
                    s["exp_avg_sq"] = ember.zeros_like(p)
                s["step"].add_(1)
                if p.dim() == 0:  # one row: the whole value
                    p, g = p.view(1), g.reshape(1)
                    s_m, s_v = s["exp_avg"].view(1), s["exp_avg_sq"].view(1)
                else:
                    s_m, s_v = s["exp_avg"], s["exp_avg_sq"]
                g = -g if group["maximize"] else g
                rows = g.reshape(g.shape[0], -1).ne(0).any(dim=1).nonzero().reshape(-1)
                if rows.numel() == 0:
                    continue
                g_rows = g.index_select(0, rows)
                m = s_m.index_select(0, rows).mul_(beta1).add_(g_rows, alpha=1 - beta1)
                v = s_v.index_select(0, rows).mul_(beta2).add_(g_rows * g_rows, alpha=1 - beta2)
                s_m.index_copy_(0, rows, m)
                s_v.index_copy_(0, rows, v)
                step = float(s["step"])
                step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                p.index_copy_(0, rows, p.index_select(0, rows) - step_size * m / (v.sqrt() + eps))
        return loss
