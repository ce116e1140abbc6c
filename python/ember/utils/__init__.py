"""ember.utils: data loading (ember.utils.data), activation checkpointing
(ember.utils.checkpoint) and environment tools."""
from ember.utils import checkpoint, data  # noqa: F401
from ember.utils import _pytree, benchmark, hooks  # noqa: F401,E402  (torch.utils' pytree, Timer, RemovableHandle)
