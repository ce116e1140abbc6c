"""ember.utils: data loading (ember.utils.data), activation checkpointing
(ember.utils.checkpoint) and environment tools."""
from ember.utils import checkpoint, data  # noqa: F401
