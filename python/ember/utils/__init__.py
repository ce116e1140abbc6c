"""ember.utils: data loading (ember.utils.data) and environment tools."""
from ember.utils import data  # noqa: F401
