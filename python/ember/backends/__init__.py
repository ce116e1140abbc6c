"""Switches of the compute backends, as torch.backends: ember.backends.cuda
(cuBLAS matmul precision) and ember.backends.cudnn."""
from ember.backends import cuda, cudnn  # noqa: F401
