"""ember.testing: assert_close and make_tensor, as torch.testing."""
from ember.testing._comparison import assert_allclose, assert_close  # noqa: F401
from ember.testing._creation import make_tensor  # noqa: F401

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
