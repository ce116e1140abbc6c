"""ember.utils: data loading (ember.utils.data) and environment tools."""
