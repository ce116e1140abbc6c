"""ember.backends.opt_einsum: the switches torch.backends.opt_einsum offers.

ember.einsum never asks the opt_einsum package for a contraction order (it
contracts the operands left to right), so this reports opt_einsum as not
available whether the package is installed or not: ``is_available()`` and
``enabled`` are False, ``strategy`` is None, ``get_opt_einsum()`` is None.
As in torch without the package, ``set_flags``/``flags`` raise ValueError
for ``enabled=True`` or a strategy, while assigning the attributes is
accepted and changes nothing.
"""
import contextlib

__all__ = ["is_available", "get_opt_einsum", "set_flags", "flags", "enabled", "strategy"]


def is_available():
    """False: ember's einsum does not use opt_einsum."""
    return False


def get_opt_einsum():
    """None: ember's einsum does not use the opt_einsum package."""
    return None


def _check_enabled(value):
    if value:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap the benefits of "
            "calculating an optimal path for einsum: ember.einsum contracts from left to right")
    return False


def _check_strategy(value):
    raise ValueError(
        f"opt_einsum is not available, so setting `strategy` to {value} will not be meaningful: "
        "ember.einsum contracts from left to right")


def set_flags(_enabled=None, _strategy=None):
    """Sets the flags (None: unchanged) and returns the previous (enabled, strategy)."""
    before = (False, None)
    if _enabled is not None:
        _check_enabled(_enabled)
    if _strategy is not None:
        _check_strategy(_strategy)
    return before


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """Sets the flags inside the block (only enabled=False is possible in ember)."""
    set_flags(enabled, strategy)
    yield


# Plain attributes, as torch's when opt_einsum is missing: assigning them is accepted and has
# no effect on ember.einsum.
enabled = False
strategy = None
