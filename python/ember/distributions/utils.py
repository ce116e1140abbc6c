"""ember.distributions.utils (as torch.distributions.utils): helpers scripts
import: broadcast_all, probs/logits conversions, clamp_probs, lazy_property,
vec_to_tril_matrix / tril_matrix_to_vec."""
import ember
import ember.nn.functional as F

from ._matrix_transforms import tril_matrix_to_vec, vec_to_tril_matrix  # noqa: F401
from .distribution import broadcast_all  # noqa: F401

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def clamp_probs(probs):
    """probs kept inside [eps, 1 - eps] (finite logits)."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """sigmoid (binary) or softmax over the last dim."""
    return ember.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """log-odds (binary) or log-probabilities, from clamped probabilities."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


class lazy_property:
    """A property computed on first access and then stored on the instance (as torch's)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
