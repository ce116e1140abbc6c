"""ember.backends.mps: Apple's Metal backend, which ember does not have.

Both answers are always False, so the usual device pick
``"cuda" if ember.cuda.is_available() else "mps" if ember.backends.mps.is_available() else "cpu"``
falls through to the CPU on machines without a GPU.
"""

__all__ = ["is_available", "is_built", "is_macos_or_newer", "is_macos13_or_newer"]


def is_available():
    """False: ember has no MPS backend."""
    return False


def is_built():
    """False: ember is never built with MPS."""
    return False


def is_macos_or_newer(major, minor):
    """False: no MPS, whatever the operating system."""
    return False


def is_macos13_or_newer(minor=0):
    """False: no MPS, whatever the operating system."""
    return False
