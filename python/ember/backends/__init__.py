"""Switches of the compute backends, as torch.backends: ember.backends.cuda
(cuBLAS matmul precision) and ember.backends.cudnn."""
from ember.backends import cuda, cudnn  # noqa: F401
from ember.backends import mps, opt_einsum  # noqa: F401  (neither exists in ember: both report unavailable)
