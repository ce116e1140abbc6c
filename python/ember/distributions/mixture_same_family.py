"""MixtureSameFamily(mixture_distribution, component_distribution): the
rightmost batch dim of the components indexes the mixture's categories."""
import ember

from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mb, cb = tuple(mixture_distribution.batch_shape), tuple(component_distribution.batch_shape)
        if len(cb) < 1 or len(mb) != len(cb) - 1 or any(m != c and m != 1 and c != 1 for m, c in zip(mb, cb[:-1])):
            raise ValueError(f"`mixture_distribution.batch_shape` ({mb}) is not compatible with "
                             f"`component_distribution.batch_shape`({cb})")
        k = mixture_distribution.logits.shape[-1]
        if k != cb[-1]:
            raise ValueError(f"`mixture_distribution component` ({k}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({cb[-1]})")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cb[:-1], component_distribution.event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = MixtureSameFamily(self._mixture_distribution.expand(batch_shape),
                                self._component_distribution.expand(batch_shape + (self._num_component,)),
                                validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def support(self):
        return self._component_distribution.support

    def _pad(self, t):
        """t [..., K] shaped to broadcast against component tensors [..., K, *event]."""
        return t.reshape(*t.shape, *([1] * self._event_ndims))

    @property
    def mean(self):
        probs = self._pad(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad(self._mixture_distribution.probs)
        dim = -1 - self._event_ndims
        comp = self._component_distribution
        within = (probs * comp.variance).sum(dim)
        between = (probs * (comp.mean - self._pad_mean(self.mean)).pow(2)).sum(dim)
        return within + between

    def _pad_mean(self, m):
        return m.unsqueeze(-1 - self._event_ndims)

    def cdf(self, x):
        x = self._pad_mean(x)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        self._validate_sample(x)
        x = self._pad_mean(x)
        log_prob_x = self._component_distribution.log_prob(x)  # [S, B, K]
        log_mix = ember.log_softmax(self._mixture_distribution.logits, -1)
        return (log_prob_x + log_mix).logsumexp(-1)

    def sample(self, sample_shape=()):
        with ember.no_grad():
            sample_shape = tuple(sample_shape)
            which = self._mixture_distribution.sample(sample_shape)  # [S, B]
            comp = self._component_distribution.sample(sample_shape)  # [S, B, K, *E]
            index = which.reshape(*which.shape, 1, *([1] * self._event_ndims))
            index = index.expand(*which.shape, 1, *self.event_shape)
            return comp.gather(len(sample_shape) + len(self.batch_shape), index).squeeze(
                len(sample_shape) + len(self.batch_shape))

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})")
