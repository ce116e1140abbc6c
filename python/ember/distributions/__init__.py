"""ember.distributions: probability distributions for sampling and scoring,
as torch.distributions (the common ones): Normal, Bernoulli, Categorical,
OneHotCategorical, Uniform, Exponential, Laplace, Independent, and
kl_divergence between them. Parameters broadcast into batch_shape; rsample()
is reparameterized (differentiable) where the distribution allows it."""
from .distribution import Distribution  # noqa: F401
from .normal import Normal  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical, OneHotCategorical  # noqa: F401
from .simple import Exponential, Laplace, Uniform  # noqa: F401
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
