"""L-BFGS (torch.optim.LBFGS): a quasi-Newton method that keeps the last
`history_size` steps and gradient changes to apply an approximate inverse
Hessian (the two-loop recursion), optionally with a strong-Wolfe line search.
step(closure) re-evaluates the loss as often as it needs (up to max_eval).
One parameter group; the parameters are handled as one flat vector."""
import ember

from ._checks import check_non_negative
from .optimizer import Optimizer


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """Where the cubic through (x1, f1, g1) and (x2, f2, g2) has its minimum,
    kept inside `bounds` (default: between x1 and x2); the bisection point of
    the bounds when the cubic has no real minimum."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2
    d2 = disc ** 0.5
    if x1 > x2:
        d2 = -d2
    x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step length t along d meeting the strong Wolfe conditions:
    f(t) <= f + c1 t gtd and |g(t).d| <= -c2 gtd (Nocedal & Wright, 3.5/3.6).
    evaluate(t) returns the loss and a new flat gradient at x + t d.
    Returns (loss, grad, t, evaluations); without such a step, the best seen."""
    d_max = float(d.abs().max())

    def point(step):
        value, grad = evaluate(step)
        return step, value, grad, float(grad.dot(d))

    def sufficient(p, f_ref):
        return p[1] <= f + c1 * p[0] * gtd and p[1] < f_ref

    def curvature(p):
        return abs(p[3]) <= -c2 * gtd

    prev = (0.0, f, g, gtd)
    cur = point(t)
    evals, it = 1, 0
    bracket = None
    # Bracketing: grow the step until [prev, cur] holds a good one.
    while it < max_ls:
        if not sufficient(cur, prev[1] if it > 0 else float("inf")):
            bracket = [prev, cur]
            break
        if curvature(cur):
            return cur[1], cur[2], cur[0], evals
        if cur[3] >= 0:
            bracket = [prev, cur]
            break
        # Extrapolate: the cubic's minimum, at least 1% past t and at most 10 t.
        step = _cubic_minimum(prev[0], prev[1], prev[3], cur[0], cur[1], cur[3],
                              bounds=(cur[0] + 0.01 * (cur[0] - prev[0]), cur[0] * 10))
        prev, cur = cur, point(step)
        evals += 1
        it += 1
    if bracket is None:
        bracket = [prev, cur]

    # Zoom: shrink the bracket around a step meeting both conditions.
    insufficient_progress = False
    while it < max_ls:
        a, b = bracket
        if abs(b[0] - a[0]) * d_max < tolerance_change:
            break
        step = _cubic_minimum(a[0], a[1], a[3], b[0], b[1], b[3])
        lo, hi = min(a[0], b[0]), max(a[0], b[0])
        eps = 0.1 * (hi - lo)
        if min(hi - step, step - lo) < eps:
            # Twice too close to an end (or past it): move to 10% inside the bracket.
            if insufficient_progress or step >= hi or step <= lo:
                step = hi - eps if abs(step - hi) < abs(step - lo) else lo + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        new = point(step)
        evals += 1
        it += 1
        low = 0 if a[1] <= b[1] else 1
        if not sufficient(new, bracket[low][1]):
            bracket[1 - low] = new
        else:
            if curvature(new):
                return new[1], new[2], new[0], evals
            if new[3] * (bracket[1 - low][0] - bracket[low][0]) >= 0:
                bracket[1 - low] = bracket[low]
            bracket[low] = new
    best = min(bracket, key=lambda p: p[1])
    return best[1], best[2], best[0], evals


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        check_non_negative(lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, got {line_search_fn!r}")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        return ember.cat([(p.grad if p.grad is not None else ember.zeros_like(p)).reshape(-1) for p in self._params])

    def _add_to_params(self, step, direction):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=step)
            offset += n

    def _set_params(self, values):
        for p, v in zip(self._params, values):
            p.copy_(v)

    @ember.no_grad()
    def step(self, closure):
        """closure() must clear the gradients, compute the loss, backward it and return it."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that re-evaluates the loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        def evaluate():
            with ember.enable_grad():
                return closure()

        orig_loss = evaluate()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(flat_grad.abs().max()) <= tol_grad:
            return orig_loss

        d = state.get("d")
        t = state.get("t")
        old_dirs, old_steps, ro = state.get("old_dirs", []), state.get("old_stps", []), state.get("ro", [])
        h_diag = state.get("H_diag", 1.0)
        prev_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_steps, ro, h_diag = [], [], [], 1.0
            else:
                y = flat_grad - prev_grad
                s = d * t
                ys = float(y.dot(s))
                if ys > 1e-10:  # keep the pair only while the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_steps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_steps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y))
                # Two-loop recursion: d = -H g with H from the stored pairs.
                alphas = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    alphas[i] = float(old_steps[i].dot(q)) * ro[i]
                    q = q - old_dirs[i] * alphas[i]
                r = q * h_diag
                for i in range(len(old_dirs)):
                    beta = float(old_dirs[i].dot(r)) * ro[i]
                    r = r + old_steps[i] * (alphas[i] - beta)
                d = r
            prev_grad = flat_grad.clone()
            prev_loss = loss
            # The first step is scaled by the gradient's size; later ones take lr.
            t = min(1.0, 1.0 / float(flat_grad.abs().sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(flat_grad.dot(d))
            if gtd > -tol_change:  # not a descent direction any more
                break
            if line_search is not None:
                start = [p.clone() for p in self._params]

                def along(step_length):
                    self._set_params(start)
                    self._add_to_params(step_length, d)
                    value = float(evaluate())
                    return value, self._flat_grad()

                loss, flat_grad, t, ls_evals = _strong_wolfe(along, t, d, loss, flat_grad, gtd)
                self._set_params(start)
                self._add_to_params(t, d)
                opt_cond = float(flat_grad.abs().max()) <= tol_grad
            else:
                self._add_to_params(t, d)
                ls_evals = 0
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._flat_grad()
                    opt_cond = float(flat_grad.abs().max()) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if float((d * t).abs().max()) <= tol_change or abs(loss - prev_loss) < tol_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_steps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_grad, prev_loss=prev_loss)
        return orig_loss
