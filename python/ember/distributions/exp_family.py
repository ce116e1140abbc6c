"""ExponentialFamily (as torch's): densities p(x) = h(x) exp(<t(x), theta> - F(theta)).
A subclass gives its natural parameters theta (_natural_params), the log
normalizer F (_log_normalizer, written with ember ops) and E[log h(x)]
(_mean_carrier_measure); entropy then follows from the Bregman identity
H = F(theta) - <theta, grad F(theta)> - E[log h(x)], the gradient taken by
ember's autograd."""
import ember

from .distribution import Distribution


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self):
        raise NotImplementedError(f"{type(self).__name__}._natural_params is not implemented")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__}._log_normalizer is not implemented")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"{type(self).__name__}._mean_carrier_measure is not implemented")

    def entropy(self):
        params, tracked = differentiable_params(self._natural_params)
        with ember.enable_grad():
            log_norm = self._log_normalizer(*params)
            grads = ember.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = -self._mean_carrier_measure + log_norm
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(*self.batch_shape, -1).sum(-1)
        return result if tracked else result.detach()


def differentiable_params(params):
    """(stand-ins autograd can differentiate with respect to, whether any parameter carries a graph): a
    tracked parameter keeps its graph (so the result stays differentiable in it), others become leaves."""
    tracked = any(p.requires_grad for p in params)
    return [p.view_as(p) if p.requires_grad else p.detach().requires_grad_() for p in params], tracked
