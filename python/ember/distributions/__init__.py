"""ember.distributions: probability distributions for sampling and scoring,
as torch.distributions: Normal, Bernoulli, Categorical, OneHotCategorical,
Uniform, Exponential, Laplace, Independent, TransformedDistribution, LogNormal,
HalfNormal, Gamma, Chi2, Beta, Dirichlet, StudentT, Cauchy, Gumbel, Poisson,
Binomial, Geometric, Multinomial, NegativeBinomial, MultivariateNormal,
LowRankMultivariateNormal, MixtureSameFamily, RelaxedBernoulli,
RelaxedOneHotCategorical, HalfCauchy, Pareto, Weibull, InverseGamma,
Kumaraswamy, LogisticNormal, FisherSnedecor, VonMises, ContinuousBernoulli,
OneHotCategoricalStraightThrough, LKJCholesky, Wishart,
GeneralizedPareto; constraints, transforms,
biject_to / transform_to, and kl_divergence between them. Parameters broadcast
into batch_shape; rsample() is reparameterized (differentiable) where the
distribution allows it."""
from .distribution import Distribution  # noqa: F401
from .exp_family import ExponentialFamily  # noqa: F401
from .normal import Normal  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough  # noqa: F401
from .simple import Exponential, Laplace, Uniform  # noqa: F401
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from . import constraints, transforms, utils  # noqa: F401
from .transforms import *  # noqa: F401,F403
from .constraint_registry import biject_to, transform_to  # noqa: F401
from .transformed_distribution import TransformedDistribution  # noqa: F401
from .gamma import Chi2, Gamma  # noqa: F401
from .dirichlet import Beta, Dirichlet  # noqa: F401
from .continuous import (Cauchy, FisherSnedecor, GeneralizedPareto, Gumbel, HalfNormal, LogNormal,  # noqa: F401
                         StudentT)
from .discrete import Binomial, Geometric, Multinomial, NegativeBinomial, Poisson  # noqa: F401
from .transformed_families import (HalfCauchy, InverseGamma, Kumaraswamy, LogisticNormal, Pareto,  # noqa: F401
                                   Weibull)
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .circular_and_unit import ContinuousBernoulli, VonMises  # noqa: F401
from .lkj_cholesky import LKJCholesky  # noqa: F401
from .wishart import Wishart  # noqa: F401
from .lowrank_multivariate_normal import LowRankMultivariateNormal  # noqa: F401
from .mixture_same_family import MixtureSameFamily  # noqa: F401
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli, RelaxedBernoulli,  # noqa: F401
                      RelaxedOneHotCategorical)
from . import kl_extra, kl_cross, kl_cross_more  # noqa: F401,E402  (they register the KL pairs of the distributions above)
